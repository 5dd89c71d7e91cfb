"""Hostile and damaged WARC/WET input: every record is read, decoded within bounds, or ledgered; never a traceback."""

from __future__ import annotations

import gzip
import random
import tracemalloc
import uuid
import zlib
from pathlib import Path

import pytest

from curation.ingest.inputs import InputError
from curation.ingest.warc import iter_warc
from curation.ingest.warc_plan import warc_chunks
from curation.schema import DropReason

# records written byte by byte, so a test can make one wrong on purpose (also used by tests/pipelines/test_ingest_crawl_damaged.py)


def page(tag: str) -> bytes:
    return (f"<html><body><article><h1>{tag}</h1>" + f"<p>Page {tag}: engineers test water samples every day, adjust "
            "chlorine and replace pipes before they fail. </p>" * 15 + "</article></body></html>").encode()


def rec(tag: str, body: bytes, http_extra: bytes = b"", clen_delta: int = 0, uri: str | None = None) -> bytes:
    http = b"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n" + http_extra + b"\r\n" + body
    h = (f"WARC/1.1\r\nWARC-Type: response\r\nWARC-Record-ID: <urn:uuid:{uuid.uuid4()}>\r\nWARC-Date: 2024-01-02T03:04:05Z\r\n"
         f"WARC-Target-URI: {uri or 'http://a.example/' + tag}\r\nContent-Type: application/http; msgtype=response\r\n"
         f"Content-Length: {len(http) + clen_delta}\r\n\r\n").encode()
    return h + http + b"\r\n\r\n"


def ok(tag: str) -> bytes:
    return rec(tag, page(tag))


def long_warc_header(tag: str, size: int = 80_000) -> bytes:
    """A record with a WARC header line of ``size`` bytes: over the bound, FastWARC's iterator reads no further."""
    return rec(tag, page(tag)).replace(b"WARC-Date:", b"WARC-Note: " + b"a" * size + b"\r\nWARC-Date:", 1)


def wet(tag: str, body: bytes) -> bytes:
    return (f"WARC/1.0\r\nWARC-Type: conversion\r\nWARC-Record-ID: <urn:uuid:{uuid.uuid4()}>\r\nWARC-Date: 2024-01-02T03:04:05Z\r\n"
            f"WARC-Target-URI: http://w.example/{tag}\r\nContent-Type: text/plain\r\nContent-Length: {len(body)}\r\n\r\n").encode() + body + b"\r\n\r\n"


def chunked(b: bytes) -> bytes:
    return b"".join(f"{len(b[i:i + 100]):x}\r\n".encode() + b[i:i + 100] + b"\r\n" for i in range(0, len(b), 100)) + b"0\r\n\r\n"


def write(path: Path, recs: list[bytes], gz: bool = True, tail: bytes = b"") -> Path:
    """One gzip member per record (as Common Crawl writes them), or a plain WARC."""
    path.write_bytes(b"".join(gzip.compress(r) if gz else r for r in recs) + tail)
    return path


GZ = b"Content-Encoding: gzip\r\n"


def reasons(rows: list[dict]) -> list:
    return [r["error"][0] if "error" in r else r.get("html", r.get("text", ""))[:6] for r in rows]


def test_a_chunked_gzip_body_does_not_end_the_file(tmp_path: Path) -> None:
    body = chunked(gzip.compress(page("gz")))
    f = write(tmp_path / "a.warc.gz", [ok("one"), rec("gz", body, GZ + b"Transfer-Encoding: chunked\r\n"), ok("two"), ok("three")])
    rows = list(iter_warc(f, 10_000_000))
    assert [r["url"] for r in rows] == [f"http://a.example/{t}" for t in ("one", "gz", "two", "three")]
    assert all("html" in r for r in rows) and "Page gz" in rows[1]["html"]
    assert [c.docs for c in warc_chunks(f, 1 << 30)] == [4]


def test_fewer_records_than_planned_is_a_ledger_row(tmp_path: Path) -> None:
    f = write(tmp_path / "a.warc.gz", [ok("one"), ok("two")])
    *kept, last = list(iter_warc(f, 10_000_000, expected=3))
    assert len(kept) == 2 and last["error"][0] == DropReason.TRUNCATED_INPUT and last["line"] == 3
    assert "read 2 of the 3" in last["error"][1]


