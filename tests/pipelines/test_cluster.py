"""A real cluster: `dask scheduler` and two `dask worker` processes on 127.0.0.1.

The whole recipe run against them must equal the embedded LocalCluster run and a 1-worker run
(same kept ids, ledgers, stats and, where the mixture runs, manifests and shard checksums); a
worker killed mid-stage must not change the outputs.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.helpers import read_parts

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]


def _start_cluster(tmp_path: Path, n_workers: int = 2) -> tuple[str, list[subprocess.Popen]]:
    sched_file = tmp_path / "scheduler.json"
    env = {**os.environ, "DASK_DISTRIBUTED__WORKER__DAEMON": "False"}
    procs = [subprocess.Popen(
        [sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1", "--port", "0",
         "--dashboard-address", ":0", "--scheduler-file", str(sched_file)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True, env=env,
    )]
    deadline = time.time() + 60
    while not sched_file.exists() and time.time() < deadline:
        time.sleep(0.2)
    address = json.loads(sched_file.read_text())["address"]
    for i in range(n_workers):
        procs.append(subprocess.Popen(
            [sys.executable, "-m", "distributed.cli.dask_worker", address, "--nthreads", "1", "--nworkers", "1",
             "--memory-limit", "3GB", "--name", f"w{i}", "--local-directory", str(tmp_path / f"w{i}")],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True, env=env, cwd=REPO,
        ))
    from distributed import Client

    with Client(address, timeout=60) as c:
        c.wait_for_workers(n_workers, timeout=120)
    return address, procs


def _stop(procs: list[subprocess.Popen]) -> None:
    for p in reversed(procs):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(p.pid, signal.SIGTERM)
    for p in procs:
        try:
            p.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)


def _curate(args: list[str]) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pipelines.cli", *args], cwd=REPO, capture_output=True, text=True, timeout=1200)


_SLICE: dict[str, Path] = {}


def cluster_inputs() -> list[str]:
    """A slice of sample_data (every file, every kind of record) that runs in about a minute.

    Every 4th record of each sample file, written once per session next to the test files.
    """
    import gzip
    import tempfile

    if "dir" not in _SLICE:
        root = Path(tempfile.mkdtemp(prefix="curation-slice-"))
        for f in sorted((REPO / "sample_data").rglob("*.jsonl*")):
            data = gzip.decompress(f.read_bytes()) if f.name.endswith(".gz") else f.read_bytes()
            lines = [ln for i, ln in enumerate(data.splitlines()) if i % 4 == 0]
            target = root / f.relative_to(REPO / "sample_data").with_suffix("").with_suffix(".jsonl")
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(b"\n".join(lines) + b"\n")
        _SLICE["dir"] = root
    return [str(_SLICE["dir"])]


def compare_runs(a: Path, b: Path) -> None:
    """Same stage folders, same kept ids and ledgers, same stats counts, same manifests/shards."""
    names_a = sorted(p.name for p in a.iterdir() if p.is_dir() and p.name[:2].isdigit())
    names_b = sorted(p.name for p in b.iterdir() if p.is_dir() and p.name[:2].isdigit())
    assert names_a == names_b
    for name in names_a:
        for kind in ("docs", "ledger"):
            da = read_parts(a / name / kind)
            db = read_parts(b / name / kind)
            assert da.equals(db), f"{name}/{kind} differ"
        sa = json.loads((a / name / "stats.json").read_text())
        sb = json.loads((b / name / "stats.json").read_text())
        for key in ("in", "kept", "dropped", "dropped_by_reason", "by_source"):
            assert sa[key] == sb[key], f"{name} stats.{key} differ"
    for manifest in sorted(a.glob("*/manifests/*.json")):
        other = b / manifest.relative_to(a)
        ma, mb = json.loads(manifest.read_text()), json.loads(other.read_text())
        for m in (ma, mb):
            m.pop("created_at", None)
            m.pop("seconds", None)
        assert ma == mb, f"{manifest.name} differs"


def test_scheduler_and_two_workers_match_local_cluster_and_one_worker(tmp_path):
    recipe = str(REPO / "pipelines" / "configs" / "glm45.yaml")
    address, procs = _start_cluster(tmp_path)
    try:
        r = _curate(["run", recipe, "--input", *cluster_inputs(), "--output", str(tmp_path / "remote"), "--scheduler", address, "--quiet"])
        assert r.returncode == 0, r.stderr[-3000:]
    finally:
        _stop(procs)
    r = _curate(["run", recipe, "--input", *cluster_inputs(), "--output", str(tmp_path / "local"), "--workers", "2", "--quiet"])
    assert r.returncode == 0, r.stderr[-3000:]
    r = _curate(["run", recipe, "--input", *cluster_inputs(), "--output", str(tmp_path / "one"), "--workers", "1", "--quiet"])
    assert r.returncode == 0, r.stderr[-3000:]
    compare_runs(tmp_path / "local", tmp_path / "remote")
    compare_runs(tmp_path / "local", tmp_path / "one")


def test_worker_killed_mid_stage_does_not_change_outputs(tmp_path):
    recipe = str(REPO / "pipelines" / "configs" / "glm45.yaml")
    r = _curate(["run", recipe, "--input", *cluster_inputs(), "--output", str(tmp_path / "ref"), "--workers", "2", "--quiet"])
    assert r.returncode == 0, r.stderr[-3000:]
    address, procs = _start_cluster(tmp_path)
    try:
        run = subprocess.Popen(
            [sys.executable, "-m", "pipelines.cli", "run", recipe, "--input", *cluster_inputs(), "--output",
             str(tmp_path / "run"), "--scheduler", address, "--quiet"],
            cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        from distributed import Client

        killed = None
        with Client(address, timeout=30) as c:
            deadline = time.time() + 300
            while killed is None and time.time() < deadline and run.poll() is None:
                busy = {w: t for w, t in c.processing().items() if t}
                if busy:
                    worker = sorted(busy)[0]
                    pid = c.run(os.getpid, workers=[worker])[worker]
                    os.kill(pid, signal.SIGKILL)
                    killed = worker
                time.sleep(0.05)
        out, err = run.communicate(timeout=1200)
        assert killed is not None, "no task was ever running on a worker"
        assert run.returncode == 0, err[-3000:]
    finally:
        _stop(procs)
    compare_runs(tmp_path / "ref", tmp_path / "run")
