"""Cutting a WARC/WET file into partitions on record boundaries, and finding where a cut file ends.

One pass reads the record headers (decompressing a ``.warc.gz``; a record's payload is skipped by
its ``Content-Length``, as FastWARC reads it). A partition may start at a record that starts a
gzip member (Common Crawl writes one member per record; a plain ``.warc`` can start at any record),
so each partition is a compressed byte range a reader opens on its own. The file is cut into
ceil(size / block) near-equal parts of its decompressed size, the rule JSONL follows
(:mod:`curation.ingest.chunks`): a worker holds one part, never the whole file.

A file that ends inside a record (its header or its payload) is :class:`Cut`: the reader keeps the
records before it and ledgers that record as ``truncated_input``. In a ``.warc.gz`` a record without
a usable ``Content-Length`` or whose ``Content-Length`` does not end it (the bytes after its block
are neither the blank lines that end a record nor the next record's start), a gzip member that fails
to decompress or fails its check, bytes that start no record or are not gzip data, or zero bytes
between two members (FastWARC does not read past them), is a :class:`Gap`: one ``truncated_input``
row, and reading goes on at the next gzip member that starts a record (:mod:`curation.ingest.warc_resync`);
a plain ``.warc`` is not read past it, and its row says how many bytes were not read. A damaged or cut file is said in one warning.
"""

from __future__ import annotations

import bisect
import dataclasses
import logging
from pathlib import Path
from typing import Any

from curation.ingest.streams import compression, open_input, stream_error
from curation.ingest.warc_resync import Damage, damaged, damaged_head_at, junk_at, next_member, open_at, skip_to_member

log = logging.getLogger(__name__)

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


@dataclasses.dataclass(frozen=True)
class Gap:
    """A damaged stretch of a ``.warc.gz`` that is skipped: the partition before it ends at ``end``
    (compressed; ``d`` decompressed, after ``docs`` document records), the next starts at ``resume``
    (``resume_d``). ``cut``: its ledger row (None when the damaged record was not a document record)."""

    d: int
    end: int
    docs: int
    resume_d: int
    resume: int
    cut: Cut | None


@dataclasses.dataclass(frozen=True)
class WarcChunk:
    start: int  # compressed byte offset of the partition's first record
    end: int  # compressed byte offset after its last record; -1: to the end of the file
    first_line: int  # row number of its first document record
    nbytes: int  # decompressed bytes
    cut: Cut | None = None  # only on the last chunk of a cut file
    docs: int = -1  # document records the planning pass counted in it (-1: not counted); the reader checks it
    one_member: bool = False  # a .warc.gz of one gzip member (`gzip file.warc`): its rows' offsets are decompressed bytes