@pytest.mark.parametrize("body", [b"raw", b"plain"])
def test_a_mislabelled_gzip_body_is_read_as_what_it_is(tmp_path: Path, body: bytes) -> None:
    co = zlib.compressobj(wbits=-15)
    payload = co.compress(page("x")) + co.flush() if body == b"raw" else page("x")
    label = b"Content-Encoding: deflate\r\n" if body == b"raw" else GZ
    rows = list(iter_warc(write(tmp_path / "b.warc.gz", [ok("one"), rec("x", payload, label), ok("two")]), 10_000_000))
    assert len(rows) == 3 and "Page x" in rows[1]["html"]


def test_a_corrupt_gzip_body_is_one_row(tmp_path: Path) -> None:
    bad = bytearray(gzip.compress(page("x"))); bad[20:40] = b"\xff" * 20  # noqa: E702
    rows = list(iter_warc(write(tmp_path / "b.warc.gz", [ok("one"), rec("x", bytes(bad), GZ), ok("two")]), 10_000_000))
    assert reasons(rows)[1] in (DropReason.UNDECODABLE, DropReason.TRUNCATED_INPUT) and len(rows) == 3


@pytest.mark.parametrize("case", ["short", "long", "header80k"])
def test_a_record_fastwarc_cannot_read_ends_the_file_with_one_row(tmp_path: Path, case: str) -> None:
    bad = {"short": rec("bad", page("bad"), clen_delta=-500), "long": rec("bad", page("bad"), clen_delta=500),
           "header80k": long_warc_header("bad")}[case]
    # WARC header lines are read up to max_html_bytes plus 32 KiB (30,000 + 32,768 here)
    rows = list(iter_warc(write(tmp_path / "d.warc.gz", [ok("one"), bad, ok("two")]), 30_000, expected=3))
    assert "html" in rows[0] and rows[-1]["error"][0] == DropReason.TRUNCATED_INPUT and rows[-1]["stopped"]
    assert "FastWARC stopped" in rows[-1]["error"][1] and len(rows) <= 3


def test_nothing_readable_is_exit_4_naming_the_file(tmp_path: Path) -> None:
    f = write(tmp_path / "z.warc.gz", [long_warc_header("bad"), ok("two")])
    with pytest.raises(InputError, match="z.warc.gz"):
        list(iter_warc(f, 30_000))


def test_a_plain_warc_named_gz_is_read(tmp_path: Path) -> None:
    rows = list(iter_warc(write(tmp_path / "p.warc.gz", [ok("one"), ok("two")], gz=False), 10_000_000))
    assert [("html" in r) for r in rows] == [True, True]


def test_a_gzip_bomb_is_too_large_in_bounded_memory(tmp_path: Path) -> None:
    import tracemalloc

    co = zlib.compressobj(9, zlib.DEFLATED, 31)
    bomb = co.compress(b"<html><body><p>") + b"".join(co.compress(b"a" * (1 << 20)) for _ in range(50)) + co.flush()
    f = write(tmp_path / "f.warc.gz", [ok("one"), rec("bomb", bomb, GZ), ok("two")])
    tracemalloc.start()
    rows = list(iter_warc(f, 1_000_000))
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert rows[1]["error"][0] == DropReason.TOO_LARGE and "html" in rows[2]
    assert peak < 20_000_000  # the 50 MB body is never decoded whole


def test_a_cut_gzip_body_is_truncated_input(tmp_path: Path) -> None:
    cut = gzip.compress(page("cut") + bytes(range(256)) * 4)[:300]
    rows = list(iter_warc(write(tmp_path / "h.warc.gz", [ok("one"), rec("cut", cut, GZ), ok("two")]), 10_000_000))
    assert reasons(rows)[1] == DropReason.TRUNCATED_INPUT and "ends early" in rows[1]["error"][1]


def test_angle_brackets_around_the_target_uri_are_dropped(tmp_path: Path) -> None:
    f = write(tmp_path / "j.warc.gz", [rec("b", page("b"), uri="<http://b.example/x>")])
    assert [r["url"] for r in iter_warc(f, 10_000_000)] == ["http://b.example/x"]


