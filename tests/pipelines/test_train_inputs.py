"""train-classifier's inputs and options, misused: a garbled or empty label file is exit 4 naming it,
a held-out share of 1 or a count of 0 is exit 2, labels off the code-quality scale are refused (they
trained a model a run then clipped to 10 for every file)."""

from __future__ import annotations

import json

import pytest

from pipelines.cli import main


def _texts(path, texts):
    path.write_text("".join(json.dumps({"text": t}) + "\n" for t in texts))
    return path


@pytest.mark.parametrize("option", [["--holdout", "1.0"], ["--holdout", "-0.1"], ["--epochs", "0"], ["--n-features", "0"], ["--l2", "-1"]])
def test_option_values_that_cannot_train_are_usage_errors(tmp_path, capsys, option):
    pos = _texts(tmp_path / "pos.jsonl", ["a reference page about linear algebra"] * 5)
    neg = _texts(tmp_path / "neg.jsonl", ["buy cheap now click here"] * 5)
    with pytest.raises(SystemExit) as exc:
        main(["train-classifier", "linear", "--positive", str(pos), "--negative", str(neg), "--output", str(tmp_path / "m"), *option])
    assert exc.value.code == 2 and f"argument {option[0]}" in capsys.readouterr().err
    assert not (tmp_path / "m").exists()


def test_label_files_that_cannot_be_read_are_exit_4_naming_them(tmp_path, finished_run, caplog):
    garbled = tmp_path / "garbled.jsonl"
    garbled.write_bytes(b'{"doc_id": "x", "sc\n\x00\x01garbage\n')
    pos = _texts(tmp_path / "pos.jsonl", ["a reference page about linear algebra"] * 5)
    assert main(["train-classifier", "linear", "--positive", str(pos), "--negative", str(garbled), "--output", str(tmp_path / "a")]) == 4
    assert f"{garbled} cannot be read as JSON lines" in caplog.text
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    caplog.clear()
    assert main(["train-classifier", "code-quality", "--input", str(finished_run / "50_code_quality"), "--labels", str(empty),
                 "--output", str(tmp_path / "b")]) == 4
    assert f"{empty} has no column(s) ['doc_id', 'score']" in caplog.text
    off = tmp_path / "off.jsonl"
    off.write_text("".join(json.dumps({"doc_id": str(i), "score": 100 * i}) + "\n" for i in range(20)))
    caplog.clear()
    assert main(["train-classifier", "code-quality", "--input", str(finished_run / "50_code_quality"), "--labels", str(off),
                 "--output", str(tmp_path / "c")]) == 4
    assert "score must be a number from 0 to 10 (the code-quality scale)" in caplog.text
    assert not any((tmp_path / n).exists() for n in "abc")


def test_a_model_is_not_written_into_a_run_nor_over_a_shipped_model(tmp_path, finished_run, caplog, monkeypatch):
    from pathlib import Path

    pos = _texts(tmp_path / "pos.jsonl", ["a reference page about linear algebra"] * 5)
    neg = _texts(tmp_path / "neg.jsonl", ["buy cheap now click here"] * 5)
    run = tmp_path / "run"
    run.mkdir()
    (run / "run.json").write_text((finished_run / "run.json").read_text())
    argv = ["train-classifier", "linear", "--positive", str(pos), "--negative", str(neg), "--output"]
    assert main([*argv, str(run / "newmodel")]) == 5
    assert "is inside the run folder" in caplog.text and not (run / "newmodel").exists()
    shipped = Path(__file__).resolve().parents[2] / "classifiers" / "models" / "web_linear"
    before = {f.name: f.read_bytes() for f in shipped.iterdir()}
    caplog.clear()
    monkeypatch.delenv("CURATE_WRITE_SHIPPED_MODELS", raising=False)
    assert main([*argv, str(shipped)]) == 5
    assert "is a model shipped with curate" in caplog.text
    assert {f.name: f.read_bytes() for f in shipped.iterdir()} == before