def warc_chunks(path: Path, block: int) -> list[WarcChunk]:
    """Near-equal partitions of at most ~``block`` decompressed bytes, cut at record starts that start
    a member; a damaged stretch (:class:`Gap`) ends a partition, and the next starts after it."""
    if compression(path) == "zstd":  # frames do not follow records: one partition
        return [WarcChunk(0, -1, 1, path.stat().st_size)]
    starts, total, cut, members, ndocs, gaps = _scan(path)
    if gaps or cut is not None:
        log.warning("%s", _warning(path, gaps, cut))
    candidates = [(d, members[d], docs) for d, docs in starts if d in members]  # (decompressed, compressed, documents before)
    n = max(-(-total // block), 1)
    cuts = [(0, 0, 0)]
    for k in range(1, n):
        i = bisect.bisect_left(candidates, (k * total // n, -1, -1))
        if i < len(candidates) and cuts[-1][0] < candidates[i][0] < total:
            cuts.append(candidates[i])
    if gaps:  # reading goes on after each gap: a partition starts there, whatever the sizes
        resumed = {g.resume_d: (g.resume_d, g.resume, g.docs + (g.cut is not None)) for g in gaps}
        cuts = sorted({**{c[0]: c for c in cuts}, **resumed}.values())
    before = {g.resume_d: g for g in gaps}
    one = compression(path) == "gzip" and len(set(members.values())) == 1  # a file `gzip` wrote whole: one partition
    chunks = []
    for k, (d, c, docs) in enumerate(cuts):
        last = k == len(cuts) - 1
        g = None if last else before.get(cuts[k + 1][0])
        de, e, docs_end = (g.d, g.end, g.docs) if g else (total, -1, ndocs) if last else cuts[k + 1]
        chunks.append(WarcChunk(c, e, docs + 1, de - d, g.cut if g else cut if last else None, docs_end - docs, one))
    return chunks


def _warning(path: Path, gaps: list[Gap], cut: Cut | None) -> str:
    """What the run says when it plans a damaged or cut WARC file (visible with --quiet)."""
    said = []
    if gaps:
        first = next((g.cut.error for g in gaps if g.cut is not None), "a record that is not a document")
        said.append(f"{len(gaps)} damaged stretch(es) skipped, reading went on after each (the first: {first})")
    if cut is not None:
        said.append(f"reading ended at document record {cut.line}: {cut.error}")
    rows = sum(g.cut is not None for g in gaps) + (cut is not None)
    return f"{path}: {'; '.join(said)}; {rows} truncated_input ledger row(s) name the records; re-create the file"


def _scan(path: Path) -> tuple[list[tuple[int, int]], int, Cut | None, dict[int, int], int, list[Gap]]:
    """(decompressed offset of each record start, documents before it), the decompressed size, the
    cut, the compressed offset of each decompressed offset that starts a gzip member, the number of
    document records (and rows of gaps) before the end or the cut, and the gaps skipped."""
    gz = compression(path) == "gzip"
    starts: list[tuple[int, int]] = []
    members: dict[int, int] = {}
    gaps: list[Gap] = []
    pos, docs = 0, 0
    fh = open_input(path, padding=False)
    final: Cut | None = None  # the row of a damaged member no later member comes after
    try:
        while True:
            pos, docs, stop = _records(fh, starts, pos, docs)
            members.update({d: c for c, d in getattr(fh.raw, "members", [])})
            junk = junk_at(fh) if gz and stop is None else None
            if junk is not None and (nxt := next_member(path, junk)) is not None:  # bytes that are not gzip data
                resume, what = nxt[0], " (a gzip member whose header is damaged)" if damaged_head_at(path, junk) else ""
                what = ("zero bytes between two gzip members (padding, which FastWARC does not read past)" if fh.raw.padded_to == resume
                        else f"bytes that are not gzip data{what}")
                why = (f"{resume - junk} {what} at compressed byte {junk} (after document record "
                       f"{docs}) were skipped; reading went on at the gzip member at byte {resume}"
                       f"{'' if nxt[1] else ', whose header is damaged too (the next row)'}")
                made = fh.raw.made + 1  # past every byte decompressed: a gap's end stays unique (two in a row, one at byte 0)
                gaps.append(Gap(pos, junk, docs, made, resume, Cut(docs + 1, junk, why, final=False)))
                docs, pos = docs + 1, made
                fh.close()
                fh = open_at(path, resume, pos)
                continue
            bad = _damage(fh, starts, docs, pos, stop, members) if gz else None
            if bad is not None:  # a corrupt member, or a Content-Length that does not end its record
                docs, at = bad.docs, _member(members, bad.start)
                if (nxt := next_member(path, bad.member)) is None:
                    rest = f"no later gzip member starts a record: the {path.stat().st_size - at} bytes of the file from byte {at} on were not read"
                    final = Cut(bad.docs + 1, at, f"{bad.why}; {rest}", bad.id, bad.url)
                    break
                resume = nxt[0]
                end = members[bad.start] if bad.start in members else min((c for d, c in members.items() if d > bad.start), default=resume)
                skipped = f"{bad.why}: {resume - end} compressed bytes skipped, reading went on at the next gzip member that starts a record (byte {resume})"
                row = Cut(docs + 1, at, skipped, bad.id, bad.url, final=False) if bad.doc or bad.start not in members else None
                pos = fh.raw.made + 1  # past every byte this stream decompressed: the offsets after it stay unique
                gaps.append(Gap(bad.start, end, docs, pos, resume, row))
                docs += row is not None
                fh.close()
                fh = open_at(path, resume, pos)
                continue
            if not (isinstance(stop, _Bad) and gz and stop.start in members and not stop.lie):
                break
            nxt, pos = skip_to_member(fh, stop.end)
            if nxt is None:
                break
            skipped = f"{stop.why}: {nxt[0] - members[stop.start]} compressed bytes skipped, reading went on at the next gzip member (byte {nxt[0]})"
            row = Cut(docs + 1, members[stop.start], skipped, stop.id, stop.url, final=False) if stop.doc else None
            gaps.append(Gap(stop.start, members[stop.start], docs, nxt[1], nxt[0], row))
            docs += row is not None
            pos = nxt[1]
        pos += _skip(fh, 1 << 62)  # to the end
        members.update({d: c for c, d in getattr(fh.raw, "members", [])})
        error, junk = stream_error(fh), junk_at(fh)
    finally:
        fh.close()
    if final is not None:
        return starts, pos, final, members, docs, gaps
    if not gz:
        members = {d: d for d, _ in starts}
    if isinstance(stop, _Bad):
        at = _member(members, stop.start) if gz else stop.start
        rest = f"the {path.stat().st_size - at} bytes of the file from byte {at} on were not read"
        if not stop.doc or not stop.length:  # bytes where no record starts: FastWARC decides what they are
            return starts, pos, None, members, docs, gaps
        return starts, pos, Cut(docs + 1, at, f"{stop.why}; {rest}", stop.id, stop.url), members, docs, gaps
    if stop is None and error:
        if junk is not None:
            what = " (a gzip member whose header is damaged)" if damaged_head_at(path, junk) else ""
            error = f"{error}{what}; the {path.stat().st_size - junk} bytes from there to the end of the file were not read"
        stop = Cut(docs + 1, junk if junk is not None else _member(members, pos) if gz else pos, error)
    elif stop is not None and gz:
        stop = dataclasses.replace(stop, offset=_member(members, stop.offset))
    return starts, pos, stop, members, docs, gaps


@dataclasses.dataclass(frozen=True)
class _Bad:
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


def _damage(fh: Any, starts: list[tuple[int, int]], docs: int, pos: int, stop: Cut | _Bad | None,
            members: dict[int, int]) -> Damage | None:
    """The record a ``.warc.gz`` loses to a corrupt member or to a ``Content-Length`` that does not end it; None if neither."""
    current = None  # the record being read when the stream stopped
    if isinstance(stop, Cut):
        current = Damage(stop.offset, docs, 0, "", stop.doc, stop.id, stop.url)
    elif isinstance(stop, _Bad) and stop.length:
        current = Damage(stop.start, docs, 0, stop.why, stop.doc, stop.id, stop.url)
    bad = damaged(fh, starts, docs, pos, current)
    if bad is None and isinstance(stop, _Bad) and stop.lie:
        bad = dataclasses.replace(current, member=_member(members, stop.start))
    return bad


def _member(members: dict[int, int], d: int) -> int:
    """Compressed offset of the member that holds decompressed byte ``d``."""
    keys = sorted(members)
    i = bisect.bisect_right(keys, d) - 1
    return members[keys[i]] if i >= 0 else 0


def _records(fh: Any, starts: list[tuple[int, int]], pos: int, docs: int) -> tuple[int, int, Cut | _Bad | None]:
    """Read record headers, skip payloads (appending to ``starts``): ``(pos, docs, stop)`` at the end
    (``stop`` None), at a cut (:class:`Cut`, its offset decompressed), or at a record this pass cannot
    skip or bytes where no record starts (:class:`_Bad`)."""
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
            start, docs, is_doc, rid, url, length = prev  # its block does not end where a record ends: its length is wrong
            starts.pop()
            why = (f"record {docs + 1}'s Content-Length ({length}) does not end it: the bytes after its block (decompressed "
                   f"byte {pos}) are neither the blank lines that end a record nor the next record's start")
            return pos + len(first), docs, _Bad(start, pos + len(first), why, is_doc, id=rid, url=url, lie=True)
        if not first.startswith(b"WARC/"):  # not where a record should start
            why = f"bytes that start no WARC record at decompressed byte {pos} (after document record {docs})"
            return pos + len(first), docs, _Bad(pos, pos + len(first), why, True, length=False)
        start, headers, size = pos, {}, len(first)
        complete = False
        while line := fh.readline(_LINE):
            size += len(line)
            if line in (b"\r\n", b"\n"):
                complete = True
                break
            key, _, value = line.partition(b":")
            if (key := key.strip().lower()) in _HEADERS:  # never the pieces of a long header line, each a "key" of its own
                headers[key] = value.strip()
        rid = headers.get(b"warc-record-id", b"").decode("utf-8", "replace").strip("<>").removeprefix("urn:uuid:") or None
        url = headers.get(b"warc-target-uri", b"").decode("utf-8", "replace") or None
        if not complete:
            return start + size, docs, Cut(docs + 1, start, _why(fh, f"cut inside the record header at byte {start + size}"))
        is_doc = headers.get(b"warc-type", b"").lower() in DOC_TYPES
        try:
            length = int(headers.get(b"content-length", b""))
        except ValueError:
            value = headers.get(b"content-length")
            why = f"record {docs + 1} has {'no' if value is None else 'an invalid'} Content-Length" + (
                "" if value is None else f" ({value[:40].decode('utf-8', 'replace')!r})")
            return start + size, docs, _Bad(start, start + size, why, is_doc, id=rid, url=url)
        read = _skip(fh, length)
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


def _skip(fh: Any, n: int) -> int:
    read = 0
    while read < n and (piece := fh.read(min(n - read, 1 << 20))):
        read += len(piece)
    return read
