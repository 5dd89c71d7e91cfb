"""An input file whose name is not UTF-8 is refused before any output, naming it: it crashed ingest
(exit 70, UnicodeEncodeError) because a file's name goes into its documents' labels and ids."""

import json
import os

from pipelines.cli import main as curate


def test_a_file_name_that_is_not_utf8_is_exit_4_naming_it(tmp_path, caplog):
    folder = tmp_path / "in"
    folder.mkdir()
    with open(os.path.join(os.fsencode(folder), b"bad\xffname.jsonl"), "w") as fh:
        fh.write(json.dumps({"id": "a", "text": "a document in a file with an odd name"}) + "\n")
    (folder / "good.jsonl").write_text(json.dumps({"id": "b", "text": "a document in a good file"}) + "\n")
    assert curate(["ingest", "--input", str(folder), "--output", str(tmp_path / "out"), "--source", "web", "--quiet"]) == 4
    assert "bad\\xffname.jsonl: the file name is not UTF-8; rename it" in caplog.text
    assert not (tmp_path / "out").exists()


def test_a_run_refuses_it_before_writing_anything_and_a_non_utf8_list_is_exit_4(tmp_path, caplog):
    """`curate run` wrote run.progress.json before ingest refused the name; an @list in another
    encoding crashed with exit 70 (UnicodeDecodeError)."""
    from pipelines.recipe_schema import default_recipe_path

    folder = tmp_path / "in"
    folder.mkdir()
    with open(os.path.join(os.fsencode(folder), b"caf\xe9.jsonl"), "w") as fh:
        fh.write(json.dumps({"id": "a", "text": "a document"}) + "\n")
    assert curate(["run", str(default_recipe_path()), "--input", str(folder), "--output", str(tmp_path / "run"), "--quiet"]) == 4
    assert "caf\\xe9.jsonl: the file name is not UTF-8" in caplog.text and not (tmp_path / "run").exists()
    listing = tmp_path / "inputs.txt"
    listing.write_bytes(b"in/caf\xe9.jsonl\n")
    caplog.clear()
    assert curate(["ingest", "--input", f"@{listing}", "--output", str(tmp_path / "out"), "--source", "web", "--quiet"]) == 4
    assert f"{listing} line 1: 'in/caf\\\\xe9.jsonl' is not UTF-8" in caplog.text and not (tmp_path / "out").exists()
