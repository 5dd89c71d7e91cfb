import numpy as np
import pandas as pd
import pytest

from curation.quality.code_tiers import (
    POOLED,
    TierRule,
    assign_tiers,
    combined_score,
    score_histogram,
    thresholds,
    tier_rules,
)


def test_percentile_cuts_are_per_language():
    langs = np.array(["Python"] * 100 + ["Go"] * 100, dtype=object)
    scores = np.concatenate([np.linspace(5.0, 9.95, 100), np.linspace(1.0, 5.95, 100)])
    cuts = thresholds(score_histogram(langs, scores), TierRule(high=80, low=10), min_files=50)
    assert cuts["Python"] == pytest.approx((5.5, 9.0))
    assert cuts["Go"] == pytest.approx((1.5, 5.0))
    tiers = assign_tiers(scores, langs, cuts, TierRule())
    for lang in ("Python", "Go"):
        t = np.array(tiers)[langs == lang]
        assert (t == "high").sum() == 20 and (t == "low").sum() == 10
    # the same score is high in Go and low in Python: tiers are per language
    t = assign_tiers(np.array([5.2, 5.2]), np.array(["Go", "Python"]), cuts, TierRule())
    assert t == ["high", "low"]
    assert set(tiers) == {"high", "medium", "low"}


def test_rare_language_uses_pooled_percentiles():
    langs = np.array(["Python"] * 100 + ["Perl"] * 5, dtype=object)
    scores = np.concatenate([np.linspace(0, 9.9, 100), np.full(5, 3.0)])
    cuts = thresholds(score_histogram(langs, scores), TierRule(high=80, low=10), min_files=50)
    assert cuts["Perl"] == cuts[POOLED]
    # a language never seen in the histograms falls back to the pooled cuts too
    tiers = assign_tiers(np.array([9.99]), np.array(["Zig"]), cuts, TierRule())
    assert tiers == ["high"]


def test_absolute_mode_and_per_language_override():
    default, overrides = tier_rules("percentile", 80, 10, {"JSON": {"mode": "absolute", "high": 9.5, "low": 6.0}})
    langs = np.array(["JSON"] * 50 + ["C"] * 50, dtype=object)
    scores = np.concatenate([np.linspace(5, 7, 50), np.linspace(5, 7, 50)])
    cuts = thresholds(score_histogram(langs, scores), default, overrides, min_files=10)
    assert cuts["JSON"] == (6.0, 9.5)
    tiers = assign_tiers(scores, langs, cuts, default, overrides)
    json_tiers = np.array(tiers)[:50]
    assert "high" not in json_tiers and (json_tiers == "low").sum() == 25


def test_nan_score_is_medium_and_bad_rules_are_rejected():
    tiers = assign_tiers(np.array([np.nan]), np.array(["Go"]), {}, TierRule(mode="absolute", high=7, low=3))
    assert tiers == ["medium"]
    with pytest.raises(ValueError):
        TierRule(mode="quantile")
    with pytest.raises(ValueError):
        TierRule(high=10, low=20)


def test_combined_score_skips_missing_scorers():
    df = pd.DataFrame({"code_score_structural": [6.0, np.nan], "code_score_learned": [8.0, 4.0]})
    assert combined_score(df, {"structural": 3.0, "learned": 1.0}).tolist() == [6.5, 4.0]
    assert combined_score(df, {"structural": 1.0, "absent": 1.0}).tolist()[0] == 6.0


def test_histograms_merge_by_addition():
    a = score_histogram(np.array(["Go"] * 3), np.array([1.0, 2.0, 3.0]))
    b = score_histogram(np.array(["Go"] * 3), np.array([4.0, 5.0, 6.0]))
    both = score_histogram(np.array(["Go"] * 6), np.array([1.0, 2.0, 3.0, 4.0, 5.0, 6.0]))
    rule = TierRule(high=50, low=50)
    assert thresholds(pd.concat([a, b]), rule, min_files=1) == thresholds(both, rule, min_files=1)


def test_rare_language_falls_back_to_its_group_and_prose_is_not_pooled():
    from curation.quality.code_language import UNPOOLED_GROUPS, tier_group

    langs = np.array(["JavaScript"] * 30 + ["TypeScript"] * 30 + ["Python"] * 100 + ["Markdown"] * 5, dtype=object)
    scores = np.concatenate([np.linspace(2, 6, 30), np.linspace(2, 6, 30), np.linspace(6, 10, 100) - 0.01, np.full(5, 1.0)])
    hist = score_histogram(langs, scores, tier_group)
    cuts = thresholds(hist, TierRule(high=80, low=10), min_files=50, group_of=tier_group, unpooled=UNPOOLED_GROUPS)
    # JavaScript and TypeScript share the javascript family's cuts (60 files), not the pooled ones
    assert cuts["JavaScript"] == cuts["TypeScript"] != cuts[POOLED]
    assert cuts["JavaScript"][1] < 6.5
    # five Markdown files cannot be calibrated on source code: every one is medium
    tiers = assign_tiers(np.full(5, 1.0), np.array(["Markdown"] * 5), cuts, TierRule())
    assert tiers == ["medium"] * 5
    assert not any(k.startswith("group:") for k in cuts)


def test_a_tie_at_a_cut_is_medium_and_never_fills_an_outer_tier():
    # 100 C files: 70 spread below, a block of 25 headers tied at 9.16 (straddling the 80th percentile), 5 above
    langs = np.array(["C"] * 100, dtype=object)
    scores = np.concatenate([np.linspace(5.0, 8.38, 70), np.full(25, 9.16), np.linspace(9.3, 9.7, 5)])
    cuts = thresholds(score_histogram(langs, scores), TierRule(high=80, low=10), min_files=50)
    tiers = np.array(assign_tiers(scores, langs, cuts, TierRule()))
    assert (tiers[70:95] == "medium").all()  # the tied block is not high, whole
    assert (tiers[95:] == "high").all() and (tiers == "high").sum() == 5
    assert (tiers == "low").sum() == 10
    # a language whose files all score alike has nothing to rank: all medium
    same = np.full(60, 6.7)
    cuts = thresholds(score_histogram(np.array(["TOML"] * 60, dtype=object), same), TierRule(high=80, low=10), min_files=50)
    assert set(assign_tiers(same, np.array(["TOML"] * 60), cuts, TierRule())) == {"medium"}
