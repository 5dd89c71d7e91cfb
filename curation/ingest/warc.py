"""Crawl input: WARC / WET records and plain HTML files → schema rows with their HTML beside them.

Read with FastWARC (``benchmarks/extract/bench_crawl.py`` measured it against warcio), bodies
undecoded: each is decoded on its own (its transfer codings, chunked first, then its content encoding: :mod:`curation.ingest.warc_body`),
so one bad body is one row and the file is read on. Only ``response`` and
``resource`` records (WARC) and ``conversion`` records (WET, text already extracted) become
documents; ``request``, ``metadata``, ``warcinfo`` and ``revisit`` records are not documents and are
not read. A ``response`` record whose block opens with an HTTP status line is read as HTTP whatever
its WARC ``Content-Type`` says (:mod:`curation.ingest.warc_http`). Every response that cannot be
used is a row with a :class:`DropReason`: non-2xx status, non-HTML or binary content, a truncated
record, a page over ``max_bytes``, a page no charset decodes. The HTML of a usable page goes to the
``_html`` column (text left empty): the ingest stage extracts the main content in its own cached
sub-step and keeps the HTML as an artifact.

>>> decode_html(b"<meta charset='gb2312'>" + "中文".encode("gbk"), None)[1]
'gbk'
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd

from curation.ingest.charsets import charset_label, codec, prefer_utf8, relabel
from curation.ingest.records import blank
from curation.ingest.streams import Window
from curation.ingest.warc_body import decode_content, decode_transfer
from curation.ingest.warc_ends import DECOMPRESSED, Decompressed, stopped, until_cut  # noqa: F401 -- until_cut: read from here too
from curation.ingest.warc_ends import row as _row
from curation.ingest.warc_http import as_http
from curation.ingest.warc_resync import only_padding_after
from curation.schema import DOC_COLUMNS, DROP_DETAIL, DROP_REASON, SOURCES, DropReason, detail_json
from curation.text import content_id

HTML_TYPES = ("text/html", "application/xhtml+xml", "application/xml+html")
_META_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?\s*([A-Za-z0-9_:.\-]+)""", re.I)
_WIDE_BOMS = ((b"\xff\xfe\x00\x00", "utf-32"), (b"\x00\x00\xfe\xff", "utf-32"), (b"\xff\xfe", "utf-16"), (b"\xfe\xff", "utf-16"))
_BINARY_MAGIC = (b"%PDF", b"\x89PNG", b"GIF8", b"\xff\xd8\xff", b"PK\x03\x04", b"\x1f\x8b", b"RIFF", b"\x00\x00\x01\x00")

#: Columns of a crawl frame besides the schema's: the page HTML (null for WET text) and the location.
CRAWL_COLUMNS = ("_html", "_file", "_line")


def decode_html(payload: bytes, declared: str | None) -> tuple[str | None, str | None]:
    """``(text, charset)``: the HTTP header's charset, else ``<meta charset>``, else UTF-8, else detected.

    Labels are read as browsers read them, and a single-byte label on a UTF-8 payload reads UTF-8
    (:mod:`curation.ingest.charsets`); the charset returned is the encoding's WHATWG name. Each
    candidate must decode the whole payload strictly; ``(None, None)`` when none does.
    """
    head = _META_CHARSET.search(payload[:4096])
    candidates = [declared, head.group(1).decode("ascii", "replace") if head else None, "utf-8"]
    for label in candidates:
        name = charset_label(label)
        if not name:
            continue
        cs = prefer_utf8(codec(name), payload)
        if cs != "utf-8" and (found := relabel(name, payload)) != name:  # a Latin default on a page of another script
            name, cs = found, codec(found)
        try:
            return payload.decode(cs), "utf-8" if cs == "utf-8" else name
        except (LookupError, UnicodeDecodeError):
            continue
    from resiliparse.parse.encoding import detect_encoding

    guess = charset_label(detect_encoding(payload)) or "utf-8"
    try:
        return payload.decode(codec(guess)), guess
    except (LookupError, UnicodeDecodeError):
        return None, None


def is_binary(payload: bytes) -> bool:
    """Known binary signatures, or NUL bytes in the first 1 KiB (HTML in UTF-16 is rare enough)."""
    return payload.startswith(_BINARY_MAGIC) or b"\x00" in payload[:1024]


