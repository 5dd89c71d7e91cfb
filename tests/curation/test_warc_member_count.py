"""How many records a gzip member that fails its check loses, when the damage garbled its data.

Deflate gives a damaged member's data back without its check: a flipped byte in the compressed data
garbles what follows it, and a record's header lines with it. Here a member's data is compressed as
the damage leaves it, with the check (CRC32 and size) of the bytes the writer meant: the reader meets
what a flipped byte gives, at a place the test chooses. The records of such a member are counted
exactly where they follow one another by their ``Content-Length`` from the member's first byte to its
last; else by their header lines, and the row says "at least": a record whose header lines the damage
garbled is not found. Every record found is a document or a row.
"""

from __future__ import annotations

import io
import struct
import zlib
from pathlib import Path

import pytest

from tests.curation.test_warc_http_bodies import real_pages, response
from tests.curation.test_warc_resync import read

URLS = [f"http://c.example/r{i}" for i in range(15)]


def records() -> list[bytes]:
    """Fifteen response records around real pages (each page three times), uncompressed, as warcio writes them."""
    from warcio.warcwriter import WARCWriter

    out = []
    for i, url in enumerate(URLS):
        buf = io.BytesIO()
        response(WARCWriter(buf, gzip=False), url, real_pages()[i % 5])
        out.append(buf.getvalue())
    return out


def member(meant: bytes, given: bytes | None = None) -> bytes:
    """A gzip member whose data inflates to ``given`` and whose check is that of ``meant``."""
    co = zlib.compressobj(6, zlib.DEFLATED, -15)
    data = co.compress(meant if given is None else given) + co.flush()
    return b"\x1f\x8b\x08\0\0\0\0\0\0\xff" + data + struct.pack("<II", zlib.crc32(meant), len(meant) & 0xFFFFFFFF)


def garble(before: bytes, record: bytes, lines: int) -> list[bytes]:
    """``before`` and ``record`` as deflate gives them after a byte flipped near the end of ``before``'s
    page: 40 bytes of it lost (its ``Content-Length`` no longer ends it), and the first ``lines`` header
    lines of ``record`` garbled."""
    head, _, rest = record.partition(b"\r\n\r\n")
    cut = sum(len(line) + 2 for line in head.split(b"\r\n")[:lines])  # more lines than it has: all of them
    garbled = b"WARCrmg0\r\nWARC-Tpe=" + b"\x8f" * max(cut - 19, 1) + b"\r\n" + head[cut:] + b"\r\n\r\n" + rest
    return [before[:-44] + before[-4:], garbled]


def write(path: Path, second: list[bytes] | None, last: bool = False) -> Path:
    """Three members of five records each; the second (or, ``last``, the third) has ``second`` for its data."""
    recs = records()
    meant = [b"".join(recs[i : i + 5]) for i in (0, 5, 10)]
    k = 2 if last else 1
    members = [member(m, b"".join(second) if second is not None and i == k else None) for i, m in enumerate(meant)]
    path.write_bytes(b"".join(members))
    return path


@pytest.mark.parametrize("last", [False, True])
@pytest.mark.parametrize("lines", [2, 99])
def test_a_record_whose_header_lines_are_garbled_makes_an_at_least_row(tmp_path: Path, last: bool, lines: int) -> None:
    """Record 8 loses bytes and record 9's first header lines (or all of them) are garbled: record 9 is
    not found by its header lines, so the member's records are four found, ``at least 4``, each a row:
    in the second member of three, and in the last member of the file."""
    recs = records()
    k = 10 if last else 5
    f = write(tmp_path / "a.warc.gz", [*recs[k : k + 2], *garble(recs[k + 2], recs[k + 3], lines), recs[k + 4]], last)
    rows = read(f, 1 << 30)
    lost = [r for r in rows if "error" in r]
    assert [r["line"] for r in lost] == [k + 1, k + 2, k + 3, k + 4] and len(rows) == 14
    why = lost[0]["error"][1]
    assert "failed its check" in why and f"at least 4 document record(s) (row(s) {k + 1}..{k + 4}) are not kept" in why
    assert "a record whose header lines it garbled is not counted" in why
    assert all(f"record {k + 1}'s row says why" in r["error"][1] for r in lost[1:])


def test_damage_that_leaves_the_records_lengths_whole_is_an_exact_count(tmp_path: Path) -> None:
    """Bytes changed inside a page, none lost: the records follow one another to the member's end, so
    the member's five records are five rows, said without "at least"."""
    recs = records()
    changed = recs[7].replace(b"<", b"(", 3)
    assert len(changed) == len(recs[7]) and changed != recs[7]
    rows = read(write(tmp_path / "e.warc.gz", [*recs[5:7], changed, *recs[8:10]]), 1 << 30)
    assert [r["line"] for r in rows if "error" in r] == [6, 7, 8, 9, 10] and len(rows) == 15
    why = rows[5]["error"][1]
    assert "its 5 document record(s) (row(s) 6..10) are not kept" in why and "at least" not in why
    assert "counted by walking their Content-Length from the member's first byte to its last" in why
