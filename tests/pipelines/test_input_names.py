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
