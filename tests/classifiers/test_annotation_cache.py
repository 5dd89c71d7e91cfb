"""The annotation cache and the annotator protocol's pieces, with a deterministic fake backend."""

from __future__ import annotations

import numpy as np
import pytest

from classifiers.annotation import (
    AnnotationCache,
    AnnotationResult,
    AnnotationStats,
    CachedAnnotator,
    CacheRecord,
    expected_score,
)
from classifiers.annotation.base import score_probs
from classifiers.rubrics import Rubric, get_rubric

EDU = get_rubric("edu")


class FakeAnnotator:
    """Scores = number of 'x' characters, capped at 5; 'crash' raises; '?' gives an unparseable answer."""

    model_id = "fake:v1"

    def __init__(self) -> None:
        self.seen: list[str] = []

    def annotate(self, texts: list[str], rubric: Rubric) -> AnnotationResult:
        self.seen.extend(texts)
        if any("crash" in t for t in texts):
            raise RuntimeError("backend died")
        scores, raw, failures = [], [], []
        for t in texts:
            if "?" in t:
                scores.append(np.nan), raw.append("hmm"), failures.append("no_final_score")
            elif "!" in t:
                scores.append(np.nan), raw.append(""), failures.append("timeout")
            else:
                s = min(5, t.count("x"))
                scores.append(float(s)), raw.append(f"Educational score: {s}"), failures.append(None)
        stats = AnnotationStats(documents=len(texts), requests=len(texts), tokens_in=10 * len(texts))
        return AnnotationResult(np.asarray(scores), raw, failures, stats, tokens_in=[10] * len(texts), tokens_out=[1] * len(texts))


def test_expected_score_merges_spaced_tokens_and_ignores_others():
    score, mass = expected_score({" 2": 0.2, "2": 0.2, "4": 0.4, "the": 0.2}, (0, 5))
    assert mass == pytest.approx(0.8) and score == pytest.approx((2 * 0.4 + 4 * 0.4) / 0.8)
    assert expected_score({"hello": 0.99, "3": 0.01}, (0, 5)) == (None, 0.01)
    assert score_probs({"7": 0.5, "²": 0.5, "Ġ3": 0.1}, (0, 5)) == {3: 0.1}


def test_expected_score_splits_ten_on_a_ten_point_scale():
    score, mass = expected_score({"1": 0.5, "9": 0.5}, (0, 10), p_zero_after_one=0.8)
    assert score == pytest.approx(0.5 * 9 + 0.4 * 10 + 0.1 * 1)
    assert mass == pytest.approx(1.0)


def test_cache_round_trip_and_keying(tmp_path):
    cache = AnnotationCache(tmp_path)
    inner = FakeAnnotator()
    ann = CachedAnnotator(inner, cache, chunk_size=2)
    first = ann.annotate(["x", "xx", "x", "?", "!"], EDU)
    assert first.scores[:3].tolist() == [1.0, 2.0, 1.0]
    assert first.failures == [None, None, None, "no_final_score", "timeout"]
    assert inner.seen == ["x", "xx", "?", "!"]  # the repeated "x" was asked once
    assert first.stats.documents == 5 and first.stats.failures == 2 and first.stats.tokens_in == 40
    inner.seen.clear()
    second = ann.annotate(["xx", "x", "?", "!", "xxx"], EDU)
    assert inner.seen == ["!", "xxx"]  # answers (and parse failures) cached; the timeout is retried
    assert second.stats.cache_hits == 3
    assert second.failures[2] == "no_final_score" and np.isnan(second.scores[2])
    assert CachedAnnotator(FakeAnnotator(), cache).annotate(["x"], get_rubric("web_quality")).stats.cache_hits == 0


def test_a_crash_keeps_finished_chunks(tmp_path):
    cache = AnnotationCache(tmp_path)
    ann = CachedAnnotator(FakeAnnotator(), cache, chunk_size=2)
    with pytest.raises(RuntimeError):
        ann.annotate(["x", "xx", "xxx", "crash"], EDU)
    assert len(cache) == 2  # the first chunk was stored before the second one crashed
    resumed = FakeAnnotator()
    CachedAnnotator(resumed, cache, chunk_size=2).annotate(["x", "xx", "xxx"], EDU)
    assert resumed.seen == ["xxx"]


def test_stats_add_up():
    a = AnnotationStats(documents=2, requests=3, failures=1, failure_reasons={"timeout": 1}, seconds=1.0)
    b = AnnotationStats(documents=1, requests=1, failures=1, failure_reasons={"timeout": 1}, seconds=0.5)
    total = (a + b).to_dict()
    assert total["documents"] == 3 and total["failure_reasons"] == {"timeout": 2} and total["documents_per_s"] == 2.0


def test_result_lengths_must_agree():
    with pytest.raises(ValueError):
        AnnotationResult(np.zeros(2), ["a"], [None, None])


def test_each_process_writes_its_own_file_and_reads_every_file(tmp_path, monkeypatch):
    """Workers annotate: each writes one file (safe on a shared file system), all read them all."""
    import sqlite3

    from classifiers.annotation import cache as cache_module

    here = AnnotationCache(tmp_path)
    here.put("m", "v1", [CacheRecord("h1", 3.0, "3", None)])
    monkeypatch.setattr(cache_module, "_host", lambda: "other-node")
    there = AnnotationCache(tmp_path)
    assert there.path != here.path
    assert there.get("m", "v1", ["h1"])["h1"].score == 3.0  # another process's answer is found
    there.put("m", "v1", [CacheRecord("h2", 1.0, "1", None)])
    assert here.get("m", "v1", ["h1", "h2"]).keys() == {"h1", "h2"} and len(here) == 2
    legacy = sqlite3.connect(tmp_path / "annotations.sqlite")  # the single file of earlier versions
    legacy.execute("CREATE TABLE annotations (model_id TEXT, rubric_version TEXT, text_hash TEXT, score REAL, raw TEXT, "
                   "failure TEXT, tokens_in INTEGER, tokens_out INTEGER, created REAL, PRIMARY KEY (model_id, rubric_version, text_hash))")
    legacy.execute("INSERT INTO annotations VALUES ('m', 'v1', 'h0', 2.0, '2', NULL, 0, 0, 0)")
    legacy.commit()
    legacy.close()
    assert here.get("m", "v1", ["h0"])["h0"].score == 2.0 and len(here) == 3
