"""Values ingest read as they should not (tester T1's findings, real `curate ingest` runs): binary
columns reached `meta` as Python repr text (3.5x their size) and a binary id as "b'\\xff1'"; text of
invisible characters only was kept; an `ingest.inputs` entry that matched no file was silently
unused; null texts were told to rename a field they have; a top-level null said "NoneType"."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from pipelines.cli import main as curate


def _ingest(out: Path, *inputs: str | Path, extra: tuple[str, ...] = ()) -> int:
    return curate(["ingest", "--input", *map(str, inputs), "--output", str(out), "--source", "web", "--quiet", *extra])


def test_binary_columns_reach_meta_as_their_size_said_once_and_binary_ids_as_text_or_hex(tmp_path, caplog):
    blob = b"\xff\xd8\xff\xe0" + bytes(range(256)) * 400  # a JPEG's start: not UTF-8
    image = pa.struct([("bytes", pa.binary()), ("path", pa.string())])  # a `datasets` Image feature
    for name in ("a", "b"):
        pq.write_table(pa.table({
            "id": pa.array([b"\xff1", f"{name}1".encode()], pa.binary()),
            "text": [f"caption one of {name}, a photo of a fox", f"caption two of {name}, a photo of a dog"],
            "jpg": pa.array([blob, b""], pa.binary()),
            "title": pa.array([b"caf\xc3\xa9", b"t"], pa.binary()),  # UTF-8 in a binary column: text
            "image": pa.array([{"bytes": blob, "path": None}, None], image),
        }), tmp_path / f"{name}.parquet")
    with caplog.at_level(logging.WARNING):
        assert _ingest(tmp_path / "out", tmp_path / "a.parquet", extra=("ingest.fields.id=none",)) == 0
    meta = [json.loads(m) for m in pd.read_parquet(tmp_path / "out" / "docs").sort_values("text")["meta"]]
    assert meta[0] == {"id": {"bytes": 2}, "jpg": {"bytes": len(blob)}, "title": "café",
                       "image": {"bytes": {"bytes": len(blob)}, "path": None}}
    warned = [r.getMessage() for r in caplog.records if "holds binary data" in r.getMessage()]
    assert [w.split("'")[1] for w in warned] == ["id", "jpg", "title", "image.bytes"]  # each binary column that reaches meta
    caplog.clear()
    with caplog.at_level(logging.WARNING):
        assert _ingest(tmp_path / "out2", tmp_path / "a.parquet", tmp_path / "b.parquet") == 0
    assert sorted(pd.read_parquet(tmp_path / "out2" / "docs")["doc_id"]) == ["a1", "b1", "ff31"]
    ledger = pd.read_parquet(tmp_path / "out2" / "ledger")  # the second file's b"\xff1" is a repeat of the first's
    assert ledger["reason"].tolist() == ["duplicate_id"] and ledger["doc_id"].str.startswith("ff31@").all()
    assert sum("'jpg'" in r.getMessage() for r in caplog.records) == 1  # once a run, not once a file


def test_text_of_invisible_characters_only_is_empty_and_top_level_values_are_said_in_json_words(tmp_path):
    f = tmp_path / "odd.jsonl"
    rows = [{"id": "bom", "text": "\ufeff\u200b\u200b  "}, {"id": "zw", "text": "\u200c\u200d\u2060\n"},
            {"id": "kept", "text": "\u200bwords after a zero-width space"}, None, [1, 2]]
    f.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert _ingest(tmp_path / "out", f) == 0
    assert pd.read_parquet(tmp_path / "out" / "docs")["doc_id"].tolist() == ["kept"]
    ledger = pd.read_parquet(tmp_path / "out" / "ledger").sort_values("doc_id")
    errors = {json.loads(d)["line"]: json.loads(d)["error"] for d in ledger["detail"]}
    assert ledger["reason"].value_counts().to_dict() == {"empty_text": 2, "malformed_json": 2}
    assert errors[1].startswith("text is only whitespace and invisible format characters")
    assert errors[4] == "null, not an object" and errors[5] == "a JSON array, not an object"


def test_an_inputs_entry_that_takes_no_file_is_said_at_planning_naming_it(tmp_path, caplog):
    f = tmp_path / "plain.jsonl"
    f.write_text(json.dumps({"id": "a", "text": "some words of a document"}) + "\n")
    entries = 'inputs=[{match: "*.jsonl.gz", source: code}, {match: "*.jsonl", source: web}, {match: "plain*", source: code}]'
    with caplog.at_level(logging.WARNING):
        assert _ingest(tmp_path / "out", f, extra=(f"ingest.{entries}",)) == 0
    warned = [r.getMessage() for r in caplog.records if "ingest.inputs entry" in r.getMessage()]
    assert len(warned) == 2
    assert "'*.jsonl.gz' matches no input file" in warned[0] and "named like plain.jsonl" in warned[0].replace(str(tmp_path) + "/", "")
    assert "'plain*' takes no input file" in warned[1] and "'*.jsonl'" in warned[1]
    assert pd.read_parquet(tmp_path / "out" / "docs")["source"].tolist() == ["web"]


def test_null_texts_are_not_told_to_rename_the_field(tmp_path, caplog):
    f = tmp_path / "nulls.jsonl"
    f.write_text("".join(json.dumps(r) + "\n" for r in [{"id": "a", "text": "a real text"}, {"id": "b", "text": None}]))
    with caplog.at_level(logging.WARNING):
        assert _ingest(tmp_path / "out", f) == 0
    said = next(r.getMessage() for r in caplog.records if "could not be read as documents" in r.getMessage())
    assert "the text field is there but null" in said and "ingest.fields.text=" not in said