def iter_warc(path: Path, max_bytes: int, start: int = 0, end: int = -1, first_line: int = 1,
              expected: int | None = None, label: str | None = None, one_member: bool = False) -> Iterator[dict[str, Any]]:
    """One dict per response/conversion/resource record: id, url, date, meta, and html or text or an error.

    ``start``/``end``: the compressed byte range of a partition (records numbered from ``first_line``);
    ``expected``: its document records as the planning pass counted them (which also ends a partition
    before a damaged stretch of a ``.warc.gz``). A file FastWARC cannot read on (junk after the last
    gzip member, a wrong ``Content-Length`` in a file not planned record by record, WARC header lines over
    ``max_bytes`` plus 32 KiB) ends with one
    ``truncated_input`` row after the records read so far; one where nothing could be read at all is
    :class:`~curation.ingest.inputs.InputError` (exit 4) naming it. Fewer records than planned is a row too.
    ``label``: how rows name the file (``str(path)`` if None). ``one_member``: a ``.warc.gz`` of one gzip member,
    whose rows give the record's offset in the decompressed stream (:mod:`curation.ingest.warc_ends`).
    HTTP (and WARC) header lines are read up to ``max_bytes`` plus 32 KiB, not FastWARC's 32 KiB: a page
    stored without its HTTP header block, read as header lines, is one ``undecodable`` row, not the end of the file;
    HTTP header lines over that bound are one ``too_large`` row (:func:`~curation.ingest.warc_http.as_http`).
    """
    from fastwarc.stream_io import GzipReader
    from fastwarc.warc import ArchiveIterator, WarcRecordType

    types = WarcRecordType.response | WarcRecordType.conversion | WarcRecordType.resource
    label = str(path) if label is None else label
    # a file object, not the name: FastWARC would pick gzip by the name, not the bytes
    stream: Any = open(path, "rb") if (start, end) == (0, -1) else Window(path, start, end if end >= 0 else path.stat().st_size)  # noqa: SIM115
    number, offset = first_line - 1, start
    size = end if end >= 0 else path.stat().st_size
    with open(path, "rb") as fh:
        fh.seek(start)
        gz = GzipReader(stream) if fh.read(2) == b"\x1f\x8b" else None  # it knows where the member it reads starts
    inner = one_member and gz is not None and start == 0  # offsets in the decompressed stream: FastWARC counts them
    mark = DECOMPRESSED if inner else {}
    member = start  # the compressed byte of the gzip member (the record, in a plain file) last read
    with stream:
        # bodies undecoded: FastWARC's decoding ends the whole iteration at one bad body (warc_body decodes them);
        # HTTP header lines parsed per record (warc_http.as_http: one bad header block is one row), WARC ones up to a page's size
        it = iter(ArchiveIterator(Decompressed(gz) if inner else gz or stream, record_types=types, parse_http=False,
                                  auto_decode="none", max_header_len=max_bytes + (32 << 10), fsspec_args=False))
        while True:
            try:
                rec = next(it)
            except StopIteration:
                break
            except OSError as exc:
                if gz is not None and number >= first_line and number - first_line + 1 >= (expected or 0) \
                        and only_padding_after(path, member, size):  # zeros after the last member: no record lost
                    break
                yield stopped(label, number + 1, offset, exc, start == 0 and number < first_line, expected, first_line,
                              (member, size - member), inner)
                return
            number += 1
            # the gzip member where the record's headers were read (its stream_pos there is a read position, not a member)
            member = start + ((gz.frame_start_position() or 0) if gz is not None else int(rec.stream_pos))
            offset = int(rec.stream_pos) if inner else member
            try:
                out = _record(
                    rec,
                    label,
                    number,
                    offset,
                    max_bytes,
                    rec.record_type == WarcRecordType.conversion,
                    rec.record_type == WarcRecordType.response,
                )
            except OSError as exc:
                yield stopped(label, number, offset, exc, False, expected, first_line, (member, size - member), inner)
                return
            yield {**out, **mark}
    read = number - first_line + 1
    if expected is not None and read < expected:
        out = _row(label, number + 1, id=None, url=None, date=None, offset=offset, content_type=None, status=None)
        yield {**out, **mark, "stopped": True, "error": (DropReason.TRUNCATED_INPUT, f"FastWARC read {read} of the {expected} "
               f"document records planned; records {number + 1}..{first_line + expected - 1} were not read")}


