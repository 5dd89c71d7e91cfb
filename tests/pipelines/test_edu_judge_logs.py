"""edu_score against a judge that fails a share of its requests (the OpenAI-compatible stand-in on
127.0.0.1): the log stays a few lines whatever the number of failures, the end of the annotations
says the run's counts in one line, and ``stats.json`` holds them."""

from __future__ import annotations

import json
import logging

import pytest

from classifiers.annotation import retry_log
from classifiers.annotation.retry_log import counted
from pipelines.incomplete import IncompleteRunError
from tests.classifiers.test_annotation_openai import FakeLLMServer
from tests.helpers import make_stage_dir, run_one
from tests.pipelines.test_edu_stage import corpus, overrides


def test_a_struggling_judge_is_summarised_in_the_log_and_counted_in_stats(tmp_path, caplog):
    inp = make_stage_dir(tmp_path / "in", corpus(300, garbled=()))
    settings = {
        "annotator_max_retries": 1,
        "annotator_backoff_s": 0.001,
        "annotator_backoff_max_s": 0.001,
        "sample_size": 200,
        "distil": "hashed",
        "fallback_scorer": "fast",
    }
    with FakeLLMServer(every={"503": 3, "429": 7}) as srv, caplog.at_level(logging.INFO):
        with pytest.raises(IncompleteRunError):  # a few requests failed for good: the stage goes on, marked incomplete
            run_one("edu_score", inp, tmp_path / "out", overrides(srv, **settings))
        sent, failed = len(srv.requests), {"http_503": srv.failed["503"], "http_429": srv.failed["429"]}
    stats = json.loads((tmp_path / "out" / "stats.json").read_text())["extra"]["annotation"]["stats"]
    retried, gave_up = stats["retry_reasons"], stats["failure_reasons"]
    assert stats["requests"] == sent and stats["retries"] == sum(retried.values())
    assert {r: retried[r] + gave_up[r] for r in failed} == failed and min(failed.values()) >= 20
    judge = [r for r in caplog.records if r.name == "classifiers.annotation.openai"]
    assert len(judge) <= 2 * (retry_log.RETRIES_IN_FULL + retry_log.FAILURES_IN_FULL) < sum(failed.values()) // 4
    # warnings: the first request of each reason that failed for good
    assert sum(r.levelno == logging.WARNING for r in judge) == 2
    end = [
        r.getMessage()
        for r in caplog.records
        if "requests failed for good" in r.getMessage() and r.name.startswith("pipelines")
    ]
    assert end == [
        f"edu_score: judge at {srv.url}: {sent} requests for 200 documents, {stats['retries']} retries ({counted(retried)}), "
        f"{stats['failures']} requests failed for good ({counted(gave_up)}) (stats.json: annotation.stats)"
    ]
