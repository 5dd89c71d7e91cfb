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
