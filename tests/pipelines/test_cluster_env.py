"""A --scheduler cluster whose worker runs another curate, or none, is refused with one line (exit 9)
naming the worker, before anything runs: such a worker ran the first stages on old code without a
word and left the run waiting, and one that could not import curate failed as "a bug in curate"
(exit 70) with a page of traceback. Real `dask scheduler` and `dask worker` processes on 127.0.0.1."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.pipelines.test_cluster import REPO, _curate, _stop

FAKES = {
    # a checkout of another version: its sources differ
    "old": "def code_identity():\n    return {'digest': '0123456789abcdef', 'where': '/opt/old-curate'}\n",
    # a worker environment without curate
    "none": None,
}


def _cluster_with(tmp_path: Path, fake: str, late: bool = False) -> tuple[str, list[subprocess.Popen]]:
    """A scheduler, one worker of this checkout and one whose `pipelines` is the fake (not yet, with ``late``)."""
    sched_file = tmp_path / "scheduler.json"
    env = {**os.environ, "DASK_DISTRIBUTED__WORKER__DAEMON": "False"}
    procs = [subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1", "--port", "0",
                               "--dashboard-address", ":0", "--scheduler-file", str(sched_file)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True, env=env, cwd=REPO)]
    deadline = time.time() + 60
    while not sched_file.exists() and time.time() < deadline:
        time.sleep(0.2)
    address = json.loads(sched_file.read_text())["address"]
    procs.append(_worker(address, tmp_path, "good"))
    if not late:
        procs.append(_worker(address, tmp_path, "stale", fake))
    from distributed import Client

    with Client(address, timeout=60) as c:
        c.wait_for_workers(1 if late else 2, timeout=120)
    return address, procs


def _worker(address: str, tmp_path: Path, name: str, fake: str | None = None) -> subprocess.Popen:
    """A `dask worker` of this checkout, or one whose `pipelines` is the fake."""
    extra, cwd = {}, REPO
    if fake is not None:
        pkg = tmp_path / "fake" / "pipelines"
        pkg.mkdir(parents=True)
        if FAKES[fake] is None:
            (pkg / "__init__.py").write_text("raise ModuleNotFoundError(\"No module named 'pipelines'\")\n")
        else:
            (pkg / "__init__.py").write_text("")
            (pkg / "cluster_env.py").write_text(FAKES[fake])
        extra, cwd = {"PYTHONPATH": str(tmp_path / "fake")}, tmp_path
    return subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_worker", address, "--nthreads", "1", "--name", name,
                             "--local-directory", str(tmp_path / name)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True, env={**os.environ, "DASK_DISTRIBUTED__WORKER__DAEMON": "False", **extra}, cwd=cwd)


@pytest.mark.parametrize(("fake", "said"), [("old", "runs another curate (/opt/old-curate, source 0123456789abcdef; this command: "),
                                             ("none", "cannot import curate (ModuleNotFoundError: No module named 'pipelines')")])
def test_a_worker_of_another_or_no_curate_is_refused_naming_it(tmp_path, fake, said):
    address, procs = _cluster_with(tmp_path, fake)
    try:
        res = _curate(["ingest", "--input", "sample_data/web", "--output", str(tmp_path / "out"), "--scheduler", address, "--quiet"])
    finally:
        _stop(procs)
    assert res.returncode == 9, res.stderr[-2000:]
    (line,) = [ln for ln in res.stderr.splitlines() if "ERROR" in ln]
    assert f"--scheduler {address}: " in line and said in line and "install this curate" in line
    assert "Traceback" not in res.stderr and not (tmp_path / "out").exists()


def test_a_worker_of_another_curate_that_joins_mid_run_stops_it(tmp_path):
    """Checked only when the run connected, a worker of another checkout that joined later ran 121 of
    the run's tasks without a word (autoscaling, a restarted SLURM job)."""
    address, procs = _cluster_with(tmp_path, "old", late=True)
    out = tmp_path / "run"
    try:
        run = subprocess.Popen([sys.executable, "-m", "pipelines.cli", "run", "pipelines/configs/glm45.yaml", "--input", "sample_data",
                                "--output", str(out), "--scheduler", address, "--quiet"], cwd=REPO, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
        deadline = time.time() + 120
        while not (out / ".00_ingest.inprogress").exists() and not (out / "00_ingest").exists() and time.time() < deadline:
            time.sleep(0.1)
        procs.append(_worker(address, tmp_path, "stale", "old"))
        _, err = run.communicate(timeout=600)
    finally:
        _stop(procs)
    assert run.returncode == 9, err[-2000:]
    (line,) = [ln for ln in err.splitlines() if "ERROR" in ln]
    assert "a worker joined the cluster mid-run: " in line and "runs another curate (/opt/old-curate" in line
    assert "Traceback" not in err and not (out / "run.json").exists()
