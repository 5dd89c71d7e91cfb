"""Nested sub-configs: the nested form and the old flat keys build the same config, and the
hash (computed from the flat view) is the one the config had before its fields were grouped."""

import pytest

from curation.config import ConfigError, config_hash, nest_flat_keys
from curation.quality.code_rules import RuleThresholds
from curation.quality.code_tiers import TierPolicy
from pipelines.stages.code_quality import DEFAULT_TIER_OVERRIDES, CodeQualityConfig

#: config_hash of the default's flat view: the fields as they were before rules and tiers were nested, with
#: the default tier_overrides (JSON, YAML and TOML medium)
FLAT_DEFAULT_HASH = "b93f420246ca7ecde90c9430428d600625b64c8f4aca32efeef603b04cc7c914"


def test_the_default_hash_is_the_flat_one():
    assert config_hash(CodeQualityConfig().flat_dict()) == FLAT_DEFAULT_HASH


def test_flat_and_nested_keys_build_the_same_config():
    flat = CodeQualityConfig.from_dict({"tier_high": 90, "max_lines": 500, "alpha_exempt": ["Assembly"]})
    nested = CodeQualityConfig.from_dict({"tiers": {"high": 90}, "rules": {"max_lines": 500, "alpha_exempt": ["Assembly"]}})
    assert flat == nested
    assert flat.tiers.high == 90.0 and flat.tiers.low == 10.0  # the other keys keep their defaults
    assert flat.rules.max_lines == 500 and flat.rules.alpha_exempt == ("Assembly",)
    assert flat.rules.data_files["JSON"]["max_chars"] == 5000  # the stage's default table, not the class's empty one
    assert flat.flat_dict()["tier_high"] == 90.0 and "tiers" not in flat.flat_dict()
    assert flat.to_dict()["tiers"]["high"] == 90.0


def test_a_key_given_flat_and_nested_is_an_error():
    with pytest.raises(ConfigError, match="tier_high and tiers.high are the same key"):
        CodeQualityConfig.from_dict({"tier_high": 90, "tiers": {"high": 80}})


def test_nested_values_are_validated_and_named():
    with pytest.raises(ConfigError, match=r"CodeQualityConfig.tiers: .*low \(90.0\) must not exceed high"):
        CodeQualityConfig.from_dict({"tier_low": 90, "tier_high": 10})
    with pytest.raises(ConfigError, match="unknown key 'hihg' for TierPolicy"):
        CodeQualityConfig.from_dict({"tiers": {"hihg": 1}})
    with pytest.raises(ConfigError, match="min_alpha_fraction"):
        CodeQualityConfig.from_dict({"min_alpha_fraction": 2})
    with pytest.raises(ConfigError, match="must be a mapping"):
        CodeQualityConfig.from_dict({"tiers": 5})


def test_replace_takes_flat_or_nested_changes():
    cfg = CodeQualityConfig().replace(tier_low=20)
    assert cfg.tiers.low == 20.0 and cfg.tiers.high == 80.0
    assert cfg.replace(tiers={"high": 95}).tiers == TierPolicy(low=20.0, high=95.0, overrides=DEFAULT_TIER_OVERRIDES)


def test_round_trip_through_either_view():
    cfg = CodeQualityConfig.from_dict({"tier_overrides": {"Go": {"mode": "absolute", "high": 7, "low": 3}}, "drop_xml": False})
    assert CodeQualityConfig.from_dict(cfg.to_dict()) == cfg
    assert CodeQualityConfig.from_dict(cfg.flat_dict()) == cfg
    assert isinstance(cfg.rules, RuleThresholds) and cfg.rules.drop_xml is False


def test_nest_flat_keys_leaves_other_keys():
    assert nest_flat_keys(CodeQualityConfig, {"sources": ["code"], "max_lines": 3}) == {"sources": ["code"], "rules": {"max_lines": 3}}


# -- the recipe: nested form, flat keys, overrides -------------------------------------------

def _cq(overrides, path=None):
    from pipelines.recipe import load_recipe, stage_config

    recipe = load_recipe(path, overrides)
    return recipe, stage_config(recipe, "code_quality", CodeQualityConfig)


def test_flat_and_nested_overrides_land_in_the_nested_field():
    recipe, cfg = _cq(["code_quality.tier_high=90", "code_quality.rules.max_lines=500"])
    assert cfg.tiers.high == 90.0 and cfg.rules.max_lines == 500
    assert recipe["stages"]["code_quality"]["tiers"]["high"] == 90  # the recipe itself is normalised to nested
    assert "tier_high" not in recipe["stages"]["code_quality"]
    with pytest.raises(ConfigError, match="code_quality.tiers.high is given twice on the command line"):
        _cq(["code_quality.tiers.high=70", "code_quality.tier_high=95"])  # one key in either form: which is meant?
    _, table = _cq(["code_quality.data_files.JSON.max_chars=10"])
    assert table.rules.data_files["JSON"] == {"min_chars": 50, "max_chars": 10, "min_alpha_fraction": 0.5}


