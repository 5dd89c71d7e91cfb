"""The sample run: ingest → web_quality → mixture on sample_data/web (ground truth in meta.kind)."""

from __future__ import annotations

import json
from pathlib import Path

import dask
import pandas as pd
import pytest

from pipelines.recipe import load_recipe
from pipelines.runner import run_stage
from tests.helpers import read_parts

ROOT = Path(__file__).resolve().parents[2]
WEB = ROOT / "sample_data" / "web"

pytestmark = [pytest.mark.slow, pytest.mark.skipif(not WEB.exists(), reason="sample_data/web is missing")]


def kinds(folder: Path) -> pd.Series:
    df = read_parts(folder)
    return pd.Series([json.loads(m).get("kind") if isinstance(m, str) else None for m in df["meta"]], index=df["doc_id"])


def test_sample_web_is_bucketed_and_the_top_level_gets_over_3_2_epochs(tmp_path: Path) -> None:
    rec = load_recipe(None, ["web_quality.enabled=true", "mixture.enabled=true"])
    with dask.config.set({"scheduler": "synchronous", "dataframe.convert-string": False}):
        run_stage("ingest", rec, stage_dir=tmp_path / "00_ingest", inputs=[WEB], run_dir=tmp_path, quiet=True)
        wq = run_stage("web_quality", rec, stage_dir=tmp_path / "40_web_quality", input_dir=tmp_path / "00_ingest",
                       run_dir=tmp_path, quiet=True)
        run_stage("mixture", rec, stage_dir=tmp_path / "80_mixture", input_dir=tmp_path / "40_web_quality",
                  run_dir=tmp_path, quiet=True)
    kind = kinds(tmp_path / "00_ingest" / "docs")
    assert read_parts(tmp_path / "40_web_quality" / "ledger").empty  # web_quality annotates; the mixture excludes
    ledger = read_parts(tmp_path / "80_mixture" / "ledger")
    kept = read_parts(tmp_path / "80_mixture" / "docs")
    # spam and boilerplate pages are all in the excluded level; no spam reaches the top two levels
    dropped = set(ledger.loc[ledger["reason"] == "low_quality", "doc_id"])
    assert set(kind[kind.isin(["spam", "boilerplate"])].index) <= dropped
    top = kept[kept["quality_level"].isin(["high", "medium_high"])]
    assert not kind.loc[top["doc_id"]].isin(["spam", "boilerplate", "template"]).any()
    assert set(kept["quality_bucket"].dropna().astype(int)) <= set(range(7, 20))
    assert wq.stats["extra"]["levels"]["high"]["documents"] > 0
    # the plan (15 : 7 budgets at the auto scale) gives the top level more than 3.2 epochs over pre-training
    epochs = 0.0
    for phase in ("pretrain_phase1", "pretrain_phase2"):
        manifest = json.loads((tmp_path / "80_mixture" / "manifests" / f"{phase}.json").read_text())
        epochs += sum(g["epochs"] for g in manifest["groups"] if g["name"] == "web/high")
    assert epochs > 3.2
