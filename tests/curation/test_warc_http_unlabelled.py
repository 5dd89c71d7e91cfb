"""A ``response`` record whose WARC header does not say ``Content-Type: application/http`` (the WARC
standard asks for it with SHOULD; some writers leave it out) is read as HTTP when its block opens with
an HTTP status line: its row is the row of the same record with that header. A block that is not HTTP,
and a record of another type, is read as it is.

Records are written byte by byte around real pages (``tests.curation.test_warc_http_bodies``).
"""

from __future__ import annotations

import gzip
import uuid
from pathlib import Path

import pytest

from curation.ingest.warc import iter_warc
from tests.curation.test_warc_http_bodies import chunk, outcome, real_pages

LABEL = "application/http; msgtype=response"
HTML = b"Content-Type: text/html; charset=utf-8\r\n"


def http(body: bytes, headers: bytes = HTML, status: bytes = b"200 OK", version: bytes = b"HTTP/1.1") -> bytes:
    return version + b" " + status + b"\r\n" + headers + b"\r\n" + body


def rec(n: int, block: bytes, ctype: str | None, kind: str = "response") -> bytes:
    """One record; ``ctype``: its WARC ``Content-Type`` (None: no such header line)."""
    head = (
        f"WARC/1.1\r\nWARC-Type: {kind}\r\nWARC-Record-ID: <urn:uuid:{uuid.UUID(int=n)}>\r\n"
        f"WARC-Date: 2024-01-02T03:04:05Z\r\nWARC-Target-URI: http://u.example/{n}\r\n"
        + (f"Content-Type: {ctype}\r\n" if ctype else "")
        + f"Content-Length: {len(block)}\r\n\r\n"
    )
    return head.encode() + block + b"\r\n\r\n"


def read(
    path: Path, blocks: list[bytes], ctype: str | None, gz: bool = True, cut: int = 0, max_bytes: int = 10_000_000
) -> list[dict]:
    """``blocks`` as response records of WARC ``Content-Type`` ``ctype``, one gzip member each (``gz``),
    the file's last ``cut`` bytes left out; the rows read back."""
    data = b"".join(gzip.compress(r) if gz else r for r in (rec(n, b, ctype) for n, b in enumerate(blocks)))
    path.write_bytes(data[: len(data) - cut])
    return list(iter_warc(path, max_bytes))


def same(rows: list[dict]) -> list[dict]:
    """A row without where its record lies (the WARC header lines differ in length)."""
    return [{k: v for k, v in r.items() if k not in ("file", "offset")} for r in rows]


def test_a_404_a_301_and_chunked_bodies_without_the_header_are_read_as_http(tmp_path: Path) -> None:
    p = real_pages()
    te = HTML + b"Transfer-Encoding: chunked\r\n"
    rows = read(
        tmp_path / "u.warc.gz",
        [
            http(p[0], status=b"404 Not Found"),
            http(
                b"<html><body><p>Moved to the other page.</p></body></html>",
                HTML + b"Location: http://u.example/x\r\n",
                b"301 Moved Permanently",
            ),
            http(chunk(p[1]), te),
            http(chunk(gzip.compress(p[2])), te + b"Content-Encoding: gzip\r\n"),
            http(p[3], version=b"HTTP/2"),
        ],
        None,
    )
    assert outcome(rows) == ["http_status", "http_status", "html", "html", "html"]
    assert [r["status"] for r in rows] == [404, 301, 200, 200, 200]
    assert rows[0]["error"][1] == "HTTP status 404" and rows[1]["error"][1] == "HTTP status 301"
    assert [rows[k]["html"] for k in (2, 3, 4)] == [p[k].decode() for k in (1, 2, 3)]  # no chunk-size line, gzip undone
    assert {(r["content_type"], r["charset"]) for r in rows[2:]} == {("text/html", "utf-8")}


