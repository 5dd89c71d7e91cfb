"""Documents of a kind that no phase mixes (a phase dropped, or a kind taken out of a phase's mix)
enter no shard: the manifests and stats.json warn of each such kind, with its documents, tokens
and the setting that gives it a phase, as many as the ledger's ``no_phase`` rows."""

from __future__ import annotations

import json
import logging

import pandas as pd

from tests.helpers import docs_frame, make_stage_dir, run_one


def test_a_kind_no_phase_mixes_is_warned_with_its_count_and_the_setting(tmp_path, caplog):
    rows = [{"text": f"page {i} " + "word " * 40, "source": "web", "quality_level": "high"} for i in range(12)]
    rows += [{"text": f"trace {i} " + "step " * 30, "source": "reasoning"} for i in range(5)]
    rows += [{"text": f"episode {i} " + "act " * 20, "source": "agent"} for i in range(3)]
    stage_in = make_stage_dir(tmp_path / "in", docs_frame(rows))
    out = tmp_path / "mix"
    with caplog.at_level(logging.WARNING):
        run_one(
            "mixture",
            stage_in,
            out,
            [
                "mixture.tokenizer=whitespace",
                "mixture.phases.midtrain_reasoning_32k=null",
                "mixture.phases.midtrain_long_context_128k.mix.agent=null",
            ],
        )
    ledger = pd.read_parquet(out / "ledger")
    assert (ledger["reason"] == "no_phase").sum() == 8
    warnings = json.loads((out / "manifests" / "pretrain_phase1.json").read_text())["warnings"]
    said = {w["group"]: w for w in warnings if w["check"] == "no_phase"}
    assert sorted(said) == ["agent", "reasoning"]
    assert (said["reasoning"]["documents"], said["agent"]["documents"]) == (5, 3)
    assert said["reasoning"]["tokens"] == 5 * 32
    assert said["reasoning"]["message"].startswith("5 document(s) of kind reasoning (160 tokens) enter no phase")
    assert "keep phase midtrain_reasoning_32k (the recipe drops it" in said["reasoning"]["message"]
    assert "mixture.phases.midtrain_long_context_128k.mix.agent=1.0, as shipped" in said["agent"]["message"]
    stats = json.loads((out / "stats.json").read_text())
    assert "3 document(s) of kind agent" in json.dumps(stats) and "3 document(s) of kind agent" in caplog.text


def test_every_kind_in_a_phase_is_no_warning(tmp_path):
    rows = [{"text": f"page {i} " + "word " * 40, "source": "web", "quality_level": "high"} for i in range(12)]
    rows += [{"text": f"trace {i} " + "step " * 30, "source": "reasoning"} for i in range(5)]
    out = tmp_path / "mix"
    run_one("mixture", make_stage_dir(tmp_path / "in", docs_frame(rows)), out, ["mixture.tokenizer=whitespace"])
    assert not [
        w
        for w in json.loads((out / "manifests" / "pretrain_phase1.json").read_text())["warnings"]
        if w["check"] == "no_phase"
    ]
    assert "no_phase" not in set(pd.read_parquet(out / "ledger")["reason"])
