"""Getting data in as docs/ingest.md says: an empty text beside HTML is extracted, folders skip
hidden files and read datasets folders (a DatasetDict split by split), Parquet rows keep their row
in the file, an empty WET record is a ledger row, and mapping mistakes are config errors."""

from __future__ import annotations

import gzip
import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from pipelines.cli import main as curate
from tests.helpers import read_parts
from tests.pipelines.test_ingest import _ingest, _write_jsonl

PAGE = ("<html><body><article><h1>Garden notes</h1><p>" + "Tomatoes grow best in warm soil with plenty of sunlight. " * 8
        + "</p></article></body></html>")


def test_an_empty_text_beside_html_is_extracted_from_the_html(tmp_path):
    f = _write_jsonl(tmp_path / "h.jsonl", [{"id": "a", "html": PAGE, "source": "web"}, {"id": "b", "text": "", "html": PAGE, "source": "web"},
                                           {"id": "c", "text": None, "html": PAGE, "source": "web"},
                                           {"id": "d", "text": "  \n", "html": PAGE, "source": "web"},
                                           {"id": "e", "text": "its own text, kept", "html": PAGE * 50, "source": "web"}])
    _ingest([f], tmp_path / "out", ["ingest.max_chars=5000"])
    docs = read_parts(tmp_path / "out" / "docs").set_index("doc_id")
    assert sorted(docs.index) == ["a", "b", "c", "d", "e"]
    assert all("Tomatoes grow best" in docs.loc[x, "text"] for x in "abcd") and docs.loc["e", "text"] == "its own text, kept"


def test_folders_skip_hidden_files_and_read_datasets_folders(tmp_path):
    import datasets

    root = tmp_path / "in"
    root.mkdir()
    _write_jsonl(root / "a.jsonl", [{"id": "j1", "text": "a json line", "source": "web"}])
    datasets.Dataset.from_dict({"id": ["p1", "p2"], "text": ["first page", "second page"], "source": ["web", "web"]}).save_to_disk(str(root / "hf"))
    (root / ".cache").mkdir()
    (root / ".cache" / "junk.jsonl").write_text("not json\n")
    _ingest([root], tmp_path / "out")
    assert sorted(read_parts(tmp_path / "out" / "docs")["doc_id"]) == ["j1", "p1", "p2"]
    assert read_parts(tmp_path / "out" / "ledger").empty

    splits = datasets.DatasetDict({"train": datasets.Dataset.from_dict({"id": ["t1"], "text": ["train text"], "source": ["web"]}),
                                   "test": datasets.Dataset.from_dict({"id": ["s1"], "text": ["test text"], "source": ["web"]})})
    splits.save_to_disk(str(tmp_path / "dd"))
    _ingest([tmp_path / "dd"], tmp_path / "out2")
    assert sorted(read_parts(tmp_path / "out2" / "docs")["doc_id"]) == ["s1", "t1"]


def test_a_parquet_ledger_row_names_its_row_in_the_file(tmp_path):
    texts = [f"text {i} about gardens" for i in range(20)]
    texts[11], texts[16] = "", None
    pq.write_table(pa.table({"id": [f"r{i}" for i in range(20)], "text": texts, "source": ["web"] * 20}), tmp_path / "w.parquet",
                   row_group_size=5)
    _ingest([tmp_path / "w.parquet"], tmp_path / "out")
    ledger = read_parts(tmp_path / "out" / "ledger").set_index("doc_id")
    assert {d: json.loads(ledger.loc[d, "detail"])["line"] for d in ("r11", "r16")} == {"r11": 12, "r16": 17}


def test_an_empty_wet_record_is_a_ledger_row(tmp_path):
    def record(uri: str, text: str) -> bytes:
        body = text.encode()
        head = (f"WARC/1.0\r\nWARC-Type: conversion\r\nWARC-Target-URI: {uri}\r\nWARC-Record-ID: <urn:uuid:{abs(hash(uri))}>\r\n"
                f"Content-Type: text/plain\r\nContent-Length: {len(body)}\r\n\r\n").encode()
        return gzip.compress(head + body + b"\r\n\r\n")

    (tmp_path / "cc.wet.gz").write_bytes(record("http://a.example/1", "Some page text about gardens.") + record("http://a.example/2", "  "))
    _ingest([tmp_path / "cc.wet.gz"], tmp_path / "out")
    assert read_parts(tmp_path / "out" / "docs")["url"].tolist() == ["http://a.example/1"]
    assert read_parts(tmp_path / "out" / "ledger")["reason"].tolist() == ["empty_text"]


@pytest.mark.parametrize(("override", "words"), [
    ('ingest.inputs=[{match: "*", source: web, fields: {txt: body}}]', "fields has unknown column 'txt' (did you mean 'text'?)"),
    ('ingest.inputs=[{match: "*", sorce: web}]', "has unknown key 'sorce' (did you mean 'source'?)"),
    ("ingest.inputs=[{match: 5, source: web}]", "an entry is a mapping with a 'match' glob"),
    ('ingest.inputs=[{match: "*", fields: body}]', "fields is 'body'; give a mapping"),
    ("ingest.fields.text=5", "ingest.fields.text = '5'; give the name of an input field"),
    ("ingest.fields={text: [a, b]}", "give the name of an input field"),
])
def test_a_field_mapping_mistake_is_a_config_error(tmp_path, caplog, override, words):
    f = _write_jsonl(tmp_path / "a.jsonl", [{"id": "a", "text": "some text", "source": "web"}])
    rc = curate(["run", "pipelines/configs/glm45.yaml", "--input", str(f), "--output", str(tmp_path / "run"), "--dry-run", override])
    assert rc == 2 and words in caplog.text and "internal error" not in caplog.text
