"""A `--scheduler` cluster used the way users get it wrong: relative paths (its workers have their own
working folder), a scheduler without workers, a scheduler lost mid-run. Real `dask scheduler` and
`dask worker` processes on 127.0.0.1."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.helpers import read_parts
from tests.pipelines.test_cluster import REPO, _start_cluster, _stop, cluster_inputs

pytestmark = pytest.mark.slow


def _curate_in(cwd: Path, args: list[str], env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pipelines.cli", *args], cwd=cwd, capture_output=True, text=True, timeout=600,
                          env={**os.environ, "PYTHONPATH": str(REPO), **(env or {})})


def test_relative_paths_reach_workers_that_stand_elsewhere(tmp_path):
    """The workers run in the repository; the user types paths relative to their own folder."""
    address, procs = _start_cluster(tmp_path, n_workers=1)
    user = tmp_path / "user"
    (user / "data").mkdir(parents=True)
    src = Path(cluster_inputs()[0])
    for f in sorted(src.rglob("*.jsonl"))[:3]:
        (user / "data" / f.name).write_bytes(f.read_bytes())
    # records without an id (their id hashes the file's name) and one the ledger names by file
    (user / "data" / "zz_extra.jsonl").write_text('{"text": "no id here, one", "source": "web"}\n{"text": "  ", "source": "web"}\n')
    try:
        r = _curate_in(user, ["ingest", "--input", "data", "--output", "out/00_ingest", "--scheduler", address, "--quiet"])
        assert r.returncode == 0, r.stderr[-3000:]
        r = _curate_in(user, ["exact-dedup", "--input", "out/00_ingest", "--output", "out/10_exact_dedup", "--scheduler", address, "--quiet"])
        assert r.returncode == 0, r.stderr[-3000:]
    finally:
        _stop(procs)
    assert (user / "out" / "10_exact_dedup" / "_SUCCESS").is_file()
    assert not (REPO / "out").exists()  # nothing written relative to the workers' folder
    assert not list(user.rglob("*.tmp")) and not list(user.rglob("*.inprogress"))
    # the same rows as a run without a scheduler: files named as typed, not as the workers got them
    # (absolute), in the ledger, the parsed rows and the ids hashed from them
    r = _curate_in(user, ["ingest", "--input", "data", "--output", "local/00_ingest", "--scheduler", "synchronous", "--quiet"])
    assert r.returncode == 0, r.stderr[-3000:]
    for sub in ("docs", "ledger", "artifacts/parsed"):
        remote, local = read_parts(user / "out" / "00_ingest" / sub), read_parts(user / "local" / "00_ingest" / sub)
        assert remote.equals(local), sub
    ledger = read_parts(user / "local" / "00_ingest" / "ledger")
    assert [json.loads(d)["file"] for d in ledger["detail"]] == ["data/zz_extra.jsonl"]


def test_no_worker_within_the_wait_ends_with_exit_9(tmp_path, caplog, monkeypatch):
    from distributed import LocalCluster

    from pipelines.cluster import SchedulerError, open_client

    with LocalCluster(n_workers=0, scheduler_port=0, dashboard_address=":0") as lc:
        monkeypatch.setenv("CURATE_WORKER_WAIT_S", "2")
        with (caplog.at_level(logging.INFO), pytest.raises(SchedulerError, match="no worker joined the scheduler within 2 s"),
              open_client(lc.scheduler_address)):
            pass
        assert "has no worker yet; waiting up to 2 s for one" in caplog.text
        lc.scale(1)
        lc.wait_for_workers(1)
        with caplog.at_level(logging.INFO), open_client(lc.scheduler_address) as client:
            assert client is not None
        assert "1 workers, " in caplog.text


def test_a_compute_that_no_worker_can_run_is_said_not_silent(caplog):
    from distributed import Client, LocalCluster

    from pipelines import worker_loss

    # a scheduler of the user's (its address, as --scheduler connects): its workers are the user's to start
    with LocalCluster(n_workers=0, scheduler_port=0, dashboard_address=":0") as lc, Client(lc.scheduler_address) as client:
        assert "the scheduler has no worker" in worker_loss.stalled(client)
        old = worker_loss.WATCH_EVERY_S, worker_loss.STALL_S
        worker_loss.WATCH_EVERY_S, worker_loss.STALL_S = 0.2, 0.5
        try:
            with caplog.at_level(logging.WARNING), worker_loss.watch_workers(client, "demo: step"):
                time.sleep(2.0)
        finally:
            worker_loss.WATCH_EVERY_S, worker_loss.STALL_S = old
    assert "demo: step: waiting" in caplog.text and "the scheduler has no worker" in caplog.text
    # said again each time the wait doubles (0.5, 1, 2 s), not at every poll (~10) nor only once
    assert caplog.text.count("demo: step: waiting") in (2, 3)


def test_a_lost_scheduler_is_exit_9_with_one_line():
    from distributed.client import FutureCancelledError

    from pipelines.exit_codes import failure

    code, message = failure(FutureCancelledError("('parsed', 3)", "scheduler-connection-lost"))
    assert code == 9 and "the connection to the Dask scheduler was lost mid-run" in message
    assert failure(FutureCancelledError("k", "user"))[0] is None  # a cancel for another reason is not this


def test_relative_run_model_and_export_paths_reach_the_workers(tmp_path, finished_run):
    """An export and a stage's model folder given relative to the user's folder, on a --scheduler
    whose workers stand in the repository: the export wrote its files into the workers' folder and
    exited 0; a relative model was "missing" on the workers after the earlier stages had run."""
    import shutil

    address, procs = _start_cluster(tmp_path, n_workers=1)
    user = tmp_path / "user"
    user.mkdir()
    shutil.copytree(finished_run, user / "run")
    shutil.copytree(REPO / "classifiers" / "models" / "code_content", user / "models" / "cc")
    try:
        r = _curate_in(user, ["export", "megatron", "run", "--output", "meg", "--scheduler", address, "--quiet"])
        assert r.returncode == 0, r.stderr[-3000:]
        r = _curate_in(user, ["code-web", "--input", "run/50_code_quality", "--output", "cw", "--scheduler", address, "--quiet",
                              "classifier_model=models/cc"])
        assert r.returncode == 0, r.stderr[-3000:]
    finally:
        _stop(procs)
    prefixes = (user / "meg" / "pretrain_phase1.data-args").read_text().split()[1::2]
    assert prefixes and all(Path(p + ".bin").is_file() for p in prefixes)
    assert (user / "cw" / "_SUCCESS").is_file() and not (REPO / "meg").exists() and not list(REPO.glob(".meg*"))


def test_model_paths_are_written_absolute_with_home_expanded(tmp_path, monkeypatch):
    from pipelines.recipe import absolute_model_paths, load_recipe

    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    (tmp_path / "cc").mkdir()
    (tmp_path / "models" / "cq").mkdir(parents=True)
    recipe = load_recipe(REPO / "pipelines" / "configs" / "glm45.yaml",
                         ["code_web.classifier_model=~/cc", "code_quality.learned_model=models/cq", "code_quality.scorers=[structural,learned]",
                          "semdedup.model=bogus-model"])
    absolute_model_paths(recipe, ["code_web", "code_quality", "semdedup"])
    assert recipe["stages"]["code_web"]["classifier_model"] == str(tmp_path / "cc")
    assert recipe["stages"]["code_quality"]["learned_model"] == str(tmp_path / "models" / "cq")
    assert recipe["stages"]["semdedup"]["model"] == "bogus-model"  # no such folder: a model name (or a typo the check names) stays
