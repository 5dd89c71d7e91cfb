"""``max_epochs`` of 0 for a group: its documents are ``epoch_cap`` in the ledger, with the cap, and
the manifests and the log warn (``zero_cap``), not ``zero_weight`` nor ``earlier_caps``."""

import json
import logging

import pandas as pd

from pipelines.cli import main as curate


def test_a_cap_of_zero_is_the_ledgers_reason_and_a_warning(finished_run, tmp_path, caplog):
    out = tmp_path / "mix"
    with caplog.at_level(logging.WARNING):
        assert curate(["mixture", "--input", str(finished_run / "75_forge_filter"), "--output", str(out), "--scheduler",
                       "synchronous", "--quiet", "--profile", "cpu", 'max_epochs={"web/high": 0}']) == 0
    ledger = pd.read_parquet(out / "ledger")
    capped = ledger[ledger["reason"] == "epoch_cap"]
    assert len(capped) > 0 and "zero_weight" not in set(ledger["reason"])
    details = [json.loads(d) for d in capped["detail"]]
    assert all(d["group"] == "web/high" and d["cap"] == 0 and "max_epochs caps web/high at 0 epochs" in d["rule"] for d in details)
    for phase in ("pretrain_phase1", "pretrain_phase2"):
        warnings = json.loads((out / "manifests" / f"{phase}.json").read_text())["warnings"]
        zero = [w for w in warnings if w["check"] == "zero_cap"]
        assert len(zero) == 1 and zero[0]["groups"] == ["web/high"]
        assert not [w for w in warnings if w["check"] == "earlier_caps" and "web/high" in w["groups"]]
    assert "mixture.max_epochs caps 1 group(s) of the phases' mixes at 0 epochs (web/high)" in caplog.text
