"""Names in the recipe are checked: a source or kind that does not exist fails before anything
runs (with the nearest name), a repeat key naming no group of the data is warned about, and a
group that replays nothing is not called a concentration."""

from __future__ import annotations

import json

import pytest

from pipelines.cli import main as curate


@pytest.mark.parametrize(("command", "override", "words"), [
    ("mixture", "phases.pretrain_phase1.mix.wbe=1", "mixture.phases.pretrain_phase1.mix has unknown kinds ['wbe'] (did you mean 'web'?)"),
    ("mixture", "repeat={wbe/high: 2}", "mixture.repeat has unknown kinds ['wbe']"),
    ("mixture", "language_kinds=[web, webedu]", "mixture.language_kinds has unknown kinds ['webedu'] (did you mean 'web_edu'?)"),
    ("mixture", "fim_sources=[cod]", "mixture.fim_sources has unknown sources ['cod'] (did you mean 'code'?)"),
    ("minhash-dedup", "sources=[wbe]", "minhash_dedup.sources has unknown sources ['wbe']"),
    ("minhash-dedup", "source_shingle={cdoe: 'word:5'}", "minhash_dedup.source_shingle has unknown sources ['cdoe'] (did you mean 'code'?)"),
    ("web-quality", "sources=[web, scoial]", "web_quality.sources has unknown sources ['scoial'] (did you mean 'social'?)"),
    ("code-web", "sources=[wbe]", "code_web.sources has unknown sources ['wbe']"),
    # every phase key is typed and named: a wrong value is refused before anything runs, not taken or crashed on
    ("mixture", "phases.pretrain_phase1.fim=maybe", "mixture.phases.pretrain_phase1.fim = 'maybe' is not a valid bool (give true or false)"),
    ("mixture", "phases.pretrain_phase1.tokens=abc", "mixture.phases.pretrain_phase1.tokens = 'abc' is not a valid float"),
    ("mixture", "phases.pretrain_phase1.seq_length=4096.5", "mixture.phases.pretrain_phase1.seq_length = 4096.5 is not a valid int (give a whole number)"),
    ("mixture", "phases.pretrain_phase1.mix.web=high", "mixture.phases.pretrain_phase1.mix.web = 'high' is not a valid float"),
    ("mixture", "phases.pretrain_phase1.sequence_length=8192", "unknown key 'sequence_length' in mixture.phases.pretrain_phase1 (did you mean 'seq_length'?)"),
    ("mixture", "+phases.m8={builder: documents, tokens: 2e11, mix: {math_science: 1.0}}", "mixture.phases.m8 is a new phase: say whether"),
    ("mixture", "+phases.m8={stage: midtrain, tokens: 2e11, mix: {}}", "mixture.phases.m8.mix gives no kind a factor above 0"),
    ("mixture", "phases=null", "mixture.phases is null"),
    ("mixture", 'fim_sentinels.prefix=""', "mixture.fim_sentinels.prefix = '': give the tokenizer's FIM token"),
    ("mixture", "fim_sentinels.prefix=3", "mixture.fim_sentinels.prefix = 3: give the tokenizer's FIM token as text"),
    ("mixture", 'repo_header="<|repo_name|>{repository}"', "mixture.repo_header = '<|repo_name|>{repository}': its only placeholder is {repo}"),
    ("mixture", "top_group=wbe/high", "mixture.top_group has unknown kinds ['wbe'] (did you mean 'web'?)"),
    ("mixture", "repeat.web/high=abc", "mixture.repeat.web/high = 'abc' is not a number"),
])
def test_an_unknown_source_or_kind_fails_in_the_dry_run(finished_run, tmp_path, caplog, command, override, words):
    stage_input = {"mixture": "75_forge_filter", "minhash-dedup": "10_exact_dedup", "web-quality": "30_semdedup",
                   "code-web": "50_code_quality"}[command]
    rc = curate([command, "--input", str(finished_run / stage_input), "--output", str(tmp_path / "out"), "--dry-run", "--quiet", override])
    assert rc == 2 and words in caplog.text


