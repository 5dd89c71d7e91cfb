"""Progress in one process (the synchronous scheduler, what small inputs run on): outside a
terminal there was no line at all, where the README promises one per 10 %, and on a terminal
Dask's bare bar without the step's name."""

import logging
import time

import dask

from pipelines.progress import compute_with_progress


def _slow(i):
    time.sleep(0.15)
    return i


def test_one_process_logs_its_step_as_the_cluster_does(caplog):
    caplog.set_level(logging.INFO, logger="pipelines.progress")
    parts = [dask.delayed(_slow)(i) for i in range(12)]
    with dask.config.set(scheduler="synchronous"):
        assert compute_with_progress(parts, None, "demo: step") == list(range(12))
    lines = [r.getMessage() for r in caplog.records if r.name == "pipelines.progress"]
    assert lines and lines[-1].startswith("demo: step: 12/12 tasks (100%)")
    assert len(lines) >= 2  # a 1.8 s step reports on the way, not its last line only
    caplog.clear()
    with dask.config.set(scheduler="synchronous"):
        compute_with_progress(parts, None, "demo: step", quiet=True)
    assert not [r for r in caplog.records if r.name == "pipelines.progress"]
