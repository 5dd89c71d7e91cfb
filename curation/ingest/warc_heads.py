"""Reading a WARC file's record headers for the planning pass (:mod:`curation.ingest.warc_plan`): each
record's start and type, its payload skipped by its ``Content-Length``, as FastWARC reads it; a header
line longer than 64 KiB is read in pieces (a hostile file is not one line in memory), and only the four
headers the plan uses are kept."""

from __future__ import annotations

import dataclasses
import re
import zlib
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from curation.ingest.streams import stream_error

#: WARC-Type of the records that become rows (``curation.ingest.warc.iter_warc`` reads these).
DOC_TYPES = (b"response", b"conversion", b"resource")
_LINE = 1 << 16  # a header line longer than this is read in pieces (a hostile file is not one line in memory)
_HEADERS = (b"warc-record-id", b"warc-target-uri", b"warc-type", b"content-length")  # the only ones kept, a piece each


@dataclasses.dataclass(frozen=True)
class Cut:
    """Where a cut WARC file ends: the record that is cut (its row number among documents), its offset, why."""

    line: int
    offset: int  # compressed byte of the gzip member that holds the record (in a plain file, the record's byte)
    error: str
    id: str | None = None
    url: str | None = None
    final: bool = True  # nothing after it is read; False: a damaged stretch (:class:`Gap`) skipped, reading went on
    doc: bool = True  # the record is a document record (or of a type not read)
    more: int = (
        0  # further document records lost with it (a damaged gzip member of several records): a row each after it
    )

    @property
    def rows(self) -> int:
        """The ``truncated_input`` rows it stands for."""
        return 1 + self.more


@dataclasses.dataclass(frozen=True)
class Bad:
    """A record header read whole without a usable ``Content-Length``, or a line that starts no
    record: where it starts and ends, why."""

    start: int
    end: int
    why: str
    doc: bool  # a document record (or bytes that start none): it gets a row
    length: bool = True  # False: bytes where no record starts
    id: str | None = None
    url: str | None = None
    lie: bool = False  # its Content-Length does not end it: the bytes after its block are not a record's end


def read_heads(fh: Any, starts: list[tuple[int, int]], pos: int, docs: int) -> tuple[int, int, Cut | Bad | None]:
    """Read record headers, skip payloads (appending to ``starts``): ``(pos, docs, stop)`` at the end
    (``stop`` None), at a cut (:class:`Cut`, its offset decompressed), or at a record this pass cannot
    skip or bytes where no record starts (:class:`Bad`)."""
    prev = None  # the last record this call read whole: (start, documents before it, is a document, id, url, Content-Length)
    while True:
        blank = b""
        while fh.peek(1)[:1] in (b"\r", b"\n"):  # the blank lines that end the previous record
            blank += fh.read(1)[: 4 - len(blank)]
            pos += 1
        first = fh.readline(_LINE)
        if not first:
            return pos, docs, None
        if not first.startswith(b"WARC/") and prev is not None and not blank.startswith(b"\r\n\r\n"):
            start, docs, is_doc, rid, url, length = (
                prev  # its block does not end where a record ends: its length is wrong
            )
            starts.pop()
            why = (
                f"record {docs + 1}'s Content-Length ({length}) does not end it: the bytes after its block (decompressed "
                f"byte {pos}) are neither the blank lines that end a record nor the next record's start"
            )
            return pos + len(first), docs, Bad(start, pos + len(first), why, is_doc, id=rid, url=url, lie=True)
        if not first.startswith(b"WARC/"):  # not where a record should start
            why = f"bytes that start no WARC record at decompressed byte {pos} (after document record {docs})"
            return pos + len(first), docs, Bad(pos, pos + len(first), why, True, length=False)
        start, headers, size = pos, {}, len(first)
        complete = False
        while line := fh.readline(_LINE):
            size += len(line)
            if line in (b"\r\n", b"\n"):
                complete = True
                break
            key, _, value = line.partition(b":")
            if (
                key := key.strip().lower()
            ) in _HEADERS:  # never the pieces of a long header line, each a "key" of its own
                headers[key] = value.strip()
        rid = (
            headers.get(b"warc-record-id", b"").decode("utf-8", "replace").strip("<>").removeprefix("urn:uuid:") or None
        )
        url = headers.get(b"warc-target-uri", b"").decode("utf-8", "replace") or None
        if not complete:
            return (
                start + size,
                docs,
                Cut(docs + 1, start, _why(fh, f"cut inside the record header at byte {start + size}")),
            )
        is_doc = headers.get(b"warc-type", b"").lower() in DOC_TYPES
        try:
            length = int(headers.get(b"content-length", b""))
        except ValueError:
            value = headers.get(b"content-length")
            why = f"record {docs + 1} has {'no' if value is None else 'an invalid'} Content-Length" + (
                "" if value is None else f" ({value[:40].decode('utf-8', 'replace')!r})"
            )
            return start + size, docs, Bad(start, start + size, why, is_doc, id=rid, url=url)
        read = skip(fh, length)
        if read < length:
            why = f"cut inside the record payload after {read} of {length} bytes"
            return start + size + read, docs, Cut(docs + 1, start, _why(fh, why), rid, url, doc=is_doc)
        starts.append((start, docs))
        prev = (start, docs, is_doc, rid, url, length)
        docs += is_doc
        pos = start + size + length


