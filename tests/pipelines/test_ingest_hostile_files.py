"""Hostile input files: a JSONL file in a legacy encoding, a Parquet file whose footer is damaged, and
a JSONL file that shrinks while it is read. Each is refused with what to do, or ledgered."""

from __future__ import annotations

import gzip
import json
import os
import struct
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from curation.ingest.inputs import InputError, InputSpec
from curation.ingest.jsonl_head import check_head
from curation.ingest.readers import read_spec
from curation.ingest.records import FieldMap
from tests.helpers import read_parts
from tests.pipelines.test_ingest import _ingest, _write_jsonl

DATA = Path(os.environ.get("CURATION_SHARED_DATA") or Path(__file__).resolve().parents[2].parent / "shared" / "data")
ZH = "这是一段用来测试编码的中文文本，内容关于数据清洗与模型训练。"
LATIN = "Le café est très apprécié à Paris, où l'on déguste des crêpes."


@pytest.mark.parametrize(("encoding", "name"), [("gbk", "GB18030"), ("cp1252", "CP1252")])
def test_a_jsonl_file_in_gbk_or_windows_1252_is_refused_with_the_command_that_converts_it(tmp_path, encoding, name):
    text = ZH if encoding == "gbk" else LATIN
    lines = [json.dumps({"id": f"r{i}", "text": f"{text} {i}", "source": "web"}, ensure_ascii=False) for i in range(30)]
    f = tmp_path / "legacy.jsonl"
    f.write_bytes("\n".join(lines).encode(encoding) + b"\n")
    with pytest.raises(InputError) as err:
        _ingest([f], tmp_path / "out")
    assert f"iconv -f {name} -t UTF-8 < legacy.jsonl > legacy.utf8.jsonl" in str(err.value)
    assert "30 of its first lines (1, 2, 3, 4, 5, ...) are not UTF-8" in str(err.value)
    assert not (tmp_path / "out").exists()


def test_a_utf8_file_with_a_few_bad_lines_keeps_a_row_for_each(tmp_path):
    good = [{"id": f"g{i}", "text": f"{ZH} {i}", "source": "web"} for i in range(6)]
    bad = [
        json.dumps({"id": f"b{i}", "text": LATIN, "source": "web"}, ensure_ascii=False).encode("cp1252")
        for i in range(2)
    ]
    f = _write_jsonl(tmp_path / "mostly.jsonl", [good[0], bad[0], *good[1:4], bad[1], *good[4:]])
    _ingest([f], tmp_path / "out")
    ledger = read_parts(tmp_path / "out" / "ledger")
    assert ledger["reason"].tolist() == ["invalid_utf8", "invalid_utf8"]
    assert [json.loads(d)["line"] for d in ledger["detail"]] == [2, 6]
    assert len(read_parts(tmp_path / "out" / "docs")) == 6


@pytest.mark.parametrize("name", ["zh_reviews.jsonl.gz", "zh_tech_notes.jsonl.gz"])
def test_the_chinese_corpora_are_utf8_and_read(name):
    path = DATA / "zh" / name
    if not path.exists():
        pytest.skip(f"{path} is absent (set CURATION_SHARED_DATA)")
    with gzip.open(path) as fh:
        for size in (1 << 16, 1 << 20):  # the head first_record reads, and one of a long first line
            check_head(path, fh.read(size), False)
            fh.seek(0)


def test_a_parquet_file_with_a_damaged_footer_is_refused_on_one_line_with_the_advice(tmp_path):
    f = tmp_path / "foot.parquet"
    pq.write_table(pa.table({"text": ["some text"] * 50}), f)
    data = bytearray(f.read_bytes())
    meta_len = struct.unpack("<I", data[-8:-4])[0]
    start = len(data) - 8 - meta_len
    data[start : start + meta_len // 2] = bytes(meta_len // 2)  # the footer's thrift metadata, zeroed
    f.write_bytes(bytes(data))
    with pytest.raises(InputError) as err:
        _ingest([f], tmp_path / "out", ["ingest.source=web"])
    message = str(err.value)
    assert "\n" not in message and message.startswith(f"{f}: cannot be read (")
    assert message.endswith("); check the file's permissions and format")


def test_a_jsonl_file_that_ends_before_its_planned_end_ledgers_the_missing_part(tmp_path):
    """The file shrank after it was planned (rewritten while ingest ran): the part's records that
    are gone get one ``truncated_input`` row, as a WARC part that reads fewer records than planned."""
    records = [{"id": f"r{i}", "text": f"record number {i}", "source": "web"} for i in range(10)]
    f = _write_jsonl(tmp_path / "s.jsonl", records)
    size = f.stat().st_size
    spec = InputSpec(f, "jsonl", "web", FieldMap(), 0, size, 1, nbytes=size)  # planned: the whole file, bytes 0..size
    ends = [0, *(i + 1 for i, b in enumerate(f.read_bytes()) if b == ord("\n"))]
    f.write_bytes(f.read_bytes()[: ends[6] + 7])  # six whole lines and the start of the seventh
    df = read_spec(spec, 1000)
    assert df["doc_id"].tolist()[:6] == [f"r{i}" for i in range(6)] and df["drop_reason"].tolist()[:6] == [None] * 6
    assert df["drop_reason"].tolist()[6:] == ["truncated_input"]
    detail = json.loads(df["drop_detail"].iloc[6])
    assert detail["line"] == 7 and detail["offset"] == ends[6] and detail["missing_bytes"] == size - ends[6]
    assert detail["error"].startswith(
        f"the file ended {size - ends[6]} bytes before this part's planned end (byte {size})"
    )
    f.write_bytes(b"")  # emptied: every record is gone
    df = read_spec(spec, 1000)
    assert df["drop_reason"].tolist() == ["truncated_input"] and json.loads(df["drop_detail"].iloc[0])["line"] == 1
