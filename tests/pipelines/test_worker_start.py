"""The embedded LocalCluster's settings: Dask's statistical profiler off and its periodic
callbacks slowed (an idle 2-worker cluster spent 0.11 CPU-s per second on them, 0.044 with these;
benchmarks/recipe), each one overridable by the user's ``DASK_…`` environment variable."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from pipelines.cluster import LOCAL_CLUSTER_CONFIG, open_client
from pipelines.stages import STAGES
from pipelines.worker_start import local_cluster_ahead, start_server


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


@pytest.fixture
def spawned(monkeypatch):
    """The user's choice of Dask's default start method, as a new process would read it."""
    import dask

    monkeypatch.setenv("DASK_DISTRIBUTED__WORKER__MULTIPROCESSING_METHOD", "spawn")
    dask.config.refresh()
    yield
    monkeypatch.delenv("DASK_DISTRIBUTED__WORKER__MULTIPROCESSING_METHOD")
    dask.config.refresh()


def test_workers_of_a_finished_run_close_then_skip_the_interpreter_teardown(tmp_path):
    """After a run, each embedded worker closes as usual (its scratch folder is removed) and its
    process then ends with ``os._exit``: the handlers registered before (here one that writes a
    file) and the teardown of every loaded module are skipped, which held ``cluster.close()``
    ~0.5 s. A worker forked from the forkserver ends so after an error too."""
    marks = [tmp_path / f"ok-{i}" for i in range(2)]
    with open_client(workers=2) as client:
        workers = list(client.scheduler_info()["workers"])
        seen = [client.run(_mark_at_exit, str(m), workers=[w])[w] for m, w in zip(marks, workers, strict=True)]
    assert _gone([pid for pid, _ in seen])
    assert not any(os.path.exists(folder) for _, folder in seen)  # the worker's own close ran
    assert not any(m.exists() for m in marks)  # the later teardown did not

    failed = tmp_path / "failed"
    with pytest.raises(RuntimeError, match="stage failed"), open_client(workers=1) as client:
        ((pid, folder),) = client.run(_mark_at_exit, str(failed)).values()
        raise RuntimeError("stage failed")
    assert _gone([pid]) and not os.path.exists(folder) and not failed.exists()


def test_spawned_workers_skip_the_teardown_after_a_run_and_not_after_an_error(tmp_path, spawned):
    with open_client(workers=1) as client:
        ((pid, _),) = client.run(_mark_at_exit, str(tmp_path / "ok")).values()
    assert _gone([pid]) and not (tmp_path / "ok").exists()
    with pytest.raises(RuntimeError, match="stage failed"), open_client(workers=1) as client:
        ((pid, _),) = client.run(_mark_at_exit, str(tmp_path / "failed")).values()
        raise RuntimeError("stage failed")
    assert _gone([pid]) and (tmp_path / "failed").exists()


def _start_info() -> dict:
    import signal
    import sys

    import psutil

    parent = psutil.Process(os.getppid())
    return {
        "parent": parent.pid,
        "parent_is_forkserver": "forkserver" in " ".join(parent.cmdline()),
        "env": {k: os.environ.get(k) for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "RAYON_NUM_THREADS", "PYTHONHASHSEED", "CURATION_TEST_LATE")},
        "sigint_ignored": signal.getsignal(signal.SIGINT) == signal.SIG_IGN,
        "stages_loaded": all(module in sys.modules for _, module in STAGES.values()),
    }


def test_workers_fork_from_a_server_that_has_loaded_the_stages_with_a_workers_environment(monkeypatch):
    """The server imported the stage modules once (a spawned worker imports them itself), with one
    OpenMP, BLAS and Rayon thread and the nanny's hash seed; it ignores Ctrl-C and so do its
    forks; a variable the driver sets after the server started still reaches the workers."""
    assert start_server()  # as `curate` does first thing
    monkeypatch.setenv("CURATION_TEST_LATE", "set after the server started")
    with open_client(workers=2) as client:
        infos = list(client.run(_start_info).values())
    assert len(infos) == 2
    for info in infos:
        assert info["parent_is_forkserver"] and info["parent"] != os.getpid()
        assert info["env"] == {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "RAYON_NUM_THREADS": "1",
                               "PYTHONHASHSEED": "6640", "CURATION_TEST_LATE": "set after the server started"}
        assert info["sigint_ignored"] and info["stages_loaded"]


def test_the_user_can_keep_spawned_workers(spawned):
    with open_client(workers=1) as client:
        (info,) = client.run(_start_info).values()
    assert info["parent"] == os.getpid() and not info["parent_is_forkserver"]
    assert info["env"]["RAYON_NUM_THREADS"] == "1" and info["sigint_ignored"]


@pytest.mark.parametrize(("argv", "ahead"), [
    (["run", "r.yaml", "--input", "in", "--output", "out", "--workers", "2"], True),
    (["minhash-dedup", "--input", "in", "--output", "out", "threshold=0.7"], True),
    (["run", "r.yaml", "--input", "in", "--output", "out", "--scheduler", "synchronous"], False),
    (["run", "r.yaml", "--input", "in", "--output", "out", "--scheduler=tcp://h:8786"], False),
    (["run", "r.yaml", "--input", "in", "--output", "out", "--sched", "synchronous"], False),
    (["run", "r.yaml", "--dry-run"], False),
    (["run", "--help"], False),
    (["stats", "out"], False),
    ([], False),
])
def test_the_cli_guesses_from_its_words_whether_a_local_cluster_will_start(argv, ahead):
    assert local_cluster_ahead(argv, {"run", "minhash-dedup"}) is ahead


def test_importing_the_cli_leaves_the_heavy_libraries_for_after_the_server_starts():
    """`curate` starts the forkserver before it imports pandas, pyarrow or distributed, so that the
    server's imports run beside the driver's."""
    code = "import sys, pipelines.cli; print(sorted(m for m in ('pandas', 'pyarrow', 'distributed', 'dask.dataframe') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
