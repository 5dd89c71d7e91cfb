"""A user's recipe file and the command line merge tables by name over the shipped recipe (README,
"Your own recipe file"); a key twice in a YAML mapping, a typo inside a table entry and a group no
stage makes are refused; the hints name every owner of a bare key and the key a user writes."""

from __future__ import annotations

from pathlib import Path

import pytest

from curation.config import ConfigError
from pipelines.recipe import check_configs, load_recipe, stage_config
from pipelines.runner import enabled_stages
from pipelines.stages import load_stage


def _cfg(recipe: dict, stage: str):
    return stage_config(recipe, stage, load_stage(stage).config_cls)


def _recipe(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "mine.yaml"
    path.write_text(text)
    return path


def test_a_partial_table_in_a_file_merges_over_the_shipped_one(tmp_path: Path) -> None:
    shipped = load_recipe(None)
    mine = load_recipe(_recipe(tmp_path, """name: mine
stages:
  code_quality:
    data_files:
      JSON: {min_chars: 10}
      INI: {max_chars: 10, new: true}
  code_web:
    tier_weights: {content: 0.5}
  web_quality:
    scorer_languages: {heuristics: [en, zh]}
  mixture:
    max_epochs: {web/high: 2.0}
    repeat: {web/high: 3.0}
"""))
    files = _cfg(mine, "code_quality").rules.data_files
    assert files["JSON"] == {"min_chars": 10, "max_chars": 5000, "min_alpha_fraction": 0.5}
    assert files["INI"] == {"max_chars": 10}
    assert {k: v for k, v in files.items() if k not in ("JSON", "INI")} == {
        k: v for k, v in _cfg(shipped, "code_quality").rules.data_files.items() if k != "JSON"}
    assert _cfg(mine, "code_web").tier_weights == {"content": 0.5, "structural": 1.0}
    assert _cfg(mine, "web_quality").scorer_languages == {"heuristics": ["en", "zh"], "linear": ["en"]}
    mixture = _cfg(mine, "mixture")
    assert mixture.max_epochs == {"web/high": 2.0, "*": 4.0}
    assert mixture.repeat["web/high"] == 3.0 and mixture.repeat["web/low"] == 0.0  # what --dry-run prints
    assert mixture.to_dict()["repeat"] == mixture.policy().repeat


def test_null_removes_an_entry_and_a_phase(tmp_path: Path) -> None:
    mine = load_recipe(_recipe(tmp_path, """stages:
  code_quality:
    data_files: {CSV: null, JSON: {min_chars: null}}
  mixture:
    max_epochs: {web/high: 2.0}
    phases:
      pretrain_phase2: null
      pretrain_phase1: {mix: {social: null, web: 1.0}}
"""))
    files = _cfg(mine, "code_quality").rules.data_files
    assert "CSV" not in files and "TSV" in files and files["JSON"] == {"max_chars": 5000, "min_alpha_fraction": 0.5}
    specs = {s.name: s for s in _cfg(mine, "mixture").phase_specs()}
    assert "pretrain_phase2" not in specs and "midtrain_reasoning_32k" in specs
    assert specs["pretrain_phase1"].mix["web"] == 1.0 and "social" not in specs["pretrain_phase1"].mix
    assert specs["pretrain_phase1"].mix["code"] == 0.4  # the other kinds of the shipped phase stay


def test_an_override_merges_into_the_users_table(tmp_path: Path) -> None:
    path = _recipe(tmp_path, "stages:\n  mixture:\n    max_epochs: {'*': 2.0}\n  code_quality:\n    tier_low: 5\n")
    mine = load_recipe(path, ["code_quality.data_files.JSON.min_chars=10", "mixture.max_epochs={web/high: 3.0}",
                              "code_quality.tiers={high: 85}"])
    cq = _cfg(mine, "code_quality")
    assert cq.rules.data_files["JSON"] == {"min_chars": 10, "max_chars": 5000, "min_alpha_fraction": 0.5}
    assert set(cq.rules.data_files) == {"JSON", "YAML", "TOML", "CSV", "TSV"}
    assert (cq.tiers.high, cq.tiers.low) == (85.0, 5.0)
    assert _cfg(mine, "mixture").max_epochs == {"web/high": 3.0, "*": 2.0}


@pytest.mark.parametrize("text,key,lines", [
    ("stages:\n  minhash_dedup:\n    threshold: 0.7\n  minhash_dedup:\n    num_perm: 64\n", "minhash_dedup", (2, 4)),
    ("stages:\n  minhash_dedup:\n    threshold: 0.7\n    threshold: 0.9\n", "threshold", (3, 4)),
])
def test_a_key_twice_in_a_yaml_mapping_is_refused(tmp_path: Path, text: str, key: str, lines: tuple[int, int]) -> None:
    with pytest.raises(ConfigError, match=rf"key '{key}' is given twice, on line {lines[0]} and on line {lines[1]}"):
        load_recipe(_recipe(tmp_path, text))


@pytest.mark.parametrize("words,message", [
    (["edu_score.threshold=3", "edu_score.threshold=4"], "edu_score.threshold is given twice on the command line, as "
     "edu_score.threshold=3 and as edu_score.threshold=4: keep the one you mean"),
    (["code_quality.tier_high=85", "stages.code_quality.tiers.high=90"], "code_quality.tiers.high is given twice"),
    # inside mappings: the same key of two tables, and a key set alone and again in a mapping holding it
    (["mixture.repeat={web/high: 2}", "mixture.repeat={web/high: 3}"], "mixture.repeat.web/high is given twice"),
    (["code_quality.data_files.JSON.min_chars=10", "code_quality.data_files={JSON: {min_chars: 20}}"],
     "code_quality.rules.data_files.JSON.min_chars is given twice"),
    (["code_quality.data_files={JSON: {min_chars: 20}}", "code_quality.data_files=null"], "code_quality.rules.data_files is given twice"),
])
def test_a_key_twice_on_the_command_line_is_refused(tmp_path: Path, caplog, words: list[str], message: str) -> None:
    """The last one was taken without a word; a key twice in a recipe file is refused (above)."""
    from pipelines.cli import main

    repo = Path(__file__).resolve().parents[2]
    argv = ["run", str(repo / "pipelines/configs/glm45.yaml"), "--input", str(repo / "sample_data"), "--output", str(tmp_path / "r"),
            "--dry-run", "--quiet", "--profile", "cpu"]
    assert main([*argv, *words]) == 2
    assert message in caplog.text
    # a profile's setting is the recipe's, not a word of the line: the line may change it once; two tables merge by name
    assert main([*argv, "edu_score.fallback_scorer=default", "mixture.repeat={web/high: 2}", "mixture.repeat={web/low: 0}"]) == 0
    merged = load_recipe(None, ["mixture.repeat={web/high: 2}", "mixture.repeat={web/low: 0}"])["stages"]["mixture"]["repeat"]
    assert merged["web/high"] == 2 and merged["web/low"] == 0
    same = load_recipe(None, ["ingest.tokenizer=whitespace", "ingest.tokenizer=whitespace", "mixture.repeat={web/high: 2}",
                              "mixture.repeat.web/high=2"])  # the same value again leaves no doubt
    assert same["stages"]["ingest"]["tokenizer"] == "whitespace" and same["stages"]["mixture"]["repeat"]["web/high"] == 2


def test_a_yaml_merge_key_may_be_given_again(tmp_path: Path) -> None:
    recipe = load_recipe(_recipe(tmp_path, "stages:\n  code_quality: &cq\n    tier_high: 85\n  code_web:\n    <<: *cq\n"
                                           "    tier_high: 70\n"))
    assert _cfg(recipe, "code_web").tier_high == 70


@pytest.mark.parametrize("where,text,overrides,message", [
    ("file", "stages:\n  code_quality:\n    data_files:\n      JSON: {min_char: 10}\n", [],
     "data_files.JSON has no key 'min_char'; did you mean 'min_chars'"),
    ("override", None, ["code_quality.data_files.JSON.min_char=10"], "data_files.JSON has no key 'min_char'; did you mean 'min_chars'"),
    ("file", "stages:\n  code_quality:\n    tier_overrides:\n      Python: {new: true, mod: absolute, high: 7.5, low: 4.0}\n", [],
     "overrides.Python has no key 'mod'; did you mean 'mode'"),
    ("file", "stages:\n  mixture:\n    repeat: {web/hgh: 2.0}\n", [], "group 'web/hgh', which no stage of this recipe makes; did you mean web/high"),
    ("override", None, ["+mixture.max_epochs.code/hihg=2"], "group 'code/hihg'.*did you mean code/high"),
    # a name of another kind's groups: social and books are not graded, their one group is <kind>/all
    ("override", None, ["mixture.repeat={social/high: 5.0, books/all: 2.0}"],
     r"group 'social/high', which no stage of this recipe makes; the groups named high are code/high, code_web/high, .*web_edu/high "
     r"\(a group is <kind>/<name>; social documents form social/all;"),
    ("override", None, ["+mixture.repeat.web/meduim=0"], "group 'web/meduim'.*did you mean web/medium"),
    ("override", None, ["+mixture.repeat.math_science/medium_high=2"], "group 'math_science/medium_high'.*the groups named medium_high are web/medium_high"),
    ("override", None, ["+mixture.max_epochs.books/high=2"], "group 'books/high'"),
    ("override", None, ["+mixture.repeat.long_docs/high=2"], "group 'long_docs/high'.*long_docs documents form long_docs/all;"),
])
def test_a_typo_inside_a_table_is_refused(tmp_path: Path, where: str, text: str | None, overrides: list[str], message: str) -> None:
    recipe = load_recipe(_recipe(tmp_path, text) if text else None, overrides)
    with pytest.raises(ConfigError, match=message):
        check_configs(recipe, enabled_stages(recipe))


def test_groups_of_the_recipes_own_names_pass(tmp_path: Path) -> None:
    recipe = load_recipe(_recipe(tmp_path, "stages:\n  edu_score:\n    band_names: [a, b, c]\n  mixture:\n"
                                           "    repeat: {math_science/c: 3.0, 'code_web/*': 1.0}\n    web_edu_bands: [c]\n"))
    check_configs(recipe, enabled_stages(recipe))
    check_configs(load_recipe(None, ["+mixture.repeat.web/hgh=2"]), ["mixture"])  # one stage: its input's groups decide
    # every kind's own names, the groups the mixture builds and globs of kinds pass
    recipe = load_recipe(None, ["mixture.repeat={social/all: 2.0, papers/high: 2.0, web_edu/medium: 1.0, code_web/low: 0.0, "
                                "code/repo_level: 1.0, code/no_repo: 0.0, issues_prs_commits/threads: 1.0, long_docs/all: 1.0, "
                                "'*/high': 2.0, 'code*/medium': 1.0}"])
    check_configs(recipe, enabled_stages(recipe))


def test_hints_name_every_owner_and_the_key_a_user_writes(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="threshold is a key of stages edu_score and minhash_dedup: write "
                                          "edu_score.threshold or minhash_dedup.threshold"):
        load_recipe(None, ["threshold=0.7"])
    with pytest.raises(ConfigError, match="exact_dedup.keep or minhash_dedup.keep or semdedup.keep"):
        load_recipe(None, ["keep=longest"])
    with pytest.raises(ConfigError, match="enabled is a key of every stage"):
        load_recipe(None, ["enabled=false"])
    with pytest.raises(ConfigError, match=r"set tier_high=<value in range> \(or tiers.high\)"):
        _cfg(load_recipe(None, ["code_quality.tier_high=120"]), "code_quality")
    with pytest.raises(ConfigError) as err:
        load_recipe(_recipe(tmp_path, "name: x\ncommon: 1\n"))
    assert "valid: cluster, name, seed, stages" in str(err.value) and "recipe_path" not in str(err.value)
    with pytest.raises(ConfigError, match="did you mean stage 'minhash_dedup'"):
        load_recipe(_recipe(tmp_path, "minhash_dedupe:\n  threshold: 0.7\n"))


def test_a_language_new_to_tier_overrides_needs_new_true(tmp_path: Path) -> None:
    """The default table holds the data formats; a misspelt language is refused, a new one says so."""
    with pytest.raises(ConfigError, match="overrides has no entry 'Pyhton'.*new: true"):
        load_recipe(_recipe(tmp_path, "stages:\n  code_quality:\n    tier_overrides:\n      Pyhton: {mode: absolute, high: 7.5, low: 4.0}\n"))
    recipe = load_recipe(_recipe(tmp_path, "stages:\n  code_quality:\n    tier_overrides:\n      Python: {new: true, mode: absolute, high: 7.5, low: 4.0}\n"))
    check_configs(recipe, enabled_stages(recipe))
    assert set(recipe["stages"]["code_quality"]["tiers"]["overrides"]) >= {"Python"}


def test_a_rule_entry_replaces_the_default_one_and_levels_replace_the_default_partition(tmp_path: Path) -> None:
    """A tier_overrides entry is one rule: JSON: {mode: percentile} takes the percentile cuts, not the
    default entry's absolute ones (it put 88 % of real JSON high). Levels are one partition of the
    buckets: three levels of a recipe's own are the levels, and the default repeat groups of the
    levels they leave out (web/medium_high) are no typo of the recipe's."""
    recipe = load_recipe(_recipe(tmp_path, (
        "stages:\n  code_quality:\n    tier_overrides:\n      JSON: {mode: percentile}\n"
        "  web_quality:\n    levels: {high: [15, 19], medium: [5, 14], low: [0, 4]}\n")))
    check_configs(recipe, enabled_stages(recipe))
    overrides = _cfg(recipe, "code_quality").tiers.overrides
    assert overrides["JSON"] == {"mode": "percentile"} and overrides["TOML"]["mode"] == "absolute"
    assert _cfg(recipe, "web_quality").levels == {"high": [15, 19], "medium": [5, 14], "low": [0, 4]}
    # a group the recipe itself writes is still checked, and the message says how to remove one
    recipe = load_recipe(_recipe(tmp_path, (
        "stages:\n  web_quality:\n    levels: {high: [15, 19], medium: [5, 14], low: [0, 4]}\n"
        "  mixture:\n    repeat: {web/medium_high: 2.0}\n")))
    with pytest.raises(ConfigError, match=r"web/medium_high.*removes it"):
        check_configs(recipe, enabled_stages(recipe))


def test_an_override_replaces_a_rule_entry_and_a_levels_table_whole() -> None:
    recipe = load_recipe(None, ["code_quality.tier_overrides={JSON: {mode: percentile}}",
                                "web_quality.levels={high: [19, 19], low: [0, 18]}"])
    assert _cfg(recipe, "code_quality").tiers.overrides["JSON"] == {"mode": "percentile"}
    assert _cfg(recipe, "web_quality").levels == {"high": [19, 19], "low": [0, 18]}


def test_a_section_override_with_a_flat_key_merges_into_its_nested_form() -> None:
    """``code_quality={tier_high: 85}`` sets tiers.high (the section holds the shipped tier_high nested):
    it was refused as the same key given twice."""
    assert _cfg(load_recipe(None, ["code_quality={tier_high: 85}"]), "code_quality").tiers.high == 85.0
