"""Going on past a damaged record of a ``.warc.gz``: the next gzip member that starts a record.

Common Crawl writes one gzip member per record, so a record FastWARC cannot read (no
``Content-Length``, bytes that start no record, a member whose header is damaged) or junk between two
members costs that record only:
the planning pass (:mod:`curation.ingest.warc_plan`) ends a partition before it and starts the next
at the next member whose data starts ``WARC/``. A plain ``.warc`` has no such marks (a payload may
hold ``WARC/1.0`` lines): there the rest of the file is not read, and its row says how much.

A gzip member whose data fails to decompress or fails its check (:func:`damaged`) is dropped whole,
as JSONL drops one (gzip checks a member's CRC only at its end, so what it gave may be garbled), and
so is a record whose ``Content-Length`` does not end it: reading goes on at the next member that
starts a record after it.
"""

from __future__ import annotations

import bisect
import dataclasses
import io
import zlib
from pathlib import Path
from typing import Any

from curation.ingest.streams import Decompressed
from curation.ingest.unit_heads import damaged_head, next_start


def open_at(path: Path, compressed: int, decompressed: int) -> io.BufferedReader:
    """The decompressed bytes of ``path`` from the gzip member at byte ``compressed``, whose
    ``members`` go on numbering decompressed bytes from ``decompressed``; zero bytes between two
    members stop it, as they stop FastWARC (:func:`junk_at`)."""
    return io.BufferedReader(Decompressed(path, "gzip", start=(compressed, decompressed), padding=False), buffer_size=1 << 16)


def junk_at(fh: Any) -> int | None:
    """Compressed byte where a gzip stream that met bytes that are not gzip data stopped; None if it did not.
    Zero bytes between two members are such bytes for a WARC: gzip skips zero padding after the last
    member only, and FastWARC stops at them, so the planning pass ends a partition before them."""
    raw = getattr(fh, "raw", None)
    return raw.junk_at if isinstance(raw, Decompressed) and raw.kind == "gzip" else None


def next_member(path: Path, after: int) -> tuple[int, bool] | None:
    """Compressed byte of the first gzip member after byte ``after`` whose data starts a WARC record,
    and whether it is sound (False: it does so only with its damaged header restored, and is skipped
    as a record of its own; :mod:`curation.ingest.unit_heads`)."""
    return next_start(path, "gzip", after, _starts_record)


def damaged_head_at(path: Path, offset: int) -> bool:
    """Whether bytes that are not gzip data at ``offset`` are a gzip member whose header is damaged."""
    return damaged_head(path, "gzip", offset, _starts_record)


def _starts_record(data: bytes) -> bool:
    try:
        return zlib.decompressobj(31).decompress(data, 8).startswith(b"WARC/")
    except zlib.error:
        return False


def skip_to_member(fh: Any, pos: int) -> tuple[tuple[int, int] | None, int]:
    """Read ``fh`` (at decompressed byte ``pos``) on to the next gzip member that starts at or after
    ``pos``: ``((compressed, decompressed) offset of that member, pos)``, or ``(None, pos)`` at the
    end of the stream.

    A read of :class:`~curation.ingest.streams.Decompressed` returns bytes of one member only, so a
    member is listed before any of its bytes are taken."""
    raw = fh.raw
    while True:
        ahead = [(c, d) for c, d in raw.members if d >= pos]
        if ahead:
            c, d = min(ahead, key=lambda m: m[1])
            while pos < d and (piece := fh.read(min(d - pos, 1 << 20))):
                pos += len(piece)
            return ((c, d) if pos == d else None), pos
        data = fh.peek(1)
        if not data:
            return None, pos
        if not any(d >= pos for _c, d in raw.members):  # else the peek started one: taken above
            pos += len(fh.read(len(data)))


@dataclasses.dataclass(frozen=True)
class Damage:
    """A record of a ``.warc.gz`` that cannot be read: its decompressed start, the document records
    before it, the compressed byte of the member where it went wrong (the next member that starts a
    record is looked for after it), why, and what is known of it."""

    start: int
    docs: int
    member: int
    why: str
    doc: bool = True  # a document record, or one whose type is unknown: it gets a row
    id: str | None = None
    url: str | None = None


def damaged(fh: Any, starts: list[tuple[int, int]], docs: int, pos: int, current: Damage | None) -> Damage | None:
    """The record a corrupt gzip member of ``fh`` takes with it (None if no member is corrupt):
    the record that holds the member's first byte, or the one that starts there. ``starts`` (record
    starts read whole, with the documents before each) loses the records from it on; ``current``:
    the record being read when the stream stopped, if any; ``pos``: where the stream stopped."""
    raw = getattr(fh, "raw", None)
    if not getattr(raw, "corrupt", False):
        return None
    c, d = raw.members[-1]
    why = f"{raw.error}: the gzip member at compressed byte {c} (decompressed byte {d}) failed its check, so its records may be garbled"
    if current is not None and current.start <= d:  # every record read whole ended before it
        return dataclasses.replace(current, docs=docs, member=c, why=why)
    i = bisect.bisect_right(starts, (d, 1 << 62)) - 1
    after = starts[i + 1][0] if i + 1 < len(starts) else current.start if current is not None else pos
    if i >= 0 and (starts[i][0] == d or after > d):  # it starts at the member, or runs into it
        start, before = starts[i]
        is_doc = (starts[i + 1][1] if i + 1 < len(starts) else docs) > before
        del starts[i:]
        return Damage(start, before, c, why, is_doc)
    before = starts[i + 1][1] if i + 1 < len(starts) else docs
    del starts[i + 1:]
    return Damage(d, before, c, why)  # the member gave no record's start before it failed: an unknown record


def only_padding_after(path: Path, member: int, end: int, block: int = 1 << 16) -> bool:
    """Whether the bytes of ``path`` after the gzip member that starts at byte ``member``, up to byte
    ``end``, are all zeros: padding some writers add after the last member, which gzip and the JSONL
    reader skip and FastWARC reads as a damaged member. Decompressed a block at a time (bounded memory).

    >>> import gzip, tempfile
    >>> f = Path(tempfile.mkdtemp()) / "p.gz"
    >>> _ = f.write_bytes(gzip.compress(b"WARC/1.0") + bytes(100))
    >>> only_padding_after(f, 0, f.stat().st_size), only_padding_after(f, 0, f.stat().st_size - 100)
    (True, False)
    """
    d = zlib.decompressobj(31)
    with open(path, "rb") as fh:
        fh.seek(member)
        data = fh.read(block)
        while True:
            try:
                d.decompress(data, block)
            except zlib.error:
                return False
            if d.eof:
                break
            data = d.unconsumed_tail or fh.read(block)
            if not data:
                return False
        stop = fh.tell() - len(d.unused_data)  # where the member ends
        if stop >= end:
            return False
        fh.seek(stop)
        while stop < end:
            more = fh.read(min(block, end - stop))
            if not more or more.strip(b"\0"):
                return False
            stop += len(more)
        return True
