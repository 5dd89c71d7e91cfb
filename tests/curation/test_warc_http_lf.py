"""An HTTP message whose header lines end in a bare LF (RFC 9112 §2.2 lets a recipient accept it) is
read as HTTP, with the WARC label ``application/http`` or without it: its row is the row of the same
message with CRLF header lines, and the records after it are read. Header lines in LF that no empty
line ends within the bound are one ``undecodable`` row that says so, never a page with an empty body.

Records are written byte by byte around real pages (``tests.curation.test_warc_http_bodies``).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.curation.test_warc_http_bodies import outcome, real_pages
from tests.curation.test_warc_http_unlabelled import LABEL, http, read, same

HEADERS = b"Content-Type: text/html; charset=utf-8\r\nX-Served-By: cache-fra\r\n"


def lf(message: bytes) -> bytes:
    """``message`` with the line ends of its status and header lines a bare LF (its body as it is)."""
    head, _, body = message.partition(b"\r\n\r\n")
    return head.replace(b"\r\n", b"\n") + b"\n\n" + body


@pytest.mark.parametrize("ctype", [LABEL, None])
def test_header_lines_that_end_in_lf_are_read_as_crlf_ones_are(tmp_path: Path, ctype: str | None) -> None:
    p = real_pages()
    messages = [http(p[0], HEADERS), http(p[1], HEADERS, status=b"404 Not Found"), http(p[2], HEADERS)]
    rows = read(tmp_path / "lf.warc.gz", [lf(m) for m in messages], ctype)
    crlf = read(tmp_path / "crlf.warc.gz", messages, ctype)
    assert outcome(rows) == ["html", "http_status", "html"]
    assert same(rows) == same(crlf)
    assert rows[0]["html"] == p[0].decode() and rows[0]["content_type"] == "text/html"


def test_a_body_with_empty_lines_is_kept_whole(tmp_path: Path) -> None:
    """The header block ends at the first empty line: the body's own empty lines (LF, or CRLF) stay in it."""
    body = real_pages()[3] + b"\n\n<p>after an empty line</p>\r\n\r\n<p>and another</p>"
    rows = read(tmp_path / "b.warc.gz", [lf(http(body, HEADERS))], LABEL)
    assert outcome(rows) == ["html"] and rows[0]["html"] == body.decode()


def test_lf_header_lines_with_no_empty_line_after_them_are_one_undecodable_row(tmp_path: Path) -> None:
    """A status line in LF and no empty line within max_html_bytes plus 32 KiB: not a page with an empty
    body (which extraction would blame), a row that names the line ends; the next record is read."""
    p = real_pages()
    endless = b"HTTP/1.1 200 OK\nContent-Type: text/html\n" + b"X-Note: a\n" * 8000 + p[4][:20_000]  # 80 KB of lines
    rows = read(tmp_path / "n.warc.gz", [endless, http(p[5][:20_000], HEADERS)], LABEL, max_bytes=40_000)
    assert outcome(rows) == ["undecodable", "html"]
    assert rows[0]["error"][1].startswith("HTTP header lines end in LF, not CRLF, and no empty line ends them")
