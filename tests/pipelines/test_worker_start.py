"""The embedded LocalCluster's settings: Dask's statistical profiler off and its periodic
callbacks slowed (an idle 2-worker cluster spent 0.11 CPU-s per second on them, 0.044 with these;
benchmarks/recipe), each one overridable by the user's ``DASK_…`` environment variable."""

from __future__ import annotations

from pipelines.cluster import LOCAL_CLUSTER_CONFIG, open_client


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