def _why(fh: Any, what: str) -> str:
    error = stream_error(fh)
    return f"{what} ({error})" if error else f"{what} (the file ends there)"


def skip(fh: Any, n: int) -> int:
    read = 0
    while read < n and (piece := fh.read(min(n - read, 1 << 20))):
        read += len(piece)
    return read


_START = re.compile(
    rb"WARC/1\.[0-9].{0,4}?WARC-", re.S
)  # a record's first header lines (their line ends may be garbled)
_TYPE = re.compile(rb"(?im)^warc-type:[ \t]*([a-z]+)")
_OTHER_TYPES = (b"warcinfo", b"request", b"metadata", b"revisit", b"continuation")  # records that are not documents
_HEAD = 8 << 10  # the header block of a record found by :func:`count_heads` is looked at up to this size


def heads_after(fh: Any, pos: int) -> int:
    """Document records whose header lines start in the rest of the gzip member ``fh`` is reading
    (from decompressed byte ``pos``, at a line start), read on to that member's end (:func:`count_heads`)."""
    raw, start = fh.raw, pos

    def rest() -> Iterator[bytes]:
        nonlocal pos
        while True:
            data = fh.peek(1)
            ahead = [d for _c, d in raw.members if d > start]  # the next member: not this one's
            data = data[: max(min(ahead) - pos, 0)] if ahead else data
            if not data:
                return
            pos += len(fh.read(len(data)))
            yield data

    return count_heads(rest())


#: compressed bytes a damaged member is inflated by at a time (:func:`member_heads`)
PIECE = 1 << 16


def member_heads(path: Path, member: int) -> tuple[int, bool, bool]:
    """Document records in the gzip member at byte ``member`` of ``path``, its data inflated without its
    check (a member that fails it still gives all its bytes); whether it inflated to its end (False:
    data that does not inflate cut it short); and whether the count is exact.

    Exact where its records, walked by their ``Content-Length`` from the member's first byte, end at
    its last (:class:`Chain`): the damage left every record's header lines and length whole. Else the
    count is the records whose header lines start in the data (:func:`count_heads`): at least that
    many, as a record whose header lines the damage garbled is not counted."""
    whole, chain = True, Chain()

    def pieces() -> Iterator[bytes]:
        nonlocal whole
        with open(path, "rb") as fh:
            fh.seek(member)
            flags = fh.read(10)[3:4] or b"\0"
            if flags[0] & 4:  # an extra field
                fh.read(int.from_bytes(fh.read(2), "little"))
            for bit in (8, 16):  # a file name, a comment
                while flags[0] & bit and fh.read(1) not in (b"\0", b""):
                    pass
            fh.read(2 if flags[0] & 2 else 0)  # the header's CRC
            z = zlib.decompressobj(-15)
            data = fh.read(PIECE)
            while data and not z.eof:
                before = z.copy()
                try:
                    yield chain.feed(z.decompress(data, 1 << 16))
                except zlib.error:
                    # a call that meets data that does not inflate drops what it inflated: the piece is
                    # fed again a byte at a time, so the records before the damage are counted
                    whole = False
                    for i in range(len(data)):
                        try:
                            yield chain.feed(before.decompress(data[i : i + 1]))
                        except zlib.error:
                            return
                    return
                data = z.unconsumed_tail or fh.read(PIECE)
            whole = z.eof

    found = count_heads(pieces())
    if whole and chain.end():
        return chain.docs, True, True
    return found, whole, False