def test_wet_text_is_checked_as_jsonl_text_is(tmp_path: Path) -> None:
    recs = [wet("nul", b"Plain text abc\x00def " * 20), wet("u16", "Plain UTF-16 text. ".encode("utf-16") * 1),
            wet("u16b", b"\xff\xfe" + "Plain UTF-16 text, twice. ".encode("utf-16-le"))]
    rows = list(iter_warc(write(tmp_path / "i.warc.wet.gz", recs), 10_000_000))
    assert rows[0]["error"][0] == DropReason.NUL_BYTE
    assert rows[1]["text"] == "Plain UTF-16 text. " and rows[2]["text"].startswith("Plain")


def test_wet_text_of_invisible_characters_alone_is_empty_as_in_jsonl(tmp_path: Path) -> None:
    """A JSONL text of only a BOM and zero-width spaces is empty_text; the same WET text was kept."""
    recs = [wet("zw", " \u200b\u200c\u2060 \n".encode()), wet("ok", "\u200bVisible text.".encode())]
    rows = list(iter_warc(write(tmp_path / "z.warc.wet.gz", recs), 10_000_000))
    assert rows[0]["error"][0] == DropReason.EMPTY_TEXT and rows[1]["text"] == "\u200bVisible text."


def test_each_partition_knows_how_many_documents_it_holds(tmp_path: Path) -> None:
    f = write(tmp_path / "m.warc.gz", [ok(f"p{i}") for i in range(40)])
    chunks = warc_chunks(f, 20_000)
    assert len(chunks) > 1 and sum(c.docs for c in chunks) == 40
    for c in chunks:
        rows = list(iter_warc(f, 10_000_000, c.start, c.end, c.first_line, expected=c.docs))
        assert len(rows) == c.docs and all("html" in r for r in rows)


def test_zero_padding_after_the_last_member_loses_no_record(tmp_path: Path) -> None:
    """Zeros after the last gzip member (which gzip skips) were a truncated_input row and a 'not read to
    the end' warning, though every record was read; zeros followed by other bytes still are a row."""
    recs = [ok(f"z{i}") for i in range(6)]
    padded = write(tmp_path / "z.warc.gz", recs, tail=bytes(1024))
    for c in warc_chunks(padded, 2_000):  # partitions too: the last one holds the padding
        rows = list(iter_warc(padded, 10_000_000, c.start, c.end, c.first_line, expected=c.docs))
        assert len(rows) == c.docs and all("html" in r for r in rows)
    assert sum(c.docs for c in warc_chunks(padded, 2_000)) == 6
    rows = list(iter_warc(write(tmp_path / "j.warc.gz", recs, tail=bytes(64) + b"junk"), 10_000_000))
    assert [r.get("error", (None,))[0] for r in rows][-1] == DropReason.TRUNCATED_INPUT and len(rows) == 7


def test_a_long_header_line_after_a_damaged_member_is_never_held_when_planned(tmp_path: Path) -> None:
    """The planning pass reads a header line 64 KiB at a time and keeps only the headers it reads: the
    record reading goes on at after a damaged member, whose header holds a 32 MB line, costs no 32 MB."""
    size = 32_000_000
    line = b"X-Long: " + random.Random(0).randbytes(size // 2).hex().encode() + b"\r\n"  # no two pieces alike
    members = [gzip.compress(r, compresslevel=1) for r in (ok("a"), ok("x"), ok("b").replace(b"\r\n", b"\r\n" + line, 1), ok("c"))]
    members[1] = members[1][:40] + bytes([members[1][40] ^ 0xFF]) + members[1][41:]
    f = tmp_path / "long.warc.gz"
    f.write_bytes(b"".join(members))
    tracemalloc.start()
    try:
        chunks = warc_chunks(f, 1 << 30)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < size // 4, f"peak {peak:,} bytes for a {size:,}-byte header line"
    assert [c.start for c in chunks] == [0, len(members[0]) + len(members[1])] and chunks[0].cut is not None
    assert [c.docs for c in chunks] == [1, 2]  # the damaged record is the first chunk's row; b and c are read on
