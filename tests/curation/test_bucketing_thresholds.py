"""Token-weighted percentile thresholds, buckets, max over scorers, levels and repeat factors."""

from __future__ import annotations

import numpy as np
import pytest

from curation.quality.bucketing import (
    NEMOTRON_LEVELS,
    bucket_of,
    decide,
    level_of,
    max_bucket,
    repeat_of,
    validate_levels,
)
from curation.quality.sketch import QuantileSketch, combined_rank, merge_all, percentile_grid, token_weights

REPEAT = {"high": 4.0, "medium_high": 2.0, "medium": 1.0, "medium_low": 0.5, "low": 0.0}


def exact_thresholds(values: np.ndarray, weights: np.ndarray, pct: np.ndarray) -> np.ndarray:
    order = np.argsort(values, kind="stable")
    cum = np.cumsum(weights[order]) / weights.sum()
    return values[order][np.searchsorted(cum, pct / 100 * (1 - 1e-12))]


def test_grid_is_5_to_95() -> None:
    assert percentile_grid(20).tolist() == [float(p) for p in range(5, 100, 5)]


def test_token_weights_change_the_thresholds() -> None:
    # ten documents scoring 0..9; the one scoring 9 is long
    scores = np.arange(10, dtype=float)
    by_docs = QuantileSketch.from_values(scores).thresholds([50.0])
    by_tokens = QuantileSketch.from_values(scores, np.array([10] * 9 + [910], dtype=float)).thresholds([50.0])
    assert by_docs.tolist() == [4.0]
    assert by_tokens.tolist() == [9.0]  # 91 % of the tokens are in the last document
    # so a document scoring 5 is above the median by documents but below it by tokens
    assert bucket_of(np.array([5.0]), by_docs).tolist() == [1]
    assert bucket_of(np.array([5.0]), by_tokens).tolist() == [0]


def test_small_corpora_are_exact() -> None:
    rng = np.random.default_rng(1)
    v = rng.normal(size=3000)
    w = rng.integers(1, 500, size=3000).astype(float)
    sk = QuantileSketch.from_values(v, w, capacity=4096)
    assert sk.error == 0.0
    np.testing.assert_array_equal(sk.thresholds(percentile_grid()), exact_thresholds(v, w, percentile_grid()))


def test_merged_partition_sketches_are_exact_when_small() -> None:
    rng = np.random.default_rng(2)
    v, w = rng.normal(size=2000), rng.integers(1, 100, size=2000).astype(float)
    parts = [QuantileSketch.from_values(v[i::7], w[i::7]) for i in range(7)]
    merged = merge_all(parts)
    np.testing.assert_array_equal(merged.thresholds(percentile_grid()), exact_thresholds(v, w, percentile_grid()))
    assert merged.total == pytest.approx(w.sum())


def test_compressed_sketches_stay_within_their_error_bound() -> None:
    rng = np.random.default_rng(3)
    v = rng.lognormal(size=100_000)
    w = rng.integers(1, 3000, size=100_000).astype(float)
    parts = [QuantileSketch.from_values(v[i::32], w[i::32], capacity=256) for i in range(32)]
    # merge as a tree, like the stage: 8 at a time
    while len(parts) > 1:
        parts = [merge_all(parts[i : i + 8], 256) for i in range(0, len(parts), 8)]
    sk = parts[0]
    assert len(sk.values) <= 256 and 0 < sk.error < 0.05
    order = np.argsort(v)
    cum = np.cumsum(w[order]) / w.sum()
    got = sk.thresholds(percentile_grid())
    ranks = np.interp(got, v[order], cum)
    assert np.abs(ranks - percentile_grid() / 100).max() <= sk.error + 1e-9


def test_nan_scores_and_empty_sketches() -> None:
    sk = QuantileSketch.from_values(np.array([np.nan, 1.0, 2.0]), np.array([5.0, 1.0, 1.0]))
    assert sk.total == 2.0
    empty = QuantileSketch.empty()
    assert np.isnan(empty.thresholds([50.0])).all()
    assert bucket_of(np.array([1.0, np.nan]), empty.thresholds(percentile_grid())).tolist() == [0, 0]
    assert bucket_of(np.array([np.nan]), np.array([0.0, 1.0])).tolist() == [0]


def test_sketch_roundtrips_through_json() -> None:
    sk = QuantileSketch.from_values(np.array([1.0, 2.0, 2.0]), np.array([1.0, 2.0, 3.0]), capacity=10)
    again = QuantileSketch.from_dict(sk.to_dict())
    np.testing.assert_array_equal(again.values, sk.values)
    np.testing.assert_array_equal(again.weights, sk.weights)


def test_cdf_is_the_weighted_mid_rank() -> None:
    sk = QuantileSketch.from_values(np.array([1.0, 2.0, 3.0]), np.array([1.0, 2.0, 1.0]))
    np.testing.assert_allclose(sk.cdf(np.array([1.0, 2.0, 3.0, 0.0, 9.0])), [0.125, 0.5, 0.875, 0.0, 1.0])


def test_buckets_count_thresholds_exceeded() -> None:
    th = np.linspace(0.05, 0.95, 19)
    assert bucket_of(np.array([0.0, 0.049, 0.051, 0.96, 1.0]), th).tolist() == [0, 0, 1, 19, 19]
    # the document holding a percentile's token (score == threshold) goes up
    assert bucket_of(np.array([2.0]), np.array([1.0, 2.0, 3.0])).tolist() == [2]


def test_max_over_scorers() -> None:
    per = {"heuristics": np.array([19, 3, 0]), "linear": np.array([2, 12, 0]), "edu": np.array([0, 18, 5])}
    assert max_bucket(per).tolist() == [19, 18, 5]
    with pytest.raises(ValueError):
        max_bucket({})


