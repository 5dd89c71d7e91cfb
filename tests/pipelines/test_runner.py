"""The runner: markers, skip on re-run, cascade on a changed key, crash safety, determinism."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import curation.dedup.exact
from pipelines.cluster import open_client
from pipelines.recipe import load_recipe
from pipelines.runner import run_recipe
from tests.helpers import only, read_parts

FOUNDATION = ["ingest.tokenizer=whitespace", *only("exact_dedup")]


def _corpus(tmp_path: Path, n: int = 60) -> Path:
    d = tmp_path / "raw"
    d.mkdir()
    with open(d / "a.jsonl", "w") as f:
        for i in range(n):
            f.write(json.dumps({"id": f"a{i}", "text": f"document number {i % 20} with words", "source": "web"}) + "\n")
    with open(d / "b.jsonl", "w") as f:
        for i in range(n // 2):
            f.write(json.dumps({"id": f"b{i}", "text": f"other text {i}", "source": "math_science"}) + "\n")
        f.write("{broken\n")
    return d


def _run(raw: Path, out: Path, overrides=(), scheduler="synchronous", workers=None):
    rec = load_recipe(None, [*FOUNDATION, *overrides])
    with open_client(scheduler, workers) as client:
        return run_recipe(rec, [str(raw)], out, client=client, quiet=True)


def test_run_writes_complete_stage_folders_and_run_json(tmp_path):
    raw = _corpus(tmp_path)
    results = _run(raw, tmp_path / "run")
    assert [r.stage_dir.name for r in results] == ["00_ingest", "10_exact_dedup"]
    for r in results:
        for name in ("docs", "ledger", "stats.json", "_SUCCESS"):
            assert (r.stage_dir / name).exists(), name
    run = json.loads((tmp_path / "run" / "run.json").read_text())
    assert [s["name"] for s in run["stages"]] == ["ingest", "exact_dedup"]
    assert run["recipe"]["stages"]["exact_dedup"]["keep"] == "first" and "dask" in run["versions"]
    # conservation across the whole run: every raw record is kept at the end or in exactly one ledger
    final = set(read_parts(tmp_path / "run" / "10_exact_dedup" / "docs")["doc_id"])
    ledgers = [read_parts(r.stage_dir / "ledger") for r in results]
    dropped = [i for led in ledgers for i in led["doc_id"]]
    assert len(dropped) == len(set(dropped)) and not final & set(dropped)
    assert len(final) + len(dropped) == 91


def test_rerun_skips_and_changed_key_reruns_that_stage_and_later(tmp_path):
    raw = _corpus(tmp_path)
    _run(raw, tmp_path / "run")
    again = _run(raw, tmp_path / "run")
    assert [r.skipped for r in again] == [True, True]
    changed = _run(raw, tmp_path / "run", ["ingest.max_chars=20"])  # "document number 1 with words" is too large now
    assert [r.skipped for r in changed] == [False, False]
    only_last = _run(raw, tmp_path / "run", ["ingest.max_chars=20", "exact_dedup.keep=longest"])
    assert [r.skipped for r in only_last] == [True, False]


def test_crash_mid_stage_leaves_no_marker_and_rerun_completes(tmp_path, monkeypatch):
    raw = _corpus(tmp_path)

    def boom(*a, **k):
        raise RuntimeError("simulated crash")

    monkeypatch.setattr(curation.dedup.exact, "pick_duplicates", boom)
    import pipelines.stages.exact_dedup as stage_mod

    monkeypatch.setattr(stage_mod, "pick_duplicates", boom)
    with pytest.raises(RuntimeError, match="simulated crash"):
        _run(raw, tmp_path / "run")
    assert (tmp_path / "run" / "00_ingest" / "_SUCCESS").exists()
    assert not (tmp_path / "run" / "10_exact_dedup").exists()
    assert not list((tmp_path / "run").glob(".*.inprogress")), "a failed stage removes its work folder"
    monkeypatch.undo()
    results = _run(raw, tmp_path / "run")
    assert [r.skipped for r in results] == [True, False]
    assert (tmp_path / "run" / "10_exact_dedup" / "_SUCCESS").exists()


@pytest.mark.slow
def test_sigkill_mid_stage_then_rerun_gives_identical_output(tmp_path):
    raw = _corpus(tmp_path)
    _run(raw, tmp_path / "ref")
    script = (
        "import sys, time, curation.dedup.exact as m, pipelines.stages.exact_dedup as s\n"
        "orig = m.pick_duplicates\n"
        "def slow(*a, **k):\n    time.sleep(60)\n    return orig(*a, **k)\n"
        "s.pick_duplicates = slow\n"
        "from pipelines.cli import main\n"
        f"sys.exit(main(['run', '{load_recipe(None)['recipe_path']}', '--input', '{raw}', '--output', '{tmp_path / 'run'}',"
        f" '--scheduler', 'synchronous', '--quiet', {', '.join(repr(o) for o in FOUNDATION)}]))\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", script], start_new_session=True)
    inprogress = tmp_path / "run" / ".10_exact_dedup.inprogress"
    deadline = time.time() + 60
    while not inprogress.exists() and time.time() < deadline:
        time.sleep(0.2)
    assert inprogress.exists(), "the run never reached exact_dedup"
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    assert not (tmp_path / "run" / "10_exact_dedup" / "_SUCCESS").exists()
    results = _run(raw, tmp_path / "run")
    assert [r.skipped for r in results] == [True, False]
    for stage in ("00_ingest", "10_exact_dedup"):
        for kind in ("docs", "ledger"):
            a = read_parts(tmp_path / "ref" / stage / kind).sort_values("doc_id").reset_index(drop=True)
            b = read_parts(tmp_path / "run" / stage / kind).sort_values("doc_id").reset_index(drop=True)
            assert a.equals(b), (stage, kind)


@pytest.mark.slow
def test_local_cluster_and_synchronous_runs_are_identical(tmp_path):
    raw = _corpus(tmp_path, n=200)
    _run(raw, tmp_path / "sync", scheduler="synchronous")
    _run(raw, tmp_path / "cluster", scheduler=None, workers=2)
    for stage in ("00_ingest", "10_exact_dedup"):
        for kind in ("docs", "ledger"):
            parts_a = sorted(p.name for p in (tmp_path / "sync" / stage / kind).glob("part-*"))
            parts_b = sorted(p.name for p in (tmp_path / "cluster" / stage / kind).glob("part-*"))
            assert parts_a == parts_b
            a = read_parts(tmp_path / "sync" / stage / kind)
            b = read_parts(tmp_path / "cluster" / stage / kind)
            assert a.equals(b), (stage, kind)
        sa = json.loads((tmp_path / "sync" / stage / "stats.json").read_text())
        sb = json.loads((tmp_path / "cluster" / stage / "stats.json").read_text())
        assert {k: sa[k] for k in ("in", "kept", "dropped_by_reason")} == {k: sb[k] for k in ("in", "kept", "dropped_by_reason")}


def test_workers_dying_on_a_task_gives_an_error_that_says_what_to_change(tmp_path, monkeypatch):
    """Dask's KilledWorker (a task's workers died 3 times, usually out of memory) becomes an error
    naming the stage, the partition size setting and --memory-limit; nothing is marked complete."""
    from distributed.scheduler import KilledWorker

    import pipelines.stages.exact_dedup as stage_mod
    from pipelines.cli import main

    raw = _corpus(tmp_path)

    class Worker:
        address = "tcp://127.0.0.1:40000"

    def dies(*a, **k):
        raise KilledWorker(task="('pick', 0)", last_worker=Worker(), allowed_failures=3)

    monkeypatch.setattr(stage_mod, "pick_duplicates", dies)
    out = tmp_path / "run"
    rec = load_recipe(None, FOUNDATION)
    rc = main(["run", rec["recipe_path"], "--input", str(raw), "--output", str(out), "--scheduler", "synchronous", *FOUNDATION])
    assert rc == 3
    assert (out / "00_ingest" / "_SUCCESS").exists() and not (out / "10_exact_dedup").exists()
    from pipelines.runner import run_stage
    from pipelines.worker_loss import WorkerLostError

    with pytest.raises(WorkerLostError, match=r"exact_dedup.*ingest\.blocksize_mb=128.*--memory-limit"):
        run_stage("exact_dedup", rec, stage_dir=tmp_path / "again", input_dir=out / "00_ingest", quiet=True)