def test_a_stage_run_takes_its_flat_and_nested_keys(tmp_path):
    from pipelines.recipe import load_recipe, stage_config

    recipe = load_recipe(None, ["tier_low=25", "tiers.min_files=5"], stage="code_quality")
    cfg = stage_config(recipe, "code_quality", CodeQualityConfig)
    assert (cfg.tiers.low, cfg.tiers.min_files) == (25.0, 5)


def test_override_typos_and_new_table_entries():
    with pytest.raises(ConfigError, match="did you mean 'tier_high'"):
        _cq(["code_quality.tier_hihg=90"])
    with pytest.raises(ConfigError, match="unknown key 'hihg' of code_quality.tiers; did you mean 'high'"):
        _cq(["code_quality.tiers.hihg=90"])
    with pytest.raises(ConfigError, match="start the override with"):
        _cq(["code_quality.data_files.XML={max_chars: 10}"])
    _, cfg = _cq(["+code_quality.rules.data_files.XML={max_chars: 10}"])
    assert cfg.rules.data_files["XML"] == {"max_chars": 10}


def test_a_recipe_file_in_nested_form(tmp_path):
    from pipelines.recipe_schema import default_recipe_path

    text = default_recipe_path().read_text()
    nested = text.replace("    tier_high: 80                # top 20 % of a language", "    tiers: {high: 85}  # top 15 %\n    # ", 1)
    (tmp_path / "r.yaml").write_text(nested)
    _, cfg = _cq([], tmp_path / "r.yaml")
    assert cfg.tiers.high == 85.0 and cfg.tiers.low == 10.0
    clash = text.replace("    tier_high: 80", "    tiers: {high: 85}\n    tier_high: 80", 1)
    (tmp_path / "c.yaml").write_text(clash)
    with pytest.raises(ConfigError, match="the same key"):
        _cq([], tmp_path / "c.yaml")
    new_entry = text.replace("      TSV: {max_chars: 5000, max_lines: 100}", "      TSV: {max_chars: 5000, max_lines: 100}\n      XML: {max_chars: 9}", 1)
    (tmp_path / "n.yaml").write_text(new_entry)
    with pytest.raises(ConfigError, match="new: true"):
        _cq([], tmp_path / "n.yaml")
    (tmp_path / "n.yaml").write_text(new_entry.replace("XML: {max_chars: 9}", "XML: {max_chars: 9, new: true}"))
    assert _cq([], tmp_path / "n.yaml")[1].rules.data_files["XML"] == {"max_chars": 9}


def test_tier_weights_of_zero_for_every_scorer_are_refused():
    """Weights of 0 for the scorers that run gave every file a NaN score, so tier medium: no code/high
    up-sampling and no low-tier exclusion, without a word."""
    with pytest.raises(ConfigError, match="gives none of the scorers \\(structural\\) a weight above 0"):
        CodeQualityConfig.from_dict({"tier_weights": {"structural": 0, "learned": 0}})
    with pytest.raises(ConfigError, match="weight above 0"):  # the weight of a scorer that does not run does not count
        CodeQualityConfig.from_dict({"tier_weights": {"structural": 0, "learned": 1}})
    CodeQualityConfig.from_dict({"tier_weights": {"structural": 0.5, "learned": 0}})


def test_data_formats_are_medium_by_default_and_a_recipe_table_merges_over_the_default():
    from pipelines.recipe import load_recipe, stage_config

    for cfg in (CodeQualityConfig(), stage_config(load_recipe(None), "code_quality", CodeQualityConfig)):
        default, overrides = cfg.tiers.rules()
        assert {lang: (r.mode, r.low, r.high) for lang, r in overrides.items()} == {
            lang: ("absolute", 0.0, 11.0) for lang in ("JSON", "YAML", "TOML")}  # no score reaches 11: all medium
    cfg = CodeQualityConfig.from_dict({"tier_overrides": {"Go": {"mode": "absolute", "high": 7, "low": 3}}})
    assert set(cfg.tiers.overrides) == {"Go", "JSON", "YAML", "TOML"}  # merged by name over the default
    cfg = CodeQualityConfig.from_dict({"tier_overrides": {"JSON": None}})
    assert set(cfg.tiers.overrides) == {"YAML", "TOML"}  # null gives JSON percentile tiers again