class Chain:
    """A gzip member's records walked by their ``Content-Length`` as its data comes (only header lines
    are kept): ``docs``, the document records walked."""

    def __init__(self) -> None:
        # bytes fed; where the next record (or the blank lines before it) starts; the bytes from there
        self.seen, self.at, self.buf = 0, 0, b""
        self.docs, self.first, self.broken = 0, True, False

    def feed(self, data: bytes) -> bytes:
        base, self.seen = self.seen, self.seen + len(data)
        if not self.broken and (off := max(self.at - base, 0)) < len(data):
            self.buf += data[off:]
            self._walk(False)
        return data

    def end(self) -> bool:
        """Whether the records walked end at the last byte fed (the member's end)."""
        self._walk(True)
        return not self.broken and not self.first and self.buf == b"\r\n\r\n"

    def _walk(self, last: bool) -> None:
        while not self.broken:
            sep = 0 if self.first else 4  # the blank lines that end the record before
            if len(self.buf) < sep + _HEAD and b"\r\n\r\n" not in self.buf[sep:] and not last:
                return  # its header lines are not all here yet
            if self.buf[:sep] != b"\r\n\r\n"[:sep] or (last and len(self.buf) == sep):
                # not the blank lines that end a record; or those alone, at the member's end: whole
                self.broken = self.first or len(self.buf) != sep
                return
            head = self.buf[sep : sep + _HEAD]
            end, length, kind = head.find(b"\r\n\r\n"), None, b""
            for line in head[: max(end, 0)].split(b"\r\n")[1:] if head.startswith(b"WARC/1.") else ():
                key, _, value = line.partition(b":")
                key = key.strip().lower()
                length = int(value) if key == b"content-length" and value.strip().isdigit() else length
                kind = value.strip().lower() if key == b"warc-type" else kind
            if end < 0 or length is None:
                self.broken = True
                return
            self.docs += kind in DOC_TYPES
            self.first, step = False, sep + end + 4 + length
            self.at, self.buf = self.at + step, self.buf[step:]


def count_heads(pieces: Iterable[bytes]) -> int:
    """Document records whose header lines start in ``pieces`` (decompressed bytes): the records a
    damaged member loses. ``WARC/1.x`` and a ``WARC-`` header after it (their line ends may be garbled)
    count unless the header lines give a ``WARC-Type`` that is not a document's (one the damage garbled
    counts, as a record of unknown type gets a row; a page that quotes a WARC record counts too: the
    figure is as near as the bytes allow)."""
    found, seen, buf, base, it, last = 0, -1, b"", 0, iter(pieces), False
    while not last:
        data = next(it, None)
        last = data is None
        buf += data or b""
        wait = None
        for m in _START.finditer(buf):
            if base + m.start() <= seen:
                continue
            head = buf[m.start() : m.start() + _HEAD]
            end = head.find(b"\r\n\r\n") if b"\r\n\r\n" in head else head.find(b"\n\n")
            if end < 0 and len(head) < _HEAD and not last:  # its header block is not read whole yet
                wait = m.start()
                break
            seen = base + m.start()
            kind = _TYPE.search(head if end < 0 else head[:end])
            found += kind is None or kind.group(1).lower() not in _OTHER_TYPES
        keep = buf[wait:] if wait is not None else buf[-32:]
        base, buf = base + len(buf) - len(keep), keep
    return found