def _url(rec: Any) -> str | None:
    """``WARC-Target-URI`` without the angle brackets WARC/1.0 writers put around it."""
    url = (rec.headers.get("WARC-Target-URI") or "").strip()
    return (url[1:-1].strip() if url.startswith("<") and url.endswith(">") else url) or None


def _record(
    rec: Any, label: str, number: int, offset: int, max_bytes: int, is_wet: bool, is_response: bool = False
) -> dict[str, Any]:
    """One record's row: a page's HTML, a WET record's text (``is_wet``), or the reason it is neither.

    A ``response`` record (``is_response``) whose block opens with an HTTP status line is read as HTTP
    whatever its WARC ``Content-Type`` says, one whose header lines end in a bare LF too; ``msg``: the record its HTTP
    message (or block) is read from, ``rec`` or a copy with CRLF header lines (:mod:`~curation.ingest.warc_http`).
    """
    rid = (rec.record_id or "").strip("<>").removeprefix("urn:uuid:")
    date = rec.record_date.isoformat() if rec.record_date else rec.headers.get("WARC-Date")
    out = _row(label, number, id=rid or None, url=_url(rec), date=date, offset=offset)
    missing, err, msg = as_http(rec, max_bytes, is_response) if is_response or rec.is_http else (0, None, rec)
    http = msg.http_headers if msg.is_http else None
    ctype = (rec.headers.get("Content-Type") if is_wet or not msg.is_http else msg.http_content_type) or ""
    out["content_type"] = ctype.split(";")[0].strip().lower() or None
    status = http.status_code if http is not None else None
    out["status"] = status
    if err is not None:
        return {**out, "error": err}
    expected = msg.content_length + missing  # the bytes the record says it holds
    if expected > max_bytes:
        return {**out, "error": (DropReason.TOO_LARGE, f"{expected} bytes > max_html_bytes {max_bytes}")}
    payload = msg.reader.read(max_bytes + 1)  # at most the record's bytes (checked above), undecoded
    chunked = http is not None and bool(http.get("Transfer-Encoding"))  # the decoded length differs
    if rec.headers.get("WARC-Truncated") or len(payload) < expected:
        why = rec.headers.get("WARC-Truncated") or "stream ended"
        return {**out, "error": (DropReason.TRUNCATED_INPUT, f"record truncated ({why}) after {len(payload)} bytes")}
    if http is not None and status is None and not is_wet:  # its HTTP header lines, status line first, did not parse
        line = (http.status_line or "")[:60]
        return {**out, "error": (DropReason.UNDECODABLE, f"malformed HTTP message: its first line {line!r} is no HTTP status "
                                 "line (a response record holds the HTTP status line and headers before the body)")}
    if status is not None and not 200 <= status < 300:
        return {**out, "error": (DropReason.HTTP_STATUS, f"HTTP status {status}")}
    declared = (http.get("Content-Length") or "").strip() if http is not None and not chunked else ""
    if declared.isdecimal() and int(declared) != len(payload):  # the body is cut, or holds bytes of what follows it
        return {**out, "error": (DropReason.TRUNCATED_INPUT, f"the body has {len(payload)} bytes, its HTTP Content-Length says {declared}")}
    if chunked:  # chunked, and any coding listed before it (gzip, chunked)
        payload, err = decode_transfer(payload, http.get("Transfer-Encoding"), max_bytes)
        if err is not None:
            return {**out, "error": err}
    if http is not None and http.get("Content-Encoding"):
        payload, err = decode_content(payload, http.get("Content-Encoding"), max_bytes)
        if err is not None:
            return {**out, "error": err}
    if is_wet:
        return {**out, **_wet(payload)}
    return {**out, **_page(payload, out["content_type"], charset_label(msg.http_charset) if msg.is_http else None)}


def _wet(payload: bytes) -> dict[str, Any]:
    """WET text checked as a JSONL record's text is: byte order mark dropped, NUL bytes and empty text refused."""
    wide = wide_charset(payload, None)
    text, cs = decode_html(payload, wide or "utf-8")
    if text is None:
        return {"error": (DropReason.UNDECODABLE, "not UTF-8 text")}
    text = text.removeprefix("\ufeff")
    if "\x00" in text:
        return {"error": (DropReason.NUL_BYTE, "text contains a NUL byte")}
    if blank(text):  # as a JSONL record with an empty text is (invisible format characters alone included)
        return {"error": (DropReason.EMPTY_TEXT, "text is empty or whitespace only")}
    return {"text": text, "charset": cs}


