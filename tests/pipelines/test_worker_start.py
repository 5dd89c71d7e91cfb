"""The embedded LocalCluster's settings: Dask's statistical profiler off and its periodic
callbacks slowed (an idle 2-worker cluster spent 0.11 CPU-s per second on them, 0.044 with these;
benchmarks/recipe), each one overridable by the user's ``DASK_…`` environment variable."""

from __future__ import annotations

import subprocess
import sys

from pipelines.cluster import LOCAL_CLUSTER_CONFIG, open_client


def _settings() -> dict:
    import dask

    return {key: dask.config.get(key) for key in LOCAL_CLUSTER_CONFIG}


def _tick_ms(dask_scheduler) -> float:
    return dask_scheduler.periodic_callbacks["tick"].callback_time


def test_local_cluster_settings_reach_workers_and_scheduler_and_the_user_can_override_them(monkeypatch):
    with open_client(workers=1) as client:
        assert list(client.run(_settings).values()) == [LOCAL_CLUSTER_CONFIG]
        assert client.run_on_scheduler(_tick_ms) == 200  # Dask's default: 20 ms
    import dask

    monkeypatch.setenv("DASK_DISTRIBUTED__WORKER__PROFILE__ENABLED", "True")
    monkeypatch.setenv("DASK_DISTRIBUTED__ADMIN__TICK__INTERVAL", "50ms")
    dask.config.refresh()  # what a process started with these variables reads
    try:
        with open_client(workers=1) as client:
            (seen,) = client.run(_settings).values()
            assert seen["distributed.worker.profile.enabled"] is True
            assert seen["distributed.admin.tick.interval"] == "50ms"
            assert seen["distributed.admin.system-monitor.interval"] == "2s"  # the others stay ours
            assert client.run_on_scheduler(_tick_ms) == 50
    finally:
        monkeypatch.delenv("DASK_DISTRIBUTED__WORKER__PROFILE__ENABLED")
        monkeypatch.delenv("DASK_DISTRIBUTED__ADMIN__TICK__INTERVAL")
        dask.config.refresh()


def _mark_at_exit(path: str, dask_worker=None) -> tuple[int, str]:
    """An atexit handler of the worker process (registered before the run ends), and where the
    worker keeps its scratch files."""
    import atexit
    import os

    atexit.register(lambda: open(path, "w").close())
    return os.getpid(), dask_worker.local_directory


def _gone(pids: list[int], timeout: float = 10.0) -> bool:
    import time

    import psutil

    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if not any(psutil.pid_exists(p) for p in pids):
            return True
        time.sleep(0.05)
    return False


def test_workers_of_a_finished_run_close_then_skip_the_interpreter_teardown(tmp_path):
    """After a run, each embedded worker closes as usual (its scratch folder is removed) and its
    process then ends with ``os._exit``: the handlers registered before (here one that writes a
    file) and the teardown of every loaded module are skipped, which held ``cluster.close()``
    ~0.5 s. After an error the workers end the usual way."""
    import os

    import pytest

    marks = [tmp_path / f"ok-{i}" for i in range(2)]
    with open_client(workers=2) as client:
        workers = list(client.scheduler_info()["workers"])
        seen = [client.run(_mark_at_exit, str(m), workers=[w])[w] for m, w in zip(marks, workers, strict=True)]
    assert _gone([pid for pid, _ in seen])
    assert not any(os.path.exists(folder) for _, folder in seen)  # the worker's own close ran
    assert not any(m.exists() for m in marks)  # the later teardown did not

    failed = tmp_path / "failed"
    with pytest.raises(RuntimeError, match="stage failed"), open_client(workers=1) as client:
        ((pid, _),) = client.run(_mark_at_exit, str(failed)).values()
        raise RuntimeError("stage failed")
    assert _gone([pid]) and failed.exists()


def test_the_cli_module_leaves_the_heavy_libraries_to_the_code_that_uses_them():
    """A spawned worker imports the driver's ``__main__`` before it joins: `curate`'s module must
    not make every worker import pandas, pyarrow and distributed on the way (they came up in 1.7 s
    instead of 0.8 s; benchmarks/recipe)."""
    code = "import sys, pipelines.cli; print(sorted(m for m in ('pandas', 'pyarrow', 'distributed', 'dask.dataframe') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