def test_a_model_card_is_strict_json_when_a_metric_cannot_be_computed(tmp_path):
    """Constant labels have no correlation: the card says null, not NaN (which strict parsers refuse)."""
    import pandas as pd

    labelled = tmp_path / "l.parquet"
    pd.DataFrame({"text": [f"page number {i} about things" for i in range(40)], "label": [3.0] * 40}).to_parquet(labelled)
    assert main(["train-classifier", "linear", "--labelled", str(labelled), "--task", "regression", "--holdout", "0.5",
                 "--output", str(tmp_path / "m")]) == 0

    def refuse(name):
        raise ValueError(f"{name} in a model card")

    card = json.loads((tmp_path / "m" / "model.json").read_text(), parse_constant=refuse)
    assert card["kind"] == "hashed_linear"


def test_training_that_cannot_learn_anything_is_refused(tmp_path, caplog):
    pos = _texts(tmp_path / "pos.jsonl", ["a reference page about linear algebra"] * 5)
    neg = _texts(tmp_path / "neg.jsonl", ["buy cheap now click here"] * 5)
    argv = ["train-classifier", "linear", "--output", str(tmp_path / "m")]
    assert main([*argv, "--positive", str(pos), "--negative", str(pos)]) == 2
    assert "is given as both --positive and --negative" in caplog.text
    caplog.clear()
    assert main([*argv, "--positive", str(pos), "--negative", str(neg), "--word-ngrams", "0", "0", "--char-ngrams", "0", "0"]) == 2
    assert "leave no feature to learn from" in caplog.text
    caplog.clear()
    assert main([*argv, "--positive", str(pos), "--negative", str(neg)]) == 0  # 10 documents: trained, with a warning
    assert "only 10 labelled documents" in caplog.text


def test_web_embedding_annotations_off_the_rubrics_scale_are_refused(tmp_path, caplog):
    docs = tmp_path / "docs.jsonl"
    docs.write_text("".join(json.dumps({"doc_id": str(i), "text": f"page {i}", "source": "web"}) + "\n" for i in range(12)))
    ann = tmp_path / "ann.jsonl"
    ann.write_text("".join(json.dumps({"doc_id": str(i), "score": 100.0 * i}) + "\n" for i in range(12)))
    assert main(["train-classifier", "web-embedding", "--input", str(docs), "--annotations", str(ann), "--embedder-model",
                 "minilm-static", "--output", str(tmp_path / "m")]) == 4
    assert "score must be a number on the web_quality rubric's scale 0–5" in caplog.text and not (tmp_path / "m").exists()


def test_linear_counts_the_documents_it_leaves_out_by_reason(tmp_path, caplog):
    """Empty texts and labels that are not numbers are left out with a counted warning, not silently."""
    import pandas as pd

    pos = _texts(tmp_path / "pos.jsonl", [f"a reference page about linear algebra {i}" for i in range(20)] + [""] * 3)
    neg = _texts(tmp_path / "neg.jsonl", [f"buy cheap now click here {i}" for i in range(20)])
    assert main(["train-classifier", "linear", "--positive", str(pos), "--negative", str(neg), "--output", str(tmp_path / "a")]) == 0
    assert "3 of 43 document(s) are left out (empty text=3); training on 40" in caplog.text
    caplog.clear()
    labelled = tmp_path / "l.parquet"
    pd.DataFrame({"text": [f"page number {i} about things" for i in range(30)] + ["x", "y", ""],
                  "label": [str(i % 5) for i in range(30)] + ["high", None, "2"]}).to_parquet(labelled)
    assert main(["train-classifier", "linear", "--labelled", str(labelled), "--task", "regression", "--output", str(tmp_path / "b")]) == 0
    assert "3 of 33 document(s) are left out (" in caplog.text and "non-numeric label=1" in caplog.text
    assert "no label=1" in caplog.text and "empty text=1" in caplog.text and "label values such as 'high'" in caplog.text
    assert json.loads((tmp_path / "b" / "model.json").read_text())["kind"] == "hashed_linear"
