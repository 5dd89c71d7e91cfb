"""Odd fields and inputs (issue s59): repeated Parquet columns, a record's own meta, html of the wrong
type, raw NUL bytes, float ids, and clear messages for links and @lists."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from curation.ingest.inputs import InputError, plan_inputs
from curation.ingest.readers import read_spec
from curation.ingest.records import FieldMap, parse_jsonl_lines
from tests.pipelines.test_ingest import _ingest


@pytest.mark.parametrize("name", ["text", "id"])
def test_a_parquet_file_with_a_repeated_column_is_refused_naming_it(tmp_path: Path, name: str) -> None:
    cols = [pa.array(["p0", "p1"]), pa.array(["the real text", "another text"]), pa.array(["x", "y"])]
    f = tmp_path / "dup.parquet"
    pq.write_table(pa.Table.from_arrays(cols, names=["id", "text", name]), f)
    with pytest.raises(InputError, match=f"dup.parquet: repeated column name '{name}'"):
        _ingest([f], tmp_path / "out")
    assert not (tmp_path / "out").exists()


def _rows(lines: list[bytes]):
    return parse_jsonl_lines(lines, "f.jsonl", 1, FieldMap(), "web")


def test_a_records_own_meta_is_never_lost_nor_written_over() -> None:
    df = _rows([b'{"id": "a", "text": "t", "meta": [1, 2], "y": 3}', b'{"id": "b", "text": "t", "meta": {"x": 1}, "x": 2}',
                b'{"id": "c", "text": "t", "meta": 7}', b'{"id": "d", "text": "t", "meta": "{\\"x\\": 1}", "x": 2}'])
    assert [json.loads(m) for m in df["meta"]] == [{"meta": [1, 2], "y": 3}, {"x": 1, "field.x": 2}, {"meta": 7},
                                                   {"x": 1, "field.x": 2}]


def test_html_of_the_wrong_type_or_empty_and_a_raw_nul_byte_get_their_own_reasons() -> None:
    df = _rows([b'{"id": "n", "html": 42}', b'{"id": "l", "html": ["<p>x</p>"]}', b'{"id": "e", "html": ""}',
                b'{"id": "z", "text": "a\x00b"}', b'{"id": "ok", "text": "fine", "html": 42}'])
    assert df["drop_reason"].tolist() == ["wrong_type", "wrong_type", "empty_text", "nul_byte", None]
    details = [json.loads(d)["error"] for d in df["drop_detail"][:4]]
    assert details[0] == "'html' is a number, not a string" and "'html' is empty" in details[2] and "raw NUL byte" in details[3]


def test_nan_and_whole_float_ids(tmp_path: Path) -> None:
    f = tmp_path / "f.parquet"
    pq.write_table(pa.table({"id": [2.0, float("nan"), float("nan"), 2.5], "text": ["two", "first", "second", "half"]}), f)
    df = read_spec(plan_inputs([f], source="web")[0], 1000)
    ids = df["doc_id"].tolist()
    assert ids[0] == "2" and ids[3] == "2.5" and "nan" not in ids and ids[1] != ids[2]


def test_a_record_without_an_id_takes_its_doc_id() -> None:
    """doc_id is curate's own column: its output read again keeps its ids. With both fields, id is the
    id and doc_id stays in meta; a doc_id of no single value, or fields.id set, leaves it in meta."""
    lines = [b'{"doc_id": "d1", "text": "t"}', b'{"id": "i2", "doc_id": "d2", "text": "t"}',
             b'{"id": null, "doc_id": 3, "text": "t"}', b'{"doc_id": {"x": 1}, "text": "t"}']
    df = _rows(lines)
    assert df["doc_id"].tolist()[:3] == ["d1", "i2", "3"] and df["drop_reason"].isna().all()
    metas = [json.loads(m) if isinstance(m, str) else None for m in df["meta"]]
    assert metas == [None, {"doc_id": "d2"}, None, {"doc_id": {"x": 1}}]
    assert df["doc_id"][3] not in ("d1", "i2", "3")  # made from the text and file:line
    unmapped = parse_jsonl_lines(lines[:1], "f.jsonl", 1, FieldMap(id="none"), "web")
    assert unmapped["doc_id"][0] != "d1" and json.loads(unmapped["meta"][0]) == {"doc_id": "d1"}


def test_curates_own_output_read_again_keeps_its_ids(tmp_path: Path) -> None:
    f = tmp_path / "docs.parquet"
    pq.write_table(pa.table({"doc_id": ["a1", "b2"], "text": ["the first text", "the second text"], "source": ["web", "web"]}), f)
    df = read_spec(plan_inputs([f], source="web")[0], 1000)
    assert df["doc_id"].tolist() == ["a1", "b2"] and df["meta"].isna().all()


def test_a_symlink_loop_in_a_folder_and_odd_lists_say_what_they_are(tmp_path: Path) -> None:
    d = tmp_path / "d"
    d.mkdir()
    os.symlink(d / "l2.jsonl", d / "l1.jsonl")
    os.symlink(d / "l1.jsonl", d / "l2.jsonl")
    with pytest.raises(InputError, match="symlink loop"):
        plan_inputs([d], source="web")
    with pytest.raises(InputError, match="is a folder, not a list file"):
        plan_inputs([Path(f"@{tmp_path}")], source="web")
    (tmp_path / "empty.txt").write_text("\n# nothing\n")
    with pytest.raises(InputError, match=f"input list {tmp_path / 'empty.txt'} names no file"):
        plan_inputs([Path(f"@{tmp_path / 'empty.txt'}")], source="web")
