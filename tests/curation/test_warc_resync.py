"""A damaged record in the middle of a ``.warc.gz`` (no ``Content-Length``, junk between gzip
members) costs that record only: one ``truncated_input`` row, then reading goes on at the next
gzip member, with the same rows however the file is partitioned. A plain ``.warc`` is not read
past it, and its row says how many bytes were not read."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from curation.ingest.warc import iter_warc, until_cut
from curation.ingest.warc_plan import warc_chunks
from curation.schema import DropReason
from tests.curation.test_warc_damaged import ok, write


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
