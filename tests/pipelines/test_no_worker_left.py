"""curate's own LocalCluster whose only worker died and did not come back (the nanny could not
restart it after it died for memory) left the run waiting for ever, saying every 60/120/240 s to
start `dask worker` processes "or re-run without --scheduler", which the user had not given. A step
that waits on its own LocalCluster with no worker for the stall time ends in exit 3 with the
workers-lost message; the `--scheduler` advice is for `--scheduler` runs alone. Real LocalClusters."""

from __future__ import annotations

import json
import logging
import time

import pytest

from pipelines import worker_loss
from pipelines.cli import main
from tests.helpers import docs_frame, make_stage_dir


def _leave(part, *args):  # runs on the worker: closes it and its nanny, so that nothing restarts it
    from distributed import get_worker

    worker = get_worker()
    worker.loop.add_callback(worker.close, nanny=True, reason="test: gone for good")
    time.sleep(60)
    return part


@pytest.mark.slow
@pytest.mark.timeout(180)
def test_a_local_cluster_left_without_workers_ends_in_exit_3_not_a_wait_for_ever(tmp_path, caplog, monkeypatch):
    import pipelines.stages.exact_dedup as stage_mod

    inp = make_stage_dir(tmp_path / "in", docs_frame([{"text": f"doc {i}"} for i in range(8)]))
    monkeypatch.setattr(
        stage_mod.STAGE, "build", lambda docs, cfg, ctx: docs.map_partitions(_leave, meta=docs._meta), raising=False
    )
    monkeypatch.setattr(worker_loss, "WATCH_EVERY_S", 0.2)
    monkeypatch.setattr(worker_loss, "STALL_S", 2.0)
    caplog.set_level(logging.WARNING)
    started = time.monotonic()
    rc = main(
        [
            "exact-dedup",
            "--input",
            str(inp),
            "--output",
            str(tmp_path / "out"),
            "--workers",
            "1",
            "--memory-limit",
            "1GB",
            "--quiet",
        ]
    )
    assert rc == 3
    assert time.monotonic() - started < 60  # the 60 s its task sleeps: the run did not wait for it
    lines = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
    assert len(lines) == 1, lines
    assert lines[0].startswith(
        "stage exact_dedup: every worker of the LocalCluster died during exact_dedup: write "
        "and none restarted within 2 s. The usual cause is memory: the workers had a memory limit of 0.93 GiB"
    )
    assert "raise --memory-limit" in lines[0]
    assert "--scheduler" not in caplog.text and "dask worker" not in caplog.text
    assert not (tmp_path / "out" / "_SUCCESS").exists() and not (tmp_path / "out" / "docs").exists()


def test_the_no_worker_advice_names_dask_worker_only_for_a_scheduler_of_the_users():
    from distributed import Client, LocalCluster

    with LocalCluster(n_workers=0, scheduler_port=0, dashboard_address=":0") as lc:
        with Client(lc) as own:
            assert worker_loss.own_cluster(own)
            why = worker_loss.stalled(own)
            assert why is not None and "the LocalCluster has no worker" in why
            assert "--scheduler" not in why and "dask worker" not in why
        with Client(lc.scheduler_address) as theirs:
            assert not worker_loss.own_cluster(theirs)
            assert "start `dask worker` processes for it (or re-run without --scheduler)" in (
                worker_loss.stalled(theirs) or ""
            )


def _jsonl_with_one_huge_line(path, chars: int) -> None:
    with path.open("w") as f:
        for i in range(50):
            f.write(json.dumps({"id": f"a{i}", "text": f"small record {i}"}) + "\n")
        f.write(json.dumps({"id": "huge", "text": "lorem ipsum " * (chars // 12)}) + "\n")
        for i in range(50):
            f.write(json.dumps({"id": f"b{i}", "text": f"small record {i}"}) + "\n")


def test_workers_lost_on_a_partition_over_the_block_size_blame_one_record_not_the_block_size(tmp_path):
    """A partition is never cut inside a record: one larger than ingest.blocksize_mb makes a partition
    larger than the block, which no smaller block shrinks. The message says so (planned partitions of
    a real file; the exception is the one Dask raises)."""
    from distributed.scheduler import KilledWorker

    from pipelines.recipe import load_recipe, stage_config
    from pipelines.stages.ingest import STAGE

    raw = tmp_path / "huge.jsonl"
    _jsonl_with_one_huge_line(raw, 40 << 20)
    recipe = load_recipe(None, ["ingest.blocksize_mb=16"])
    specs = STAGE.plan_inputs([raw], stage_config(recipe, "ingest", STAGE.config_cls))
    exc = KilledWorker(task="('_parse_part-0a58', 0)", last_worker=None, allowed_failures=3)
    message = worker_loss.killed_worker_message("ingest", exc, [1 << 30], recipe, specs)
    assert "its largest partition holds 40 MB, over ingest.blocksize_mb=16 MB" in message
    assert "a single record may be larger than the memory limit allows" in message
    assert "Raise --memory-limit, or lower ingest.max_chars" in message and "Lower ingest.blocksize_mb" not in message
    # partitions within the block: their size is what to lower
    small = tmp_path / "small.jsonl"
    _jsonl_with_one_huge_line(small, 1 << 20)
    specs = STAGE.plan_inputs([small], stage_config(recipe, "ingest", STAGE.config_cls))
    message = worker_loss.killed_worker_message("ingest", exc, [1 << 30], recipe, specs)
    assert "Lower ingest.blocksize_mb (ingest then re-runs" in message and "single record" not in message
