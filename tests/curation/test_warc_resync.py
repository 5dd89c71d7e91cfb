"""A damaged record in the middle of a ``.warc.gz`` (no ``Content-Length``, junk between gzip
members) costs that record only: one ``truncated_input`` row, then reading goes on at the next
gzip member, with the same rows however the file is partitioned. A plain ``.warc`` is not read
past it, and its row says how many bytes were not read."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from curation.ingest.inputs import plan_inputs
from curation.ingest.readers import read_spec
from curation.ingest.warc import iter_warc, until_cut
from curation.ingest.warc_plan import warc_chunks
from curation.schema import DropReason
from tests.curation.test_warc_damaged import ok, page, rec, write


def no_length(tag: str) -> bytes:
    head, _, rest = ok(tag).partition(b"Content-Length: ")
    return head + rest.partition(b"\r\n")[2]


def read(path: Path, block: int) -> list[dict]:
    """Every row of ``path``, partition by partition, as the ingest readers read them."""
    rows = []
    for c in warc_chunks(path, block):
        rows += list(until_cut(iter_warc(path, 1 << 20, c.start, c.end, c.first_line, c.docs if c.docs >= 0 else None), c.cut, str(path)))
    return rows


def summary(rows: list[dict]) -> list[tuple[int, str]]:
    return [(r["line"], r["error"][0].value if "error" in r else r["url"].rsplit("/", 1)[1]) for r in rows]


@pytest.mark.parametrize("block", [1 << 30, 1 << 12])
def test_a_record_without_content_length_costs_that_record_only(tmp_path: Path, block: int) -> None:
    recs = [ok("a"), ok("b"), no_length("c"), ok("d"), ok("e")]
    f = write(tmp_path / "n.warc.gz", recs)
    rows = read(f, block)
    assert summary(rows) == [(1, "a"), (2, "b"), (3, "truncated_input"), (4, "d"), (5, "e")]
    bad = rows[2]
    assert "record 3 has no Content-Length" in bad["error"][1] and "reading went on" in bad["error"][1]
    assert bad["url"] == "http://a.example/c" and bad["offset"] == sum(len(gzip.compress(r)) for r in recs[:2])  # its member's


@pytest.mark.parametrize("block", [1 << 30, 1 << 12])
def test_junk_between_members_is_one_row_that_counts_its_bytes(tmp_path: Path, block: int) -> None:
    members = [gzip.compress(r) for r in (ok("a"), ok("b"), ok("c"), ok("d"))]
    f = tmp_path / "j.warc.gz"
    f.write_bytes(members[0] + members[1] + b"junk!" * 16 + members[2] + members[3])
    rows = read(f, block)
    assert summary(rows) == [(1, "a"), (2, "b"), (3, "truncated_input"), (4, "c"), (5, "d")]
    junk = len(members[0]) + len(members[1])
    assert rows[2]["offset"] == junk and f"80 bytes that are not gzip data at compressed byte {junk}" in rows[2]["error"][1]


def test_a_plain_warc_says_how_much_was_not_read(tmp_path: Path) -> None:
    f = write(tmp_path / "p.warc", [ok("a"), no_length("b"), ok("c")], gz=False)
    rows = read(f, 1 << 30)
    assert summary(rows) == [(1, "a"), (2, "truncated_input")]
    at = len(ok("a"))
    assert rows[1]["offset"] == at and f"the {f.stat().st_size - at} bytes of the file from byte {at} on were not read" in rows[1]["error"][1]


def test_junk_in_a_plain_warc_row_counts_the_bytes_not_read(tmp_path: Path) -> None:
    f = write(tmp_path / "q.warc", [ok("a"), b"junk!" * 16, ok("b")], gz=False)
    rows = read(f, 1 << 30)
    assert [r["line"] for r in rows] == [1, 2] and rows[1]["error"][0] == DropReason.TRUNCATED_INPUT
    assert "bytes of the file after byte 0" in rows[1]["error"][1]


def _damage(member: bytes, crc_only: bool) -> bytes:
    b = bytearray(member)
    b[-8 if crc_only else len(b) // 2] ^= 0xFF  # the CRC32 trailer, or a byte of the deflate data
    return bytes(b)


@pytest.mark.parametrize("block", [1 << 30, 1 << 12])
@pytest.mark.parametrize("crc_only", [False, True])
def test_a_corrupt_member_costs_its_record_only(tmp_path: Path, block: int, crc_only: bool) -> None:
    members = [gzip.compress(r) for r in (ok("a"), ok("b"), ok("c"), ok("d"), ok("e"))]
    members[2] = _damage(members[2], crc_only)
    f = tmp_path / "c.warc.gz"
    f.write_bytes(b"".join(members))
    rows = read(f, block)
    assert summary(rows) == [(1, "a"), (2, "b"), (3, "truncated_input"), (4, "d"), (5, "e")]
    at, resume = len(members[0]) + len(members[1]), len(members[0]) + len(members[1]) + len(members[2])
    assert rows[2]["offset"] == at and "corrupt gzip data" in rows[2]["error"][1]
    why = rows[2]["error"][1]
    assert f"{resume - at} compressed bytes from the gzip member at byte {at} on skipped" in why
    assert f"reading went on at the next gzip member that starts a record (byte {resume})" in why
    # data that stops inflating may hide records after the damage: said; a bad checksum alone hides none
    assert ("records after the damage in its member, if any, are not counted" in why) == ("inflat" in why or "distance" in why)


@pytest.mark.parametrize("block", [1 << 30, 1 << 15])
def test_a_corrupt_member_of_several_records_is_dropped_whole(tmp_path: Path, block: int) -> None:
    """Members of three ~30 KB records each: the damaged one gives some records before its error (its
    CRC is checked at its end, so they may be garbled): none of them is kept, each is a row."""
    recs = [rec(f"p{i}", page(f"p{i}") + bytes(range(65, 91)) * (1000 + 37 * i)) for i in range(9)]
    members = [gzip.compress(b"".join(recs[k:k + 3])) for k in (0, 3, 6)]
    members[1] = _damage(members[1], crc_only=True)
    f = tmp_path / "m.warc.gz"
    f.write_bytes(b"".join(members))
    rows = read(f, block)
    lost = [(n, "truncated_input") for n in (4, 5, 6)]
    assert summary(rows) == [(1, "p0"), (2, "p1"), (3, "p2"), *lost, (7, "p6"), (8, "p7"), (9, "p8")]
    assert all(r["offset"] == len(members[0]) for r in rows[3:6]) and "failed its check" in rows[3]["error"][1]
    assert "its 3 document record(s) (row(s) 4..6) are not kept" in rows[3]["error"][1]


def test_a_corrupt_last_member_says_how_much_was_not_read(tmp_path: Path) -> None:
    members = [gzip.compress(r) for r in (ok("a"), ok("b"), ok("c"))]
    members[2] = _damage(members[2], crc_only=False)
    f = tmp_path / "l.warc.gz"
    f.write_bytes(b"".join(members))
    rows = read(f, 1 << 30)
    at = len(members[0]) + len(members[1])
    assert summary(rows) == [(1, "a"), (2, "b"), (3, "truncated_input")]
    assert f"the {len(members[2])} bytes of the file from byte {at} on were not read" in rows[2]["error"][1]


def test_a_corrupt_first_member_is_a_row_and_the_file_is_read_on(tmp_path: Path) -> None:
    members = [gzip.compress(r) for r in (ok("a"), ok("b"), ok("c"))]
    members[0] = _damage(members[0], crc_only=True)
    f = tmp_path / "f.warc.gz"
    f.write_bytes(b"".join(members))
    frames = [read_spec(s, 1 << 20) for s in plan_inputs([f])]
    assert [(r.url, r.drop_reason) for df in frames for r in df.itertuples()] == [
        (None, "truncated_input"), ("http://a.example/b", None), ("http://a.example/c", None)]
