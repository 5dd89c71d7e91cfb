"""A gzip member whose HEADER is damaged (one byte of its first 18) in a bgzip-style JSONL file costs that
member only: reading goes on at the next member, as past damaged data, with one truncated_input row per
damaged member (the first member, a middle one, the last one, two adjacent ones), in one chunk or several."""

from __future__ import annotations

import json
import struct
import zlib
from pathlib import Path

import pytest
import zstandard

from tests.helpers import read_parts
from tests.pipelines.test_ingest import _ingest
from tests.pipelines.test_ingest_damaged_streams import _flip, _lines

BGZF_EOF = bytes.fromhex("1f8b08040000000000ff0600424302001b0003000000000000000000")  # bgzip's empty last block


def _bgzf(data: bytes, size: int) -> tuple[list[bytes], list[int]]:
    """BGZF blocks (gzip members with bgzip's ``BC`` extra field) of ``size`` decompressed bytes each, cut
    anywhere (mid-record), and the decompressed offset each starts at."""
    blocks, starts = [], list(range(0, len(data), size))
    for k in starts:
        part = data[k : k + size]
        c = zlib.compressobj(6, zlib.DEFLATED, -15)
        body = c.compress(part) + c.flush()
        head = b"\x1f\x8b\x08\x04\x00\x00\x00\x00\x00\xff\x06\x00BC\x02\x00" + struct.pack("<H", len(body) + 25)
        blocks.append(head + body + struct.pack("<II", zlib.crc32(part), len(part)))
    return blocks, starts


def _kept(lines: list[bytes], lost: list[tuple[int, int]]) -> list[str]:
    """Ids of the records that touch no decompressed range in ``lost``."""
    out, pos = [], 0
    for raw in lines:
        end = pos + len(raw)
        if all(end <= a or pos >= b for a, b in lost):
            out.append(json.loads(raw)["id"])
        pos = end
    return out


def _ingest_rows(tmp_path: Path, f: Path, small: bool) -> tuple[list[str], list[dict]]:
    blocks = ["ingest.blocksize_mb=1", "ingest.min_block_mb=1"] if small else []
    _ingest([f], tmp_path / "out", blocks)
    ledger = read_parts(tmp_path / "out" / "ledger")
    assert ledger["reason"].tolist() == ["truncated_input"] * len(ledger)
    return read_parts(tmp_path / "out" / "docs")["doc_id"].tolist(), [json.loads(d) for d in ledger["detail"]]


@pytest.mark.parametrize("byte", [0, 11])  # the magic, bgzip's extra field length
@pytest.mark.parametrize("where", ["first", "middle", "last", "adjacent"])
def test_a_damaged_header_costs_its_member_only_one_row_each(tmp_path: Path, where: str, byte: int) -> None:
    lines = _lines(0, 3000)  # ~1.2 MB: two chunks of 1 MB with small blocks
    data = b"".join(lines)
    blocks, starts = _bgzf(data, 1 << 16)
    n = len(blocks)
    bad = {"first": [0], "middle": [n // 2], "last": [n - 1], "adjacent": [n // 2, n // 2 + 1]}[where]
    for k in bad:
        blocks[k] = _flip(blocks[k], byte)
    f = tmp_path / "b.jsonl.gz"
    f.write_bytes(b"".join([*blocks, BGZF_EOF]))
    offsets = [sum(map(len, blocks[:k])) for k in range(n + 1)]  # compressed start of each block, then the EOF block
    docs, rows = _ingest_rows(tmp_path, f, small=where == "middle")
    ends = [*starts[1:], len(data)]
    assert docs == _kept(lines, [(starts[k], ends[k]) for k in bad])  # nothing lost beyond the damaged members
    assert [r["member"] for r in rows] == [offsets[k] for k in bad]  # one row per damaged member
    assert [r["resumed_at"] for r in rows] == [offsets[k + 1] for k in bad]  # reading went on right after each
    assert all("has a damaged header" in r["error"] for r in rows)
    assert len({r["line"] for r in rows}) == len(rows)
    if where == "adjacent":
        assert "whose header is damaged too (its own row)" in rows[0]["error"]


def test_a_damaged_last_header_with_nothing_after_ends_the_file_with_one_row(tmp_path: Path) -> None:
    lines = _lines(0, 600)
    blocks, starts = _bgzf(b"".join(lines), 1 << 15)
    blocks[-1] = _flip(blocks[-1], 0)
    f = tmp_path / "c.jsonl.gz"
    f.write_bytes(b"".join(blocks))  # no EOF block: no member after the damaged one
    docs, (row,) = _ingest_rows(tmp_path, f, small=False)
    assert docs == _kept(lines, [(starts[-1], len(b"".join(lines)))])
    assert row["member"] == sum(map(len, blocks[:-1])) and "resumed_at" not in row
    assert "has a damaged header" in row["error"] and "the file is not read past it" in row["error"]


def test_a_zstd_frame_with_a_damaged_magic_is_skipped(tmp_path: Path) -> None:
    lines = _lines(0, 30)
    groups = [lines[:10], lines[10:20], lines[20:]]
    frames = [zstandard.ZstdCompressor(write_checksum=True).compress(b"".join(g)) for g in groups]
    frames[1] = _flip(frames[1], 1)
    f = tmp_path / "z.jsonl.zst"
    f.write_bytes(b"".join(frames))
    docs, (row,) = _ingest_rows(tmp_path, f, small=False)
    assert docs == [f"r{i}" for i in [*range(10), *range(20, 30)]]
    assert row["member"] == len(frames[0]) and row["resumed_at"] == len(frames[0]) + len(frames[1])


@pytest.mark.parametrize("where", ["first", "middle"])
def test_a_member_whose_first_byte_is_zero_is_named_at_its_own_start(tmp_path: Path, where: str) -> None:
    """0x00 is what gzip's zero padding is made of: before bytes that are no member, it is the damaged member's first byte."""
    lines = _lines(0, 600)
    blocks, _starts = _bgzf(b"".join(lines), 1 << 15)
    k = 0 if where == "first" else len(blocks) // 2
    blocks[k] = b"\x00" + blocks[k][1:]
    f = tmp_path / "z.jsonl.gz"
    f.write_bytes(b"".join([*blocks, BGZF_EOF]))
    _docs, (row,) = _ingest_rows(tmp_path, f, small=False)
    assert row["member"] == sum(map(len, blocks[:k])) and row["resumed_at"] == sum(map(len, blocks[: k + 1]))
    assert "has a damaged header" in row["error"]
