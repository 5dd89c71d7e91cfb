"""How an embedded LocalCluster starts its workers: forked from a forkserver that has loaded the
stage modules and the run's tokenizer, with the environment a spawned worker would have, the
worker profiler off, and the server stopped (its CPU and the workers' counted) when the run ends."""

from __future__ import annotations

import os
import resource
from multiprocessing import forkserver

from pipelines import cluster
from pipelines.cluster import open_client
from pipelines.recipe import load_recipe, run_tokenizers


def _worker_state() -> dict:
    import os
    import sys

    import dask

    from curation.tokens import load_fast_counter

    return {
        "tokenizer_loaded": load_fast_counter.cache_info().currsize,
        "stages_imported": "pipelines.stages.ingest" in sys.modules and "pipelines.stages.mixture" in sys.modules,
        "rayon": os.environ.get("RAYON_NUM_THREADS"),
        "omp": os.environ.get("OMP_NUM_THREADS"),
        "marker": os.environ.get("CURATION_TEST_MARKER"),
        "profile": dask.config.get("distributed.worker.profile.enabled"),
        "parent": os.getppid(),
    }


def test_workers_fork_from_a_server_with_the_stages_and_tokenizer_loaded(monkeypatch):
    monkeypatch.setenv("CURATION_TEST_MARKER", "set-after-import")  # a spawned worker would see it
    assert cluster._forkserver_available()
    with open_client(workers=2, tokenizers=("qwen",)) as client:
        server = forkserver._forkserver._forkserver_pid
        states = list(client.run(_worker_state).values())
        assert server is not None
    assert len(states) == 2
    for s in states:
        assert s["tokenizer_loaded"] == 1, "the tokenizer was loaded before the first task, in the server"
        assert s["stages_imported"]
        assert (s["rayon"], s["omp"]) == ("1", "1")  # one thread per worker, as a spawned worker has
        assert s["marker"] == "set-after-import"
        assert s["profile"] is False
        assert s["parent"] == server  # forked by the server, not spawned by this process
    # stopped and reaped when the cluster closes: its CPU and its workers' count in this process's children
    assert forkserver._forkserver._forkserver_pid is None
    assert "CURATION_WORKER_TOKENIZERS" not in os.environ
    assert resource.getrusage(resource.RUSAGE_CHILDREN).ru_utime > 0


def test_user_choices_win_spawn_method_and_profiler(monkeypatch):
    monkeypatch.setenv("DASK_DISTRIBUTED__WORKER__MULTIPROCESSING_METHOD", "spawn")
    monkeypatch.setenv("DASK_DISTRIBUTED__WORKER__PROFILE__ENABLED", "True")
    assert not cluster._forkserver_available()
    assert cluster.start_worker_server(("qwen",)) is False
    with open_client(workers=1) as client:
        (state,) = client.run(_worker_state).values()
    assert state["parent"] == os.getpid()  # spawned by the nanny, which runs in this process
    assert state["tokenizer_loaded"] == 0 and state["profile"] is True
    assert forkserver._forkserver._forkserver_pid is None


def test_run_tokenizers_reads_the_recipe_without_loading_stages():
    assert run_tokenizers(load_recipe(None)) == ("qwen",)
    assert run_tokenizers(load_recipe(None, ["ingest.tokenizer=whitespace"])) == ("whitespace", "qwen")
