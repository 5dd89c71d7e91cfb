"""A ``mixture.language_repeat`` entry whose language has no document of a kind in
``mixture.language_kinds`` changes nothing: the manifests and stats.json warn of it, naming the
language, the kinds that hold its documents and the setting to change; with that setting changed,
the warning goes."""

from __future__ import annotations

import json

from tests.helpers import docs_frame, make_stage_dir, run_one

FAST = [
    "mixture.tokenizer=whitespace",
    "mixture.phases.midtrain_reasoning_32k=null",
    "mixture.phases.midtrain_long_context_128k=null",
    "mixture.phases.midtrain_repo_code_32k=null",
]


def _warnings(out):
    manifest = json.loads((out / "manifests" / "pretrain_phase1.json").read_text())["warnings"]
    stats = json.loads((out / "stats.json").read_text())["extra"]["warnings"]
    return [w for w in manifest if w["check"] == "language_kinds"], [w for w in stats if w["check"] == "language_kinds"]


def test_a_language_with_documents_only_outside_language_kinds_is_warned(tmp_path):
    rows = [
        {"text": f"page {i} " + "word " * 40, "source": "web", "quality_level": "high", "lang": "en"} for i in range(12)
    ]
    rows += [
        {"text": f"snippet {i} " + "字 " * 30, "source": "code_web", "quality_level": "high", "lang": "zh"}
        for i in range(5)
    ]
    df = docs_frame(rows)
    df["lang"] = df["lang"].astype(object)
    stage_in = make_stage_dir(tmp_path / "in", df)
    run_one("mixture", stage_in, tmp_path / "mix", [*FAST, "mixture.language_repeat={zh: 2.0, en: 1.5}"])
    manifest, stats = _warnings(tmp_path / "mix")
    assert manifest == stats and [w["value"] for w in manifest] == ["zh"]  # en has web documents: its factor applies
    message = manifest[0]["message"]
    assert message.startswith("mixture.language_repeat gives zh a factor of 2.0, which changes nothing")
    assert "mixture.language_kinds (web, web_edu)" in message and "(they are code_web: 5 documents)" in message
    assert "mixture.language_kinds=[web, web_edu, code_web]" in message
    run_one(
        "mixture",
        stage_in,
        tmp_path / "mix2",
        [*FAST, "mixture.language_repeat={zh: 2.0, en: 1.5}", "mixture.language_kinds=[web, web_edu, code_web]"],
    )
    assert _warnings(tmp_path / "mix2") == ([], [])
