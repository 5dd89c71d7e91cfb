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
])
def test_an_unknown_source_or_kind_fails_in_the_dry_run(finished_run, tmp_path, caplog, command, override, words):
    stage_input = {"mixture": "75_forge_filter", "minhash-dedup": "10_exact_dedup", "web-quality": "30_semdedup",
                   "code-web": "50_code_quality"}[command]
    rc = curate([command, "--input", str(finished_run / stage_input), "--output", str(tmp_path / "out"), "--dry-run", "--quiet", override])
    assert rc == 2 and words in caplog.text


def test_a_repeat_key_naming_no_group_is_warned_and_no_empty_group_is_a_concentration(finished_run, tmp_path):
    out = tmp_path / "mixture"
    assert curate(["mixture", "--input", str(finished_run / "75_forge_filter"), "--output", str(out), "--scheduler", "synchronous",
                   "--quiet", "--profile", "cpu", "+repeat.web/hihg=2"]) == 0
    manifest = json.loads((out / "manifests" / "midtrain_long_context_128k.json").read_text())
    checks = {(w["check"], w.get("group")) for w in manifest["warnings"]}
    assert ("repeat_key", "web/hihg") in checks
    replayed = {g["name"]: g["replay_tokens"] for g in manifest["groups"]}
    empty = [g for g, t in replayed.items() if t == 0]
    assert empty  # the sample's long documents cannot fill a fractional epoch of 128K sequences
    assert not [w for w in manifest["warnings"] if w["check"] == "concentration" and w["group"] in empty]
    assert any(w["check"] == "replay" for w in manifest["warnings"])
