"""Hostile values in JSONL and Parquet records: integer literals longer than Python converts, and a
line too large to parse. Each is a kept record or a ledger row that says why, never a crash."""

from __future__ import annotations

import gzip
import json
import tracemalloc

import pandas as pd
import pytest

from curation.ingest.inputs import InputSpec
from curation.ingest.readers import read_spec
from curation.ingest.records import FieldMap
from tests.helpers import read_parts
from tests.pipelines.test_ingest import _ingest, _write_jsonl

BIG = "1" + "0" * 5000  # 5,001 digits: int() refuses over 4,300


def _line(**fields: object) -> bytes:
    """A JSON line; a value ``BIG`` is written as the bare number."""
    return json.dumps(fields).replace(f'"{BIG}"', BIG).encode()


def test_long_integer_literals_keep_their_records_and_are_numbers_where_a_string_is_needed(tmp_path):
    f = _write_jsonl(
        tmp_path / "n.jsonl",
        [
            # the first record, read when the run is planned too
            _line(id="first", text="a first record with a long number", x=BIG),
            _line(id=BIG, text="a record whose id is a long number"),
            _line(id="m", text="a meta string holding one", meta=json.dumps({"k": 1}).replace("1", BIG)),
            _line(id="t", text=BIG),
            _line(id="s", text="a source that is a long number", source=BIG),
            _line(id="neg", text="negative", x=[-1, BIG]),
        ],
    )
    meta = json.dumps({"k": 1}).replace("1", BIG)
    pq_file = tmp_path / "m.parquet"
    pd.DataFrame({"id": ["p"], "text": ["a Parquet row"], "meta": [meta]}).to_parquet(pq_file)
    _ingest([f, pq_file], tmp_path / "out", ["ingest.source=web"])
    docs = read_parts(tmp_path / "out" / "docs").set_index("doc_id")
    assert sorted(docs.index) == sorted(["first", BIG, "m", "neg", "p", "s"])
    assert json.loads(docs.loc["first", "meta"]) == {"x": BIG}  # its digits, as a string
    assert json.loads(docs.loc["m", "meta"]) == {"k": BIG} and json.loads(docs.loc["p", "meta"]) == {"k": BIG}
    assert json.loads(docs.loc["neg", "meta"]) == {"x": [-1, BIG]}
    ledger = read_parts(tmp_path / "out" / "ledger").set_index("doc_id")
    error = {doc: json.loads(detail)["error"] for doc, detail in ledger["detail"].items()}
    assert ledger.loc["t", "reason"] == "wrong_type" and error["t"] == "'text' is a number, not a string"
    # a source field that is a number (a dataset's id) gives way to the input's source, its digits kept in meta
    assert docs.loc["s", "source"] == "web" and json.loads(docs.loc["s", "meta"]) == {"source": BIG}


def test_a_line_over_twelve_times_max_chars_is_too_large_unparsed(tmp_path):
    """A record whose text is within max_chars but whose line is over the bound (a huge meta) is not
    parsed; a text of max_chars characters in the widest escape (6 bytes each) is."""
    padded = {"id": "padded", "text": "short text", "meta": {"pad": "x" * 12_000}}
    f = _write_jsonl(
        tmp_path / "big.jsonl",
        [
            # json.dumps escapes each: 6 bytes a character
            {"id": "wide", "text": "中" * 1000, "html": "<p>" + "中" * 990 + "</p>"},
            padded,
            {"id": "ok", "text": "fine"},
        ],
    )
    size = len(json.dumps(padded)) + 1  # with its newline
    _ingest([f], tmp_path / "out", ["ingest.source=web", "ingest.max_chars=1000"])
    assert read_parts(tmp_path / "out" / "docs")["doc_id"].tolist() == ["wide", "ok"]
    ledger = read_parts(tmp_path / "out" / "ledger")
    assert ledger["reason"].tolist() == ["too_large"]
    detail = json.loads(ledger["detail"].iloc[0])
    assert detail["line"] == 2
    assert detail["error"] == f"a line of {size} bytes > 12000 (12 x max_chars 1000), not parsed"


@pytest.mark.parametrize("name", ["huge.jsonl", "huge.jsonl.gz"])
def test_a_line_over_the_bound_is_never_held_whole(tmp_path, name):
    """A line over the bound is read on to its end a piece at a time: it is never held, copied,
    decoded or parsed, and the lines after it are read as usual."""
    size = 20_000_000
    data = b'{"text": "' + b"a" * size + b'"}\n{"text": "small"}\n{"text": "' + b"b" * size + b'"}'
    f = tmp_path / name
    f.write_bytes(gzip.compress(data, mtime=0) if name.endswith(".gz") else data)
    spec = InputSpec(f, "jsonl", "web", FieldMap())
    tracemalloc.start()
    try:
        df = read_spec(spec, 1000)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < size // 4, f"peak {peak:,} bytes for a {size:,}-byte line"
    assert df["drop_reason"].tolist() == ["too_large", None, "too_large"] and df["text"].tolist()[1] == "small"
    assert json.loads(df["drop_detail"].iloc[2])["error"].startswith(f"a line of {size + 12} bytes > 12000 ")
