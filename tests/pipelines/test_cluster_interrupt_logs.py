"""Ctrl-C on an embedded cluster: its workers' heartbeats to the closing scheduler printed ~60 lines
of tracebacks in one interrupt of three (the README promises one line). The workers are quieted,
as the driver is, before the cluster closes."""

import distributed
import pytest

from pipelines import cluster


def test_an_interrupted_cluster_quiets_its_workers_before_closing(monkeypatch):
    ran = []
    real = distributed.Client.run

    def run(self, function, *args, **kwargs):
        ran.append(function.__name__)
        return real(self, function, *args, **kwargs)

    monkeypatch.setattr(distributed.Client, "run", run)
    with pytest.raises(KeyboardInterrupt), cluster.open_client(workers=1):
        raise KeyboardInterrupt
    assert "_quiet_teardown" in ran
