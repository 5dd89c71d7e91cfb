"""``curate train-classifier edu``: from a labels file (hashed and head), with a separate evaluation file."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from classifiers.edu import HashedEduScorer, get_edu_scorer
from classifiers.embedding_head import EmbeddingHeadScorer
from pipelines.cli import main
from tests.classifiers.test_edu_scorer import OTHER, SCIENCE


def labels(tmp_path, n_copies: int = 6) -> tuple[str, str]:
    rows = []
    for k in range(n_copies):
        rows += [{"doc_id": f"s{k}-{i}", "text": f"{t} (variant {k})", "score": 4.0, "positive": True, "group": f"s{i}"}
                 for i, t in enumerate(SCIENCE)]
        rows += [{"doc_id": f"o{k}-{i}", "text": f"{t} (variant {k})", "score": 0.5, "positive": False, "group": f"o{i}"}
                 for i, t in enumerate(OTHER)]
    train, ev = tmp_path / "train.parquet", tmp_path / "eval.jsonl"
    pd.DataFrame(rows).to_parquet(train)
    pd.DataFrame(rows[:8]).to_json(ev, orient="records", lines=True)
    return str(train), str(ev)


def test_hashed_model_from_labels(tmp_path, capsys):
    train, ev = labels(tmp_path)
    assert main(["train-classifier", "edu", "--labels", train, "--kind", "hashed", "--eval", ev,
                 "--output", str(tmp_path / "m")]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["metrics"]["eval"]["auc"] == 1.0 and report["metrics"]["n_train"] > 0
    card = json.loads((tmp_path / "m" / "model.json").read_text())
    assert card["kind"] == "hashed_linear" and card["trained_on"] == train and "rubric" in card
    assert isinstance(get_edu_scorer(tmp_path / "m"), HashedEduScorer)


@pytest.mark.slow
def test_head_with_prior_from_labels(tmp_path, capsys):
    train, ev = labels(tmp_path)
    assert main(["train-classifier", "edu", "--labels", train, "--prior", "--heldout-fraction", "0.3", "--eval", ev,
                 "--output", str(tmp_path / "m")]) == 0
    report = json.loads(capsys.readouterr().out)["metrics"]
    assert report["eval"]["auc"] == 1.0 and "stack" in report
    scorer = get_edu_scorer(tmp_path / "m")
    assert isinstance(scorer, EmbeddingHeadScorer) and scorer.load().prior_weight != 0.0
    assert scorer.load().card["evaluated_on"] == ev


def test_bad_labels_file_is_a_clear_error(tmp_path):
    path = tmp_path / "bad.parquet"
    pd.DataFrame({"content": ["x"], "score": [1.0]}).to_parquet(path)
    assert main(["train-classifier", "edu", "--labels", str(path), "--output", str(tmp_path / "m")]) == 2


@pytest.mark.parametrize("scores", [
    [4.0, 95.0, 20.0] * 4,  # a 0–100 scale: a head trained on it put every document at 5
    ["4.5x", "1.0", "2"] * 4,  # crashed with exit 70
])
def test_labels_off_the_rubrics_scale_or_not_numbers_are_refused(tmp_path, caplog, scores):
    path = tmp_path / "labels.parquet"
    pd.DataFrame({"text": [f"document {i}" for i in range(len(scores))], "score": scores}).to_parquet(path)
    assert main(["train-classifier", "edu", "--labels", str(path), "--kind", "hashed", "--output", str(tmp_path / "m")]) == 4
    message = next(r.getMessage() for r in caplog.records if r.levelname == "ERROR")
    assert message.startswith(str(path)) and ("outside the edu rubric's scale 0–5" in message or "not numbers" in message)
    assert not (tmp_path / "m").exists()


def test_too_few_labels_to_evaluate_is_a_warning(tmp_path, caplog):
    path = tmp_path / "three.parquet"
    pd.DataFrame({"text": ["a theorem and its proof", "shoes on sale", "the energy equation"], "score": [4.0, 0.0, 3.0]}).to_parquet(path)
    assert main(["train-classifier", "edu", "--labels", str(path), "--kind", "hashed", "--output", str(tmp_path / "m")]) == 0
    assert "3 labelled row(s), 0 of them held out: too few to evaluate" in caplog.text
