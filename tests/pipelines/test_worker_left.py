"""The warning for a worker that left mid-step says where its tasks run again: on the other workers,
or, with none left, on one that joins (started by the user for a scheduler of theirs)."""

from __future__ import annotations

import logging
import time

import pytest

from pipelines import worker_loss


@pytest.mark.parametrize("own", [False, True])
def test_the_last_worker_leaving_says_what_the_step_waits_for(caplog, monkeypatch, own):
    from distributed import Client, LocalCluster

    monkeypatch.setattr(worker_loss, "WATCH_EVERY_S", 0.1)
    with (
        LocalCluster(n_workers=1, processes=False, dashboard_address=":0") as lc,
        Client(lc if own else lc.scheduler_address) as client,
    ):
        client.wait_for_workers(1)
        (victim,) = client.scheduler_info()["workers"]
        with caplog.at_level(logging.WARNING), worker_loss.watch_workers(client, "demo: step"):
            lc.scale(0)
            deadline = time.monotonic() + 20
            while client.scheduler_info()["workers"] or "left the cluster" not in caplog.text:
                assert time.monotonic() < deadline, "the worker did not leave"
                time.sleep(0.1)
    said = [r.getMessage() for r in caplog.records if "left the cluster" in r.getMessage()]
    assert len(said) == 1 and said[0].startswith(
        f"demo: step: the worker {victim} left the cluster mid-step; no worker is left"
    )
    assert "other workers" not in said[0]
    if own:
        assert "the step waits for the LocalCluster to restart one" in said[0]
    else:
        assert "the step waits for a worker to join: start `dask worker` processes for the scheduler" in said[0]