def test_mean_rank_combination_keeps_five_percent_of_tokens_per_bucket() -> None:
    rng = np.random.default_rng(4)
    a = rng.normal(size=4000)
    b = a + rng.normal(size=4000)  # a second, correlated scorer
    w = rng.integers(1, 50, size=4000).astype(float)
    scores = {"a": a, "b": b}
    sk = {k: QuantileSketch.from_values(v, w) for k, v in scores.items()}
    th = {k: s.thresholds(percentile_grid()) for k, s in sk.items()}
    rank = combined_rank(scores, sk, "mean")
    assert ((rank >= 0) & (rank <= 1)).all()
    cth = QuantileSketch.from_values(rank, w).thresholds(percentile_grid())
    d = decide(scores, th, NEMOTRON_LEVELS, REPEAT, "mean", sk, cth)
    share = np.bincount(d.bucket, weights=w, minlength=20) / w.sum()
    assert np.abs(share - 0.05).max() < 0.01  # every bucket ≈ 5 % of the tokens again
    dmax = decide(scores, th, NEMOTRON_LEVELS, REPEAT, "max", sk)
    top_max = w[dmax.bucket == 19].sum() / w.sum()
    assert top_max > 0.06  # max inflates the top bucket; the rank mean does not
    with pytest.raises(ValueError, match="needs the scorers' sketches"):
        decide(scores, th, NEMOTRON_LEVELS, REPEAT, "mean")
    with pytest.raises(ValueError):
        combined_rank(scores, sk, "median")


def test_nemotron_level_mapping() -> None:
    buckets = np.arange(20)
    levels = level_of(buckets, NEMOTRON_LEVELS).tolist()
    assert levels[19] == "high" and levels[18] == "medium_high"
    assert levels[12:18] == ["medium"] * 6
    assert levels[7:12] == ["medium_low"] * 5
    assert levels[:7] == ["low"] * 7
    assert repeat_of(np.array(levels, dtype=object), REPEAT)[[0, 7, 12, 18, 19]].tolist() == [0.0, 0.5, 1.0, 2.0, 4.0]


def test_level_mapping_validation() -> None:
    with pytest.raises(ValueError, match="belong to no level"):
        validate_levels({"high": [10, 19]})
    with pytest.raises(ValueError, match="both"):
        validate_levels({"a": [0, 10], "b": [10, 19]})
    with pytest.raises(ValueError, match="within"):
        validate_levels({"a": [0, 20]})
    assert validate_levels({"keep": [5, 9], "drop": [0, 4]}, n_buckets=10) == {"keep": (5, 9), "drop": (0, 4)}
    with pytest.raises(ValueError, match="no repeat factor"):
        repeat_of(np.array(["high"], dtype=object), {"low": 0.0})


def test_decide_end_to_end_and_custom_mapping() -> None:
    th = {"a": np.linspace(0.05, 0.95, 19), "b": np.linspace(0.05, 0.95, 19)}
    scores = {"a": np.array([0.99, 0.12, 0.47]), "b": np.array([0.00, 0.92, np.nan])}
    d = decide(scores, th, NEMOTRON_LEVELS, REPEAT)
    assert d.buckets["a"].tolist() == [19, 2, 9] and d.buckets["b"].tolist() == [0, 18, 0]
    assert d.bucket.tolist() == [19, 18, 9]
    assert d.level.tolist() == ["high", "medium_high", "medium_low"]
    assert d.repeat.tolist() == [4.0, 2.0, 0.5]
    # another mapping/action, same scores: nothing else to compute
    d2 = decide(scores, th, {"keep": [10, 19], "drop": [0, 9]}, {"keep": 1.0, "drop": 0.0})
    assert d2.level.tolist() == ["keep", "keep", "drop"] and d2.repeat.tolist() == [1.0, 1.0, 0.0]


def test_token_weights_floor_at_one() -> None:
    assert token_weights(np.array([0, 5, np.nan])).tolist() == [1.0, 5.0, 1.0]


def test_each_language_group_is_bucketed_against_its_own_documents():
    from curation.quality.bucketing import OTHER_LANGS, decide_by_group, language_groups, own_languages

    own = own_languages({"en": 200, "zh": 60, "fr": 4, "und": 90}, 50)
    assert own == ["en", "zh"]
    groups = language_groups(["en", "zh", "fr", "und"], own)
    assert groups.tolist() == ["en", "zh", OTHER_LANGS, OTHER_LANGS]
    rng = np.random.default_rng(0)
    en, zh = rng.normal(1.0, 0.1, 100), rng.normal(-1.0, 0.1, 100)  # Chinese scores all below English ones
    sketches = {g: {"s": QuantileSketch.from_values(v)} for g, v in (("en", en), ("zh", zh))}
    th = {g: {"s": sk["s"].thresholds(percentile_grid(20))} for g, sk in sketches.items()}
    d = decide_by_group(np.array(["en"] * 100 + ["zh"] * 100), {"s": np.concatenate([en, zh])}, th, NEMOTRON_LEVELS)
    # the same share of each language in every level, though every Chinese score is below every English one
    for lvl in ("high", "low"):
        assert (d.level[:100] == lvl).sum() == (d.level[100:] == lvl).sum()


def test_a_scorer_that_does_not_apply_is_left_out_of_the_mean_rank():
    sk = {"a": QuantileSketch.from_values(np.array([0.0, 1.0])), "b": QuantileSketch.from_values(np.array([0.0, 1.0]))}
    r = combined_rank({"a": np.array([1.0, 1.0]), "b": np.array([np.nan, 1.0])}, sk, "mean")
    assert r.tolist() == [0.75, 0.75]
    assert combined_rank({"a": np.array([np.nan]), "b": np.array([np.nan])}, sk, "mean").tolist() == [0.0]
