"""How --input names become files (tester T1's findings, each a real `curate ingest` run on real files):
a path that exists is itself even when its name holds `[` (it was read as a glob: another file's
documents, exit 0); a glob's matches follow the folder rules (a README it matched stopped the run, a
trailing `/` was dropped); data files named `_…` are passed over and said, as the docs say; a file named
twice is read once and said."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pandas as pd
import pytest

from pipelines.cli import main as curate


def _write(path: Path, prefix: str, n: int = 2) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps({"id": f"{prefix}{i}", "text": f"document {i} of {prefix}: some words"}) + "\n"
                            for i in range(n)))
    return path


def _ingest(out: Path, *inputs: str | Path) -> int:
    return curate(["ingest", "--input", *map(str, inputs), "--output", str(out), "--source", "web", "--quiet"])


def _ids(out: Path) -> list[str]:
    return sorted(pd.read_parquet(out / "docs")["doc_id"])


def test_an_existing_path_with_brackets_is_itself_and_a_missing_one_is_still_a_glob(tmp_path):
    _write(tmp_path / "br2" / "data[12].jsonl", "named")
    _write(tmp_path / "br2" / "data1.jsonl", "other")  # what `data[12]` matches as a glob
    assert _ingest(tmp_path / "o1", tmp_path / "br2" / "data[12].jsonl") == 0
    assert _ids(tmp_path / "o1") == ["named0", "named1"]
    _write(tmp_path / "br[1]" / "plain.jsonl", "folder")  # a folder of that kind of name: it was exit 4, "no file matches"
    assert _ingest(tmp_path / "o2", tmp_path / "br[1]") == 0 and _ids(tmp_path / "o2") == ["folder0", "folder1"]
    (tmp_path / "list.txt").write_text("br2/data[12].jsonl\n")  # an @list entry alike
    assert _ingest(tmp_path / "o3", f"@{tmp_path / 'list.txt'}") == 0 and _ids(tmp_path / "o3") == ["named0", "named1"]
    assert _ingest(tmp_path / "o4", tmp_path / "br2" / "data[0-9].jsonl") == 0  # no such file: a pattern
    assert _ids(tmp_path / "o4") == ["other0", "other1"]


def test_an_output_inside_an_input_folder_with_brackets_is_refused(tmp_path, caplog):
    _write(tmp_path / "br[1]" / "plain.jsonl", "folder")
    assert _ingest(tmp_path / "br[1]" / "out", tmp_path / "br[1]") != 0
    assert "is inside the input" in caplog.text and not (tmp_path / "br[1]" / "out").exists()


def test_a_globs_matches_follow_the_folder_rules_and_a_trailing_slash_means_folders(tmp_path, caplog):
    spark = tmp_path / "spark"
    _write(spark / "part-00000.jsonl", "p")
    (spark / "_SUCCESS").write_text("")
    (spark / "README.md").write_text("# the export\n")  # passed over in a folder; it was exit 4 "unknown format"
    assert _ingest(tmp_path / "o1", f"{spark}/*") == 0 and _ids(tmp_path / "o1") == ["p0", "p1"]
    tree = tmp_path / "tree"
    _write(tree / "a" / "x.jsonl", "a")
    _write(tree / "b" / "y.jsonl", "b")
    (tree / "backup.jsonl.bak").write_text("not read\n")  # a file: `tree/*/` names folders only
    assert _ingest(tmp_path / "o2", f"{tree}/*/") == 0 and _ids(tmp_path / "o2") == ["a0", "a1", "b0", "b1"]


def test_data_files_named_with_an_underscore_are_passed_over_and_said_unless_named(tmp_path, caplog):
    folder = tmp_path / "d"
    _write(folder / "a.jsonl", "a")
    _write(folder / "_tmp.jsonl", "under")  # a writer's temporary file: pyarrow.dataset and Spark pass it over
    (folder / "_SUCCESS").write_text("")
    _write(folder / "_temporary" / "0" / "part.jsonl", "spark")
    with caplog.at_level(logging.WARNING):
        assert _ingest(tmp_path / "o1", folder) == 0
    assert _ids(tmp_path / "o1") == ["a0", "a1"]
    said = [r.getMessage() for r in caplog.records if "names start with '_'" in r.getMessage()]
    assert len(said) == 1 and "_tmp.jsonl" in said[0] and "_SUCCESS" not in said[0] and "part.jsonl" not in said[0]
    assert _ingest(tmp_path / "o2", f"{folder}/**/*.jsonl") == 0 and _ids(tmp_path / "o2") == ["a0", "a1"]
    assert _ingest(tmp_path / "o3", folder / "_tmp.jsonl") == 0 and _ids(tmp_path / "o3") == ["under0", "under1"]
    assert _ingest(tmp_path / "o4", f"{folder}/_*.jsonl") == 0 and _ids(tmp_path / "o4") == ["under0", "under1"]


@pytest.mark.parametrize("how", ["twice", "folder and file"])
def test_a_file_named_twice_is_read_once_and_said_in_one_line(tmp_path, caplog, how):
    f = _write(tmp_path / "d" / "plain.jsonl", "p", 3)
    inputs = [f, f] if how == "twice" else [tmp_path / "d", f]
    with caplog.at_level(logging.INFO, logger="curation.ingest.inputs"):
        assert _ingest(tmp_path / "out", *inputs) == 0
    assert _ids(tmp_path / "out") == ["p0", "p1", "p2"]
    said = [r.getMessage() for r in caplog.records if "named again" in r.getMessage()]
    assert len(said) == 1 and "plain.jsonl" in said[0] and "read once" in said[0]
