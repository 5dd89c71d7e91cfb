"""A ``response`` record read as HTTP when its block opens with an HTTP status line, whatever its WARC
``Content-Type`` says.

FastWARC parses a record's HTTP headers only when its WARC ``Content-Type`` starts with
``application/http``, which the WARC standard asks for (SHOULD) and some writers leave out. Read
without its HTTP header lines, a 404 page is a document, a chunked body keeps its chunk-size lines
and a gzip body reads as binary. Such a record is parsed by FastWARC's own HTTP parser, with the
limits the iterator uses, so its row is the row the same record with that header gets. A block that
does not open as an HTTP message (:data:`HTTP_LINE`: a page stored alone, or one whose text starts
``HTTP/2 is…``) is read as it is.
"""

from __future__ import annotations

import re
from typing import Any

from curation.ingest.warc_body import Error
from curation.schema import DropReason

#: How an HTTP message opens: a status line with its code (``HTTP/1.1 200``, ``HTTP/2 404``), or a status
#: line of another shape (``HTTP/1.1 abc``, malformed) followed by a header line (``Content-Type: …``). A
#: page whose text opens with ``HTTP/2 is a major revision…`` is neither.
HTTP_LINE = re.compile(
    rb"HTTP/[0-9](?:\.[0-9])? (?:[0-9]{3}(?:[ \r\n]|$)|[^\r\n]*\r?\n[!#$%&'*+.^_`|~0-9A-Za-z-]+:)"
)


def as_http(rec: Any, max_bytes: int) -> tuple[int, Error | None]:
    """Parse the HTTP header lines of ``rec`` (a FastWARC response record not marked HTTP) if its block
    opens with an HTTP status line. ``(missing, error)``: ``missing``, the bytes of the block the stream
    lacks (it ended inside the block; FastWARC counts what it holds of a frozen block, so the length the
    record declares is its ``content_length`` plus these); ``error``, header lines over ``max_bytes`` plus
    32 KiB (the iterator's bound, where the file could not be read on; here the block is in memory).

    The block is kept in memory (``freeze``) so its first bytes can be read twice. A block over the most
    a usable page can take (header lines up to that bound and a body up to ``max_bytes``) is
    ``too_large`` whatever it holds, and is left unread.
    """
    size, limit = rec.content_length, max_bytes + (32 << 10)
    if size > max_bytes + limit:
        return 0, None
    rec.freeze()  # what the stream holds of the block: its content_length is that, fewer bytes where it was cut
    missing = size - rec.content_length
    head = rec.reader.read(1024)  # the status line and the start of the next
    rec.reader.seek(0)
    if HTTP_LINE.match(head):
        rec.is_http = True  # sets the WARC Content-Type that FastWARC reads HTTP records by
        try:
            rec.parse_http(auto_decode="none", max_header_len=limit)
        except OSError as exc:
            return missing, (
                DropReason.TOO_LARGE,
                f"HTTP header lines over {limit} bytes (max_html_bytes plus 32 KiB; FastWARC: {exc})",
            )
    return missing, None
