"""An HTTP judge against a server that fails a share of its requests (the OpenAI-compatible
stand-in on 127.0.0.1): a bounded number of log lines, the first of each reason in full with what
to change, a periodic summary, and counts in the batch's statistics that match what the server
answered."""

from __future__ import annotations

import logging
import re
import time

import numpy as np

from classifiers.annotation import retry_log
from classifiers.rubrics import get_rubric
from tests.classifiers.test_annotation_openai import FakeLLMServer, make

EDU = get_rubric("edu")
JUDGE = "classifiers.annotation.openai"


def _lines(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == JUDGE]


def test_many_failing_requests_give_a_few_lines_and_exact_counts(caplog):
    docs = [f"energy {i}" for i in range(240)]
    # a timeout well above an answer's time on a busy machine, so only the slowed requests time out
    with (
        FakeLLMServer(every={"503": 3, "429": 7, "slow": 11}, slow_s=2.5) as srv,
        caplog.at_level(logging.INFO, logger=JUDGE),
    ):
        ann = make(srv, concurrency=8, max_retries=1, timeout_s=1.5, backoff_s=0.001, backoff_max_s=0.001)
        res = ann.annotate(docs, EDU)
    failed = {"http_503": srv.failed["503"], "http_429": srv.failed["429"], "timeout": srv.failed["slow"]}
    assert min(failed.values()) >= 10  # every kind failed many requests
    # every error answered was retried or is a request that failed for good, each counted once
    stats = res.stats
    transport = {r: n for r, n in stats.failure_reasons.items() if r in failed}
    assert {r: stats.retry_reasons.get(r, 0) + transport.get(r, 0) for r in failed} == failed
    assert sum(stats.retry_reasons.values()) == stats.retries and stats.requests == len(srv.requests)
    assert sum(transport.values()) == int(np.isnan(res.scores).sum()) > 0
    assert ann.retry_log.counts() == (stats.retry_reasons, transport)
    lines = _lines(caplog)
    # per reason: 3 retries and 1 failure said in full; the rest counted (no summary within 60 s)
    assert len(lines) <= 3 * (retry_log.RETRIES_IN_FULL + retry_log.FAILURES_IN_FULL), lines
    for reason, what, fix in (
        ("http_503", "HTTP 503: overloaded", "see its log"),
        ("http_429", "HTTP 429: slow down", "lower annotator_concurrency"),
        ("timeout", "no answer within 1.5 s", "raise it"),
    ):
        said = [line for line in lines if f": {reason} (" in line]
        assert len(said) == retry_log.RETRIES_IN_FULL and what in said[0] and fix in said[0], said
        assert said[-1].endswith(f"later {reason} retries are counted, in a summary line at most every 60 s")
        gave_up = [line for line in lines if f"failed for good: {reason} " in line]
        assert len(gave_up) == 1 and what in gave_up[0] and fix in gave_up[0], gave_up


def test_a_long_run_says_the_counts_every_summary_period(caplog):
    docs = [f"energy {i}" for i in range(120)]
    with FakeLLMServer(every={"503": 4}, delay_s=0.02) as srv, caplog.at_level(logging.INFO, logger=JUDGE):
        ann = make(srv, concurrency=2, max_retries=1, backoff_s=0.001, backoff_max_s=0.001)
        ann.retry_log.every_s = 0.3
        started = time.monotonic()
        res = ann.annotate(docs, EDU)
        took = time.monotonic() - started
    summaries = [line for line in _lines(caplog) if " so far: " in line]
    assert 1 <= len(summaries) <= took / 0.3 + 1, (took, summaries)
    # the counts only grow, and the last line's are at most the batch's
    seen = [tuple(int(n.replace(",", "")) for n in re.findall(r"([\d,]+) (?:answered|retr)", s)) for s in summaries]
    assert seen == sorted(seen)
    assert seen[-1][1] <= res.stats.retries == res.stats.retry_reasons["http_503"]
    assert ann.retry_log.summary().endswith(
        f"{res.stats.failures} requests failed for good"
        + (f" (http_503={res.stats.failures})" if res.stats.failures else "")
    )
