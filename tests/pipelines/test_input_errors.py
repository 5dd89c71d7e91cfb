"""An input ingest cannot read fails the command before a scheduler or cluster starts, and says what
ingest reads; files of other formats in an input folder are named."""

from __future__ import annotations

import pytest

import pipelines.cluster
from pipelines.cli import main
from pipelines.recipe import default_recipe_path


@pytest.fixture
def no_cluster(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("a scheduler was opened for an input that cannot be read")

    monkeypatch.setattr(pipelines.cluster, "open_client", refuse)


def test_a_missing_input_fails_before_a_cluster_starts(tmp_path, caplog, no_cluster):
    rc = main(["run", str(default_recipe_path()), "--input", str(tmp_path / "nope"), "--output", str(tmp_path / "run"), "--workers", "2"])
    assert rc == 4 and f"{tmp_path / 'nope'} does not exist" in caplog.text
    assert not (tmp_path / "run").exists()


def test_a_folder_of_other_formats_names_them_and_what_ingest_reads(tmp_path, caplog, no_cluster):
    raw = tmp_path / "raw"
    raw.mkdir()
    for name in ("a.csv", "b.txt", "c.tsv", "d.xml"):
        (raw / name).write_text("x\n")
    rc = main(["ingest", "--input", str(raw), "--output", str(tmp_path / "out")])
    assert rc == 4
    assert f"no input files found in {raw} (passed over, formats it does not read: {raw / 'a.csv'}, {raw / 'b.txt'}, {raw / 'c.tsv'} and 1 more)" in caplog.text
    assert "ingest reads .jsonl/.json/.ndjson[.gz|.zst], .parquet" in caplog.text
    assert not (tmp_path / "out").exists()