def test_a_repeat_key_naming_no_group_is_warned_and_no_empty_group_is_a_concentration(finished_run, tmp_path):
    out = tmp_path / "mixture"
    assert curate(["mixture", "--input", str(finished_run / "75_forge_filter"), "--output", str(out), "--scheduler", "synchronous",
                   "--quiet", "--profile", "cpu", "+repeat.web/hihg=2", "+max_epochs.web/hgh=2"]) == 0
    manifest = json.loads((out / "manifests" / "midtrain_long_context_128k.json").read_text())
    checks = {(w["check"], w.get("group")) for w in manifest["warnings"]}
    assert ("repeat_key", "web/hihg") in checks
    assert ("max_epochs_key", "web/hgh") in checks  # a cap naming no group was taken without a word
    replayed = {g["name"]: g["replay_tokens"] for g in manifest["groups"]}
    empty = [g for g, t in replayed.items() if t == 0]
    assert empty  # the sample's long documents cannot fill a fractional epoch of 128K sequences
    assert not [w for w in manifest["warnings"] if w["check"] == "concentration" and w["group"] in empty]
    assert any(w["check"] == "replay" for w in manifest["warnings"])


def test_names_this_data_lacks_are_warned_and_pretraining_checks_stay_with_pretraining(finished_run, tmp_path):
    """A top group, edu band or language the data does not have is a typo that would switch a check
    or a factor off silently (a language code that is no code is refused before anything runs:
    tests/pipelines/test_plan_checks.py); the top level's epochs are a pre-training figure, not a
    mid-training one."""
    out = tmp_path / "mixture"
    assert curate(["mixture", "--input", str(finished_run / "75_forge_filter"), "--output", str(out), "--scheduler", "synchronous",
                   "--quiet", "--profile", "cpu", "top_group=web/hgh", "web_edu_bands=[hi]", "language_repeat={sw: 2}"]) == 0
    warnings = json.loads((out / "manifests" / "pretrain_phase1.json").read_text())["warnings"]
    said = " | ".join(w["message"] for w in warnings)
    assert "mixture.top_group has 'web/hgh', which names no group of this data; web's groups are web/high," in said
    assert "mixture.web_edu_bands has 'hi', which names no edu band of this data; its edu bands are high" in said
    assert "mixture.language_repeat has 'sw', which names no language of this data; its languages are " in said and "en" in said
    # an over-capped top group warns in the pre-training manifests only
    out2 = tmp_path / "capped"
    assert curate(["mixture", "--input", str(finished_run / "75_forge_filter"), "--output", str(out2), "--scheduler", "synchronous",
                   "--quiet", "--profile", "cpu", 'max_epochs={"*": 4.0, "web/high": 2.0}']) == 0
    for phase in ("pretrain_phase1", "pretrain_phase2", "midtrain_repo_code_32k", "midtrain_long_context_128k"):
        checks = [w["check"] for w in json.loads((out2 / "manifests" / f"{phase}.json").read_text())["warnings"]]
        assert ("top_level_epochs" in checks) is phase.startswith("pretrain"), phase


def test_a_repeat_key_naming_no_group_of_the_input_is_said_before_any_work(tmp_path, caplog):
    """A single `curate mixture` (or its --dry-run) reads a folder whose groups it can list before it
    plans: the typo was said only at the end of the real run, never by the dry run."""
    from tests.helpers import docs_frame, make_stage_dir

    rows = [{"text": f"page {i} " * 20, "source": "web", "quality_level": ["high", "medium", "low"][i % 3]} for i in range(6)]
    rows += [{"text": f"def f{i}(): pass", "source": "code", "code_tier": "high"} for i in range(3)]
    inp = make_stage_dir(tmp_path / "in", docs_frame(rows))
    argv = ["mixture", "--input", str(inp), "--output", str(tmp_path / "out"), "--dry-run", "--quiet", "--profile", "cpu"]
    assert curate([*argv, "repeat={web/hgh: 2.0, code/hihg: 1.0, web/high: 3.0}", "max_epochs={web/hgh: 2.0}", "top_group=web/hig"]) == 0
    said = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    web = "web's groups are web/high, web/low, web/medium"
    assert f"mixture: mixture.repeat has 'web/hgh', which names no group of this data; {web}" in said
    assert "mixture: mixture.repeat has 'code/hihg', which names no group of this data; code's groups are code/high, code/no_repo, code/repo_level" in said
    assert f"mixture: mixture.max_epochs has 'web/hgh', which names no group of this data; {web}" in said
    assert f"mixture: mixture.top_group has 'web/hig', which names no group of this data; {web}" in said
    assert not [m for m in said if "'web/high'" in m]
    caplog.clear()
    assert curate([*argv, "repeat={web/high: 3.0, 'code/*': 1.0}"]) == 0  # names of the data, and a glob: nothing to say
    assert not [r for r in caplog.records if "names no group" in r.getMessage()]
