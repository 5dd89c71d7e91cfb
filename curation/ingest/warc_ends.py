"""The rows a WARC partition ends with, and the stream a ``.warc.gz`` of one gzip member is read through.

A file FastWARC stops reading ends with one ``truncated_input`` row (:func:`stopped`, exit 4 when not
even its first record was read); a file the planning pass found cut, or a partition that ends at a
damaged stretch, ends with that record's row (:func:`until_cut`).

In a ``.warc.gz`` of one gzip member (what ``gzip file.warc`` writes) every record's member starts at
byte 0, so a row's ``offset`` is the record's byte in the decompressed stream (``offset_in``:
``"decompressed"``): FastWARC counts those bytes (``stream_pos``) only on a stream it reads as a plain
Python one (:class:`Decompressed`), not on its own ``GzipReader``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from curation.ingest.discover import InputError
from curation.ingest.warc_plan import Cut
from curation.schema import DropReason

#: What a row's ``offset_in`` says where its ``offset`` counts decompressed bytes (absent: bytes of the file on disk).
DECOMPRESSED = {"offset_in": "decompressed"}


def row(file: str, number: int, **fields: Any) -> dict[str, Any]:
    return {"file": file, "line": number, **fields}


class Decompressed:
    """A FastWARC ``GzipReader`` seen as a plain Python stream: FastWARC's ``stream_pos`` of a record
    read through it is the record's offset in the decompressed stream (on the reader itself it is a
    compressed read position)."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner

    def read(self, size: int = -1) -> bytes:
        return self._inner.read(size)

    def tell(self) -> int:
        return self._inner.tell()

    def close(self) -> None:
        self._inner.close()


def stopped(label: str, number: int, offset: int, exc: OSError, nothing_read: bool, expected: int | None,
            first_line: int, unread: tuple[int, int], decompressed: bool = False) -> dict[str, Any]:
    """The ``truncated_input`` row a file FastWARC stops reading ends with (or exit 4 when nothing was read);
    ``unread``: (the compressed byte the last record read starts in, the bytes of the file (of the
    partition) after it, some of them not read); ``decompressed``: ``offset`` counts decompressed bytes."""
    if nothing_read:
        raise InputError(f"{label}: cannot be read as a WARC/WET file (FastWARC: {exc}); re-create it")
    rest = f"records {number}..{first_line + expected - 1}" if expected and first_line + expected - 1 > number else f"record {number} on"
    out = row(label, number, id=None, url=None, date=None, offset=offset, content_type=None, status=None)
    where = f"decompressed byte {offset}" if decompressed else f"byte {offset}"
    return {**out, "stopped": True, **(DECOMPRESSED if decompressed else {}), "error": (
        DropReason.TRUNCATED_INPUT, f"FastWARC stopped at document record {number} (the last record read starts at {where}): "
        f"{exc}; the records before it were kept, {rest} not read (up to {unread[1]} bytes of the file after byte {unread[0]}); "
        "re-create the file")}


def until_cut(records: Iterator[dict[str, Any]], cut: Cut | None, label: str) -> Iterator[dict[str, Any]]:
    """``records`` up to the cut record of a cut file (or a partition that ends at a damaged stretch
    of one), then that record as one ``truncated_input`` row, and one for each other document record
    of its damaged gzip member (``cut.more``).

    FastWARC reads a record cut in its header as a page with a cut URL: the planned cut replaces it.
    """
    if cut is None:
        yield from records
        return
    for r in records:
        if r["line"] >= cut.line:
            break
        yield r
        if r.get("stopped"):  # the file was already ended by a row of its own
            return
    out = row(label, cut.line, id=cut.id, url=cut.url, date=None, offset=cut.offset, content_type=None, status=None)
    tail = "; the records before it were kept, re-create the file" if cut.final else ""
    yield {**out, "error": (DropReason.TRUNCATED_INPUT, f"{cut.error}{tail}")}
    for n in range(cut.line + 1, cut.line + cut.rows):  # the other records of a damaged gzip member, each its own row
        why = f"document record {n} is in the damaged gzip member at compressed byte {cut.offset}, dropped whole (record {cut.line}'s row says why)"
        yield {
            **row(label, n, id=None, url=None, date=None, offset=cut.offset, content_type=None, status=None),
            "error": (DropReason.TRUNCATED_INPUT, why),
        }
