"""`curate ingest` on input it cannot read: data files in a folder, UTF-16 and CR-only JSONL stop it
before any output (exit 4); ids repeated across files are warned about when it finishes."""

from __future__ import annotations

import bz2
import json

import pandas as pd
import pytest

import pipelines.cluster
from pipelines.cli import main


@pytest.fixture
def no_cluster(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("a scheduler was opened for an input that cannot be read")

    monkeypatch.setattr(pipelines.cluster, "open_client", refuse)


def _body(prefix: str, n: int = 5) -> str:
    return "".join(json.dumps({"id": f"{prefix}{i}", "text": f"document {prefix} {i} with some words"}) + "\n" for i in range(n))


def _errors(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelname == "ERROR"]


def test_a_folder_with_data_ingest_cannot_read_fails_before_a_cluster_starts(tmp_path, caplog, no_cluster, monkeypatch):
    raw = tmp_path / "m"
    raw.mkdir()
    (raw / "a.jsonl").write_text(_body("a"))
    (raw / "b.jsonl.bz2").write_bytes(bz2.compress(_body("b").encode()))
    (raw / "c.csv").write_text("id,text\n1,hello\n")
    rc = main(["ingest", "--input", str(raw), "--output", str(tmp_path / "o"), "--source", "web", "--quiet"])
    assert rc == 4 and not (tmp_path / "o").exists()
    [error] = _errors(caplog)
    assert f"2 file(s) in the input folders look like data ingest cannot read: {raw / 'b.jsonl.bz2'} (bzip2: " in error
    assert f"{raw / 'c.csv'} (.csv: convert it" in error and f"--input '{raw}/**/*.jsonl'" in error
    caplog.clear()
    monkeypatch.undo()  # what the message says to do runs
    rc = main(["ingest", "--input", f"{raw}/**/*.jsonl", "--output", str(tmp_path / "o"), "--source", "web", "--quiet"])
    assert rc == 0 and not _errors(caplog)


@pytest.mark.parametrize(("encode", "says"), [
    (lambda s: s.encode("utf-16"), "is UTF-16LE text (with a byte order mark), not UTF-8"),
    (lambda s: s.encode("utf-16-le"), "is UTF-16LE text (no byte order mark), not UTF-8"),
    (lambda s: s.replace("\n", "\r").encode(), ": its lines end with a carriage return alone"),
])
def test_utf16_or_cr_only_jsonl_fails_before_any_output(tmp_path, caplog, encode, says):
    f = tmp_path / "a.jsonl"
    f.write_bytes(encode(_body("a")))
    rc = main(["ingest", "--input", str(f), "--output", str(tmp_path / "o"), "--source", "web", "--quiet"])
    assert rc == 4 and not (tmp_path / "o").exists()
    [error] = _errors(caplog)
    assert error.startswith(f"{f}{'' if says.startswith(':') else ' '}{says}") and "convert" in error


def test_ids_repeated_across_files_are_warned_about_when_ingest_finishes(tmp_path, caplog):
    for name in ("s0", "s1"):
        pd.DataFrame({"id": [str(i) for i in range(4)], "text": [f"{name} row {i} text" for i in range(4)]}).to_parquet(tmp_path / f"{name}.parquet")
    rc = main(["ingest", "--input", str(tmp_path / "s0.parquet"), str(tmp_path / "s1.parquet"), "--output", str(tmp_path / "o"),
               "--source", "web", "--quiet"])
    assert rc == 0
    warned = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert any(m.startswith("ingest: 4 of 8 documents dropped as duplicate_id: an earlier record (input order) has the same "
                            "id (e.g. '0', '1', '2'); the first occurrence keeps the id") and "ingest.fields.id=none" in m
               for m in warned), warned
