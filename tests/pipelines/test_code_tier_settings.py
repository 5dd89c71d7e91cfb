"""Tier settings whose effect would be silently wrong are refused or said: absolute cuts outside the score range
(the percentile defaults 80 / 10 under tier_mode absolute put every file below 10 in the low tier), and a tier_low
that a tie at the cut keeps from taking effect (the stage records the asked and the realised share and warns)."""

from __future__ import annotations

import logging

import pytest

from curation.config import ConfigError
from curation.quality.code_tiers import TierPolicy
from pipelines.stages.code_quality import CodeQualityConfig
from pipelines.stages.code_web import CodeWebConfig
from tests.helpers import docs_frame, make_stage_dir, run_one
from tests.pipelines.test_code_quality_stage import GOOD


def test_absolute_mode_with_percentile_cuts_is_refused_with_score_units():
    with pytest.raises(
        ConfigError, match=r"absolute takes scores .*set tier_high/tier_low in score units \(e.g. 7.5/4.0\)"
    ):
        CodeQualityConfig.from_dict({"tier_mode": "absolute"})
    with pytest.raises(ConfigError, match=r"high 7.5 / low -1.0"):
        CodeQualityConfig.from_dict({"tier_mode": "absolute", "tier_high": 7.5, "tier_low": -1})
    with pytest.raises(ConfigError, match=r"set tier_high/tier_low in score units"):
        CodeWebConfig.from_dict({"tier_mode": "absolute"})
    cfg = CodeQualityConfig.from_dict({"tier_mode": "absolute", "tier_high": 7.5, "tier_low": 4.0})
    assert cfg.tiers.rules()[0].high == 7.5
    assert TierPolicy.from_dict({"mode": "absolute", "high": 11, "low": 0}).rules()[0].high == 11.0  # no high tier


def test_an_absolute_override_that_inherits_percentile_cuts_is_refused_by_language():
    with pytest.raises(
        ConfigError, match=r"overrides.Go: .*high 80.0 / low 10.0.*\{Go: \{mode: absolute, high: 7.5, low: 4.0\}\}"
    ):
        TierPolicy.from_dict({"overrides": {"Go": {"mode": "absolute"}}})
    with pytest.raises(ConfigError, match=r"overrides.Go: .*high 90.0"):
        TierPolicy.from_dict({"overrides": {"Go": {"mode": "absolute", "high": 90, "low": 2}}})
    rules = TierPolicy.from_dict({"overrides": {"Go": {"mode": "absolute", "high": 8, "low": 2}}}).rules()[1]
    assert (rules["Go"].high, rules["Go"].low) == (8.0, 2.0)
    assert CodeQualityConfig().tiers.rules()[1]["JSON"].high == 11.0  # the default table's sentinel stays valid


def test_a_tie_at_the_low_cut_is_recorded_and_warned_about(tmp_path, caplog):
    rows = [
        {"doc_id": f"py{i}", "text": GOOD.replace("mean", f"mean{i}"), "path": f"pkg/m{i}.py", "source": "code"}
        for i in range(60)
    ]  # files the scorer cannot tell apart: one tie
    inp = make_stage_dir(tmp_path / "in", docs_frame(rows), nparts=2)
    with caplog.at_level(logging.WARNING, logger="pipelines.stages.code_quality"):
        res = run_one(
            "code_quality", inp, tmp_path / "out", ["code_quality.tier_min_files=5", "code_quality.tier_low=30"]
        )
    shares = res.stats["extra"]["tier_shares"]["Python"]
    assert shares["asked"] == {"high": 20.0, "low": 30.0} and shares["realised"] == {"high": 0.0, "low": 0.0}
    assert shares["files"] == 60 and res.stats["extra"]["tiers"]["Python"]["medium"] == 60
    assert (
        "Python: the low tier holds 0 % of 60 files, not the 30 % that tier_low = 30 asks: 60 files score"
        in caplog.text
    )
    assert (
        "a tie at a cut stays in medium whole; to cut by score instead, set tier_overrides={Python: {mode: absolute, new: true"
        in caplog.text
    )