def wide_charset(payload: bytes, declared: str | None) -> str | None:
    """UTF-16 or UTF-32 from the payload's byte order mark, else from the declared charset; None for others.

    Their NUL bytes would read as binary content: such a page is decoded before that test.

    >>> wide_charset(b"\\xff\\xfe<\\x00h\\x00", None), wide_charset(b"<\\x00", "UTF-16LE"), wide_charset(b"<h", "utf-8")
    ('utf-16', 'utf-16le', None)
    """
    for bom, cs in _WIDE_BOMS:
        if payload.startswith(bom):
            return cs
    cs = (declared or "").lower().strip().replace("_", "-")
    return cs if cs.startswith(("utf-16", "utf-32")) else None


def _page(payload: bytes, ctype: str | None, declared: str | None) -> dict[str, Any]:
    wide = wide_charset(payload, declared)
    if wide and (ctype is None or ctype in HTML_TYPES) and not payload.startswith(_BINARY_MAGIC):
        try:
            return {"html": payload.decode(wide), "charset": wide}
        except (LookupError, UnicodeDecodeError):
            pass  # not what it says: the tests below decide
    if is_binary(payload):
        return {"error": (DropReason.BINARY_CONTENT, f"binary payload ({ctype or 'no content type'})")}
    if ctype and ctype not in HTML_TYPES:
        return {"error": (DropReason.NOT_HTML, f"content type {ctype}")}
    html, cs = decode_html(payload, declared)
    if html is None:
        return {"error": (DropReason.UNDECODABLE, f"no charset decodes it (declared {declared!r})")}
    return {"html": html, "charset": cs}


def read_html_file(path: Path, max_bytes: int, label: str | None = None) -> Iterator[dict[str, Any]]:
    """A plain ``.html`` file as one record (no URL; id = content hash of page and path); ``label``:
    how the row names the file (``str(path)`` if None)."""
    payload = path.read_bytes()
    out = _row(str(path) if label is None else label, 1, id=None, url=None, date=None, offset=0, content_type="text/html", status=None)
    if len(payload) > max_bytes:
        yield {**out, "error": (DropReason.TOO_LARGE, f"{len(payload)} bytes > max_html_bytes {max_bytes}")}
        return
    yield {**out, **_page(payload, "text/html", None)}


def crawl_frame(records: Iterator[dict[str, Any]], source: str | None) -> pd.DataFrame:
    """Schema rows (text empty for HTML pages, filled by the extract step) + ``_html``, ``_file``, ``_line``.

    A crawl is web pages: ``source`` defaults to ``web`` (a recipe input entry can say ``social``).
    """
    source = source or "web"
    rows = []
    for r in records:
        html, text, err = r.get("html"), r.get("text"), r.get("error")
        location = f"{r['file']}:{r['line']}"
        doc_id = r.get("id") or content_id(html or text or "", location)
        meta = {k: r[k] for k in ("date", "content_type", "charset", "status") if r.get(k) is not None}
        row = {c: None for c in DOC_COLUMNS}
        row.update(doc_id=doc_id, text=text, source=source, url=r.get("url"), n_tokens=0,
                   meta=json.dumps({"crawl": meta}, sort_keys=True) if meta else None)
        if err is None and source not in SOURCES:
            err = (DropReason.UNKNOWN_SOURCE, f"source {source!r} is not one of {list(SOURCES)}")
        row[DROP_REASON] = err[0].value if err else None
        stop = {"stopped": True} if r.get("stopped") else {}  # a file read no further: ingest warns of it when it finishes
        if r.get("offset_in"):  # a .warc.gz of one gzip member: the offset counts decompressed bytes
            stop["offset_in"] = r["offset_in"]
        row[DROP_DETAIL] = detail_json(file=r["file"], line=r["line"], offset=r["offset"], url=r.get("url"), error=err[1], **stop) if err else None
        row["_html"] = html if err is None else None
        row["_file"], row["_line"] = r["file"], r["line"]
        rows.append(row)
    cols = [*DOC_COLUMNS, DROP_REASON, DROP_DETAIL, *CRAWL_COLUMNS]
    df = pd.DataFrame(rows, columns=cols)
    df["n_tokens"] = df["n_tokens"].astype("int64")
    df["_line"] = df["_line"].astype("int64")
    return df
