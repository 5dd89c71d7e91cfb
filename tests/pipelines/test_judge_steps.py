"""The local judge's progress lines come about every 30 s whatever its rate: its steps after the first
8 texts hold about 30 s of texts at the slowest rate seen so far (its cached answers aside). The
clock is one the test moves as each text is judged, so no line depends on how busy the machine is."""

from __future__ import annotations

import logging

import numpy as np
import pytest

from classifiers.annotation.base import AnnotationResult, AnnotationStats
from pipelines.commands.judge_progress import EVERY_S, judge_in_steps, warn_if_local


class Judge:
    """Scores each text by its length, taking ``seconds`` per text of a clock it moves; the first
    ``cached`` texts it has answered before (no time, counted as cache hits)."""

    def __init__(self, seconds: float, cached: int = 0) -> None:
        self.now, self.seconds, self.cached, self.seen, self.steps = 0.0, seconds, cached, 0, []

    def clock(self) -> float:
        return self.now

    def __call__(self, chunk: list[str]) -> AnnotationResult:
        hits = max(0, min(len(chunk), self.cached - self.seen))
        self.seen += len(chunk)
        self.now += self.seconds * (len(chunk) - hits)
        self.steps.append(len(chunk))
        n = len(chunk)
        return AnnotationResult(
            np.array([float(len(t)) for t in chunk]),
            list(chunk),
            [None] * n,
            AnnotationStats(documents=n, cache_hits=hits),
        )


def _lines(caplog) -> list[float]:
    """The elapsed seconds of each progress line."""
    return [
        float(r.getMessage().split("elapsed")[0].rsplit(", ", 1)[1].rstrip("s "))
        for r in caplog.records
        if "judged" in r.getMessage()
    ]


@pytest.mark.parametrize(("seconds", "steps"), [(10.0, [8, 3, 3]), (2.0, [8, 15, 15]), (45.0, [8, 1, 1])])
def test_the_local_judges_lines_come_about_every_30_s_at_any_rate(caplog, seconds: float, steps: list[int]) -> None:
    caplog.set_level(logging.INFO)
    texts = [f"text {i}" + "!" * i for i in range(60)]
    judge = Judge(seconds)
    parts = judge_in_steps(judge, texts, "local", logging.getLogger("t"), "train", clock=judge.clock)
    assert judge.steps[:3] == steps and sum(judge.steps) == len(texts)
    assert AnnotationResult.concat(parts).scores.tolist() == [float(len(t)) for t in texts]  # every text, in order
    said = _lines(caplog)
    assert said[0] == 8 * seconds and said[-1] == 60 * seconds
    gaps = np.diff(said)
    assert max(gaps) <= max(EVERY_S, seconds) and min(gaps[:-1]) >= min(EVERY_S, seconds) - seconds


def test_cached_answers_are_not_a_rate_and_say_no_line_each(caplog) -> None:
    """The first 40 texts answered from the cache take no time: the steps stay 8 texts and no line
    comes for each; the texts the judge is asked for set the step from their rate."""
    caplog.set_level(logging.INFO)
    judge = Judge(10.0, cached=40)
    judge_in_steps(judge, [f"t{i}" for i in range(60)], "local", logging.getLogger("t"), "train", clock=judge.clock)
    assert judge.steps == [8, 8, 8, 8, 8, 8, 3, 3, 3, 3]  # the sixth step: 8 texts the judge is asked, 80 s
    assert _lines(caplog) == [0.0, 80.0, 110.0, 140.0, 170.0, 200.0]


def test_an_http_judge_says_a_line_at_most_every_30_s(caplog) -> None:
    caplog.set_level(logging.INFO)
    judge = Judge(0.05)  # 256 texts in 12.8 s
    judge_in_steps(judge, [f"t{i}" for i in range(2000)], "openai", logging.getLogger("t"), "train", clock=judge.clock)
    assert set(judge.steps[:-1]) == {256}
    assert min(np.diff(_lines(caplog))[:-1]) > EVERY_S


def test_the_warning_promises_what_the_steps_do(caplog) -> None:
    warn_if_local({"backend": "local"}, 100, logging.getLogger("t"))
    assert "a progress line follows after the first 8 texts and then about every 30 s" in caplog.text
