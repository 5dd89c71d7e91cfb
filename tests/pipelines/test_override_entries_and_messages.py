"""A mapping override is checked as the same table in a recipe file (a new entry needs 'new: true'
or a '+'); CURATE_WORKER_WAIT_S is checked by a --dry-run with --scheduler; a key given twice on
one line is said by columns; a keep column that only a later stage makes is said so."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
import yaml

from curation.config import ConfigError
from curation.yaml_bounds import load_yaml
from pipelines.cli import main as curate
from pipelines.recipe import check_configs, load_recipe
from pipelines.stages import enabled_stages
from tests.helpers import docs_frame, make_stage_dir

REPO = Path(__file__).resolve().parents[2]
RECIPE = str(REPO / "pipelines" / "configs" / "glm45.yaml")
PHASE = "{stage: pretrain, tokens: 1000, mix: {web: 1.0}}"


@pytest.mark.parametrize("override,entry", [
    ("code_quality.data_files={JSNO: {min_chars: 10}}", "'JSNO'; did you mean 'JSON'?"),
    ("code_quality.tier_overrides={Pyhton: {mode: absolute, high: 9, low: 5}}", "'Pyhton'"),
    (f"mixture.phases={{pretrain_phase3: {PHASE}}}", "'pretrain_phase3'"),
    ("code_quality={tier_overrides: {Pyhton: {mode: percentile}}}", "'Pyhton'"),
])
def test_a_new_entry_in_a_mapping_override_needs_new_true_as_in_a_file(override, entry):
    with pytest.raises(ConfigError, match=r"has no entry " + entry.replace("?", r"\?") + r".*give it 'new: true'"):
        load_recipe(None, [override])


def test_a_mapping_override_takes_known_entries_new_true_and_plus(tmp_path):
    assert load_recipe(None, ["code_quality.data_files={JSON: {min_chars: 10}}"])["stages"]["code_quality"]["rules"][
        "data_files"]["JSON"]["min_chars"] == 10
    flagged = load_recipe(None, [f"mixture.phases={{pretrain_phase3: {{new: true, {PHASE[1:]}}}"])
    assert flagged["stages"]["mixture"]["phases"]["pretrain_phase3"] == {"stage": "pretrain", "tokens": 1000, "mix": {"web": 1.0}}
    plus = load_recipe(None, [f"+mixture.phases={{pretrain_phase3: {PHASE}}}", "mixture.phases={pretrain_phase3: {seq_length: 8192}}"])
    assert plus["stages"]["mixture"]["phases"]["pretrain_phase3"]["seq_length"] == 8192  # an entry a '+' added is known after it
    with pytest.raises(ConfigError, match=r"mixture.phases.pretrain_phase3.tokens is given twice on the command line"):
        load_recipe(None, [f"+mixture.phases={{pretrain_phase3: {PHASE}}}", "mixture.phases={pretrain_phase3: {tokens: 5}}"])
    mine = tmp_path / "mine.yaml"  # an entry the user's file added (new: true) is known to its overrides
    mine.write_text(f"name: mine\nstages:\n  mixture:\n    phases:\n      extra: {{new: true, {PHASE[1:]}\n")
    assert load_recipe(mine, ["mixture.phases={extra: {tokens: 7}}"])["stages"]["mixture"]["phases"]["extra"]["tokens"] == 7


def test_a_bad_worker_wait_stops_a_dry_run_with_a_scheduler(tmp_path, monkeypatch, caplog):
    inp = make_stage_dir(tmp_path / "in", docs_frame([{"text": "one page"}, {"text": "two page"}]))
    common = ["exact-dedup", "--input", str(inp), "--output", str(tmp_path / "out"), "--quiet", "--dry-run"]
    monkeypatch.setenv("CURATE_WORKER_WAIT_S", "abc")
    assert curate([*common, "--scheduler", "tcp://127.0.0.1:1"]) == 2  # as the run itself: refused, nothing connects
    assert "CURATE_WORKER_WAIT_S = 'abc': give a whole number of seconds" in caplog.text
    assert curate([*common, "--scheduler", "synchronous"]) == 0  # not read without a scheduler elsewhere
    monkeypatch.setenv("CURATE_WORKER_WAIT_S", "5")
    assert curate([*common, "--scheduler", "tcp://127.0.0.1:1"]) == 0  # a dry run does not connect


@pytest.mark.parametrize("text,said", [
    ("{x: 1, x: 2}", "key 'x' is given twice, at columns 2 and 8: keep one"),
    ("a: 1\nb: {x: 1, x: 2}\n", "key 'x' is given twice, at columns 5 and 11 of line 2: keep one"),
    ("a: 1\nb: 2\na: 3\n", "key 'a' is given twice, on line 1 and on line 3: keep one"),
])
def test_a_key_given_twice_says_where(text, said):
    with pytest.raises(yaml.YAMLError) as exc:
        load_yaml(text, "x")
    assert exc.value.problem.startswith(said)


def test_a_key_given_twice_in_a_one_line_override_names_no_line():
    with pytest.raises(ConfigError) as exc:
        load_recipe(None, ["code_quality.data_files={JSON: {min_chars: 10, min_chars: 5}}"])
    assert "key 'min_chars' is given twice, at columns 9 and 24" in str(exc.value)
    assert "line" not in str(exc.value)


@pytest.mark.parametrize("column,said", [
    ("quality_score_heuristics", "(no stage before minhash_dedup produces it; web_quality makes it, but runs after minhash_dedup)"),
    ("quality_bucket", "(no stage before minhash_dedup produces it; web_quality makes it, but runs after minhash_dedup)"),
    ("quality_score_nope", "(no stage produces it)"),
])
def test_a_keep_column_a_later_stage_makes_is_said_so(column, said):
    from pipelines.plan_checks import check_plan

    recipe = load_recipe(None, [f"minhash_dedup.keep=highest:{column}"])
    names = enabled_stages(recipe)
    check_configs(recipe, names)
    with pytest.raises(ConfigError) as exc:
        check_plan(recipe, names, warn=False)
    assert str(exc.value).endswith(said)
    assert "web_quality" in names and names.index("web_quality") > names.index("minhash_dedup")


def test_the_stage_order_of_a_file_is_not_a_warning(tmp_path, caplog):
    path = tmp_path / "mine.yaml"
    path.write_text("name: mine\nstages:\n  mixture:\n    seed: 7\n  code_quality:\n    tier_high: 85\n")
    out = tmp_path / "run"
    with caplog.at_level(logging.INFO, logger="curate"):
        assert curate(["run", str(path), "--input", str(REPO / "sample_data"), "--output", str(out), "--dry-run",
                       "--scheduler", "synchronous", "--profile", "cpu"]) == 0
    order = [r for r in caplog.records if "stages: section" in r.getMessage()]
    assert [r.levelno for r in order] == [logging.INFO]


@pytest.mark.parametrize("text", ["semdedup.eps_by_language={zh:0.3}", "mixture.repeat={web/high:2}"])
def test_a_flow_mapping_without_the_space_after_a_colon_is_refused(text):
    # YAML reads {zh:0.3} as the key 'zh:0.3' with no value: the setting would be lost without a word
    with pytest.raises(ConfigError, match=r"reads as a key with no value: YAML needs a space after the colon"):
        load_recipe(RECIPE, [text])


def test_a_recipe_file_flow_mapping_without_the_space_is_said_by_line(tmp_path):
    with pytest.raises(yaml.YAMLError, match=r"'zh:0.3' reads as a key with no value.*\{zh: 0.3\}") as info:
        load_yaml("semdedup:\n  eps_by_language: {zh:0.3}\n", "x")
    assert info.value.problem_mark.line == 1
    assert load_yaml("a: {zh: 0.3, 'b:c': null, http://x: 1}\n", "x") == {"a": {"zh": 0.3, "b:c": None, "http://x": 1}}
