"""The embedded LocalCluster's workers: Dask's statistical profiler off unless the user turns it on
(its sampling and merging cost ~2 CPU-s per worker over the 70 MB recipe, benchmarks/recipe)."""

from __future__ import annotations

from pipelines.cluster import open_client


def _profiling() -> bool:
    import dask

    return dask.config.get("distributed.worker.profile.enabled")


def test_worker_profiler_is_off_by_default_and_the_user_can_turn_it_on(monkeypatch):
    with open_client(workers=1) as client:
        assert list(client.run(_profiling).values()) == [False]
    monkeypatch.setenv("DASK_DISTRIBUTED__WORKER__PROFILE__ENABLED", "True")
    with open_client(workers=1) as client:
        assert list(client.run(_profiling).values()) == [True]
