"""A ``response`` record read as HTTP when its block opens with an HTTP status line, whatever its WARC
``Content-Type`` says.

FastWARC parses a record's HTTP headers only when its WARC ``Content-Type`` starts with
``application/http``, which the WARC standard asks for (SHOULD) and some writers leave out. Read
without its HTTP header lines, a 404 page is a document, a chunked body keeps its chunk-size lines
and a gzip body reads as binary. Such a record is parsed by FastWARC's own HTTP parser, with the
limits a labelled one is parsed with, so its row is the row the same record with that header gets. A block that
does not open as an HTTP message (:data:`HTTP_LINE`: a page stored alone, or one whose text starts
``HTTP/2 is…``) is read as it is.

FastWARC's HTTP parser ends a header line at CRLF only: a message whose lines end in a bare LF reads
as one header line that runs to the block's end, and the body is lost. RFC 9112 §2.2 lets a recipient
accept a bare LF, so where the status line ends in one the header block is cut at its first empty
line here, its lines given CRLF ends, and then parsed (:func:`lf_header`); header lines that no
empty line ends within the bound are an ``undecodable`` row that says so. The iterator leaves HTTP
parsing to :func:`as_http` for every record (``parse_http=False``) so such a block is still whole here.
"""

from __future__ import annotations

import re
from typing import Any

from curation.ingest.warc_body import Error
from curation.schema import DropReason

#: How an HTTP message opens: a status line with its code (``HTTP/1.1 200``, ``HTTP/2 404``), or a status
#: line of another shape (``HTTP/1.1 abc``, malformed) followed by a header line (``Content-Type: …``). A
#: page whose text opens with ``HTTP/2 is a major revision…`` is neither.
HTTP_LINE = re.compile(rb"HTTP/[0-9](?:\.[0-9])? (?:[0-9]{3}(?:[ \r\n]|$)|[^\r\n]*\r?\n[!#$%&'*+.^_`|~0-9A-Za-z-]+:)")


def as_http(rec: Any, max_bytes: int, sniff: bool) -> tuple[int, Error | None, Any]:
    """Parse the HTTP header lines of ``rec`` (a FastWARC record read with ``parse_http=False``) if its
    WARC ``Content-Type`` marks it HTTP, or, ``sniff`` (a response record), if its block opens with an
    HTTP status line. ``(missing, error, msg)``: ``missing``, the bytes of the block the stream lacks (it
    ended inside the block; FastWARC counts what it holds of a frozen block, so the length the record
    declares is its ``content_length`` plus these); ``error``, header lines over ``max_bytes`` plus
    32 KiB (``too_large``), or lines that end in a bare LF with no empty line after them (``undecodable``); ``msg``, the record to read
    the HTTP message from: ``rec``, or a record of its own holding the block with CRLF header lines (:func:`lf_header`).

    The block is kept in memory (``freeze``) so its first bytes can be read twice. A block over the most
    a usable page can take (header lines up to that bound and a body up to ``max_bytes``) is
    ``too_large`` whatever it holds: it is not frozen, and only a marked one has its header lines parsed.
    """
    size, limit = rec.content_length, max_bytes + (32 << 10)
    if size > max_bytes + limit:
        return 0, _parse(rec, limit) if rec.is_http else None, rec
    rec.freeze()  # what the stream holds of the block: its content_length is that, fewer bytes where it was cut
    missing = size - rec.content_length
    head = rec.reader.read(1024)  # the status line and the start of the next
    rec.reader.seek(0)
    if not rec.is_http and not (sniff and HTTP_LINE.match(head)):
        return missing, None, rec
    end = head.find(b"\n")
    if end > 0 and head[end - 1] != 13:  # the status line ends in a bare LF
        msg, err = lf_header(rec, limit)
        return missing, err or _parse(msg, limit), msg
    return missing, _parse(rec, limit), rec


def _parse(rec: Any, limit: int) -> Error | None:
    rec.is_http = True  # sets the WARC Content-Type that FastWARC reads HTTP records by
    try:
        rec.parse_http(auto_decode="none", max_header_len=limit)
    except OSError as exc:
        return (
            DropReason.TOO_LARGE,
            f"HTTP header lines over {limit} bytes (max_html_bytes plus 32 KiB; FastWARC: {exc})",
        )
    return None


_EMPTY_LINE = re.compile(rb"\n\r?\n")  # the empty line that ends header lines ending in LF (or some in CRLF)


def lf_header(rec: Any, limit: int) -> tuple[Any, Error | None]:
    """A record of its own (the iterator goes on by ``rec``'s length) holding the HTTP block of frozen
    ``rec`` with its header lines, which end in a bare LF, given CRLF ends up to the first empty line
    (the body after it left as it is), so FastWARC's parser reads them; ``(rec, undecodable error)``
    where no empty line comes within ``limit`` bytes.

    >>> from fastwarc.warc import WarcRecord
    >>> rec = WarcRecord()
    >>> rec.set_bytes_content(b"HTTP/1.1 200 OK\\nContent-Type: text/html\\n\\n<p>a\\n\\nb</p>")
    >>> msg, err = lf_header(rec, 100)
    >>> err, _parse(msg, 100), msg.http_headers.status_code, msg.reader.read()
    (None, None, 200, b'<p>a\\n\\nb</p>')
    """
    block = rec.reader.read()
    blank = _EMPTY_LINE.search(block, 0, limit)
    if blank is None:
        return rec, (
            DropReason.UNDECODABLE,
            (
                f"HTTP header lines end in LF, not CRLF, and no empty line ends them within {limit} bytes "
                "(max_html_bytes plus 32 KiB): the block holds no header block to split from a body"
            ),
        )
    from fastwarc.warc import WarcRecord

    lines = [line.removesuffix(b"\r") for line in block[: blank.start()].split(b"\n")]
    msg = WarcRecord()
    msg.set_bytes_content(b"\r\n".join(lines) + b"\r\n\r\n" + block[blank.end() :])
    return msg, None