@pytest.mark.parametrize("gz", [True, False])
def test_the_rows_are_those_of_the_same_records_with_the_header(tmp_path: Path, gz: bool) -> None:
    """Whatever the HTTP block holds, and whatever else the WARC ``Content-Type`` says."""
    p = real_pages()
    blocks = [
        http(p[0]),
        http(p[1], status=b"404 Not Found"),
        http(chunk(p[2]), HTML + b"Transfer-Encoding: chunked\r\n"),
        http(gzip.compress(p[3]), HTML + b"Content-Encoding: gzip\r\n"),
        http(p[4][:-500], HTML + b"Content-Length: %d\r\n" % len(p[4])),  # the body is cut
        http(p[5], status=b"abc"),  # no status code: a malformed HTTP message
        http(p[0], b"Content-Type: application/json\r\n"),
        http(p[1], b"Content-Type: text/html; charset=iso-8859-1\r\n"),
        http(p[2], version=b"HTTP/1.0"),
        http(gzip.compress(p[3])[:-200], HTML + b"Content-Encoding: gzip\r\n"),
    ]
    want = read(tmp_path / "l.warc", blocks, LABEL, gz)
    assert outcome(want) == [
        "html",
        "http_status",
        "html",
        "html",
        "truncated_input",
        "undecodable",
        "not_html",
        "html",
        "html",
        "truncated_input",
    ]
    for ctype in (None, "text/html"):
        assert same(read(tmp_path / "u.warc", blocks, ctype, gz)) == same(want), ctype


def test_a_record_cut_by_the_end_of_the_file_is_truncated_as_with_the_header(tmp_path: Path) -> None:
    """FastWARC counts only the bytes it holds of a block kept in memory: the bytes the stream lacks still count."""
    p = real_pages()
    for block in (http(p[0]), http(chunk(p[1]), HTML + b"Transfer-Encoding: chunked\r\n")):
        want = read(tmp_path / "l.warc", [http(p[3]), block], LABEL, gz=False, cut=3000)
        got = read(tmp_path / "u.warc", [http(p[3]), block], None, gz=False, cut=3000)
        assert outcome(got) == ["html", "truncated_input"] and same(got) == same(want)
    # a block that is not HTTP is read as it was without the label
    bare = read(tmp_path / "b.warc", [http(p[3]), p[2]], None, gz=False, cut=3000)
    assert outcome(bare) == ["html", "truncated_input"]
    assert bare[1]["error"][1].startswith("record truncated (stream ended)")


def test_a_response_that_is_not_http_and_other_records_are_read_as_they_are(tmp_path: Path) -> None:
    p = real_pages()
    f = tmp_path / "o.warc.gz"
    f.write_bytes(
        gzip.compress(rec(1, p[0], None))
        + gzip.compress(rec(2, p[1], "text/html"))
        + gzip.compress(rec(3, http(p[2], status=b"404 Not Found"), "text/html", kind="resource"))
    )
    rows = list(iter_warc(f, 10_000_000))
    assert outcome(rows) == ["html", "html", "html"] and [r["status"] for r in rows] == [None, None, None]
    assert (
        rows[0]["html"] == p[0].decode() and rows[0]["content_type"] is None and rows[1]["content_type"] == "text/html"
    )
    assert rows[2]["html"].startswith("HTTP/1.1 404 Not Found")  # a resource record holds no HTTP message


@pytest.mark.parametrize("ctype", [None, LABEL])
def test_header_lines_over_the_bound_are_one_row_and_the_file_is_read_on(tmp_path: Path, ctype: str | None) -> None:
    """With the label or without it: the iterator leaves HTTP header lines to the record's own parse."""
    long = http(b"<p>x</p>", HTML + b"X-Long: " + b"a" * (40 << 10) + b"\r\n")
    rows = read(tmp_path / "h.warc.gz", [http(b"<p>one</p>"), long, http(b"<p>three</p>")], ctype, max_bytes=8000)
    assert outcome(rows) == ["html", "too_large", "html"]
    assert rows[1]["error"][1].startswith(
        f"HTTP header lines over {8000 + (32 << 10)} bytes (max_html_bytes plus 32 KiB"
    )


def test_a_page_whose_text_opens_with_http_and_a_digit_is_read_as_a_page(tmp_path: Path) -> None:
    """Only an HTTP message is sniffed: a status line with its code, or one followed by a header line."""
    from curation.ingest.warc_http import HTTP_LINE

    assert HTTP_LINE.match(b"HTTP/1.1 200 OK\r\n") and HTTP_LINE.match(b"HTTP/2 404\r\n") and HTTP_LINE.match(b"HTTP/1.0 301")
    assert HTTP_LINE.match(b"HTTP/1.1 abc\r\nContent-Type: text/html\r\n")  # malformed status, still a message
    assert not HTTP_LINE.match(b"HTTP/2 is a major revision of the protocol.\nIt keeps its semantics.\n")
    assert not HTTP_LINE.match(b"HTTP/1.1 in short: a text\n\nabout HTTP")
