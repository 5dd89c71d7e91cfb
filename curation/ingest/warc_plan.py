"""Cutting a WARC/WET file into partitions on record boundaries, and finding where a cut file ends.

One pass reads the record headers (decompressing a ``.warc.gz``; a record's payload is skipped by
its ``Content-Length``, as FastWARC reads it). A partition may start at a record that starts a
gzip member (Common Crawl writes one member per record; a plain ``.warc`` can start at any record),
so each partition is a compressed byte range a reader opens on its own. The file is cut into
ceil(size / block) near-equal parts of its decompressed size, the rule JSONL follows
(:mod:`curation.ingest.chunks`): a worker holds one part, never the whole file. A ``.warc.gz`` of one
gzip member (what ``gzip file.warc`` writes) cannot be cut: it is one partition, and its plan warns
when it is over the block, naming the fix (``warcio recompress``: a member per record).

A file that ends inside a record (its header or its payload) is :class:`Cut`: the reader keeps the
records before it and ledgers that record as ``truncated_input``. In a ``.warc.gz`` a record without
a usable ``Content-Length`` or whose ``Content-Length`` does not end it (the bytes after its block
are neither the blank lines that end a record nor the next record's start), a gzip member that fails
to decompress or fails its check, bytes that start no record or are not gzip data, or zero bytes
between two members (FastWARC does not read past them), is a :class:`Gap`: a ``truncated_input``
row for each document record it takes, and reading goes on at the next gzip member that starts a record
(:mod:`curation.ingest.warc_resync`). A member that fails its check takes all its records, those read
before the damage too; a ``Content-Length`` that does not end its record in a member that passes its
check takes that record and the rest of its member (the records before it are kept). The records after
the damage are counted by their ``WARC/1.x`` lines (:func:`~curation.ingest.warc_heads.heads_after`).
A plain ``.warc`` is not read past it, and its row says how many bytes were not read. A damaged or cut file is said in one warning.
"""

from __future__ import annotations

import bisect
import dataclasses
import logging
from pathlib import Path
from typing import Any

from curation.ingest.streams import compression, open_input, stream_error
from curation.ingest.warc_heads import DOC_TYPES, Bad, Cut, heads_after, member_heads, read_heads, skip  # noqa: F401 -- DOC_TYPES, Cut: imported from here
from curation.ingest.warc_resync import Damage, damaged, damaged_head_at, junk_at, next_member, open_at, skip_to_member

log = logging.getLogger(__name__)


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
        resumed = {g.resume_d: (g.resume_d, g.resume, g.docs + (g.cut.rows if g.cut else 0)) for g in gaps}
        cuts = sorted({**{c[0]: c for c in cuts}, **resumed}.values())
    before = {g.resume_d: g for g in gaps}
    one = compression(path) == "gzip" and len(set(members.values())) == 1  # a file `gzip` wrote whole: one partition
    if one and total > block:
        log.warning("%s", _whole(path, total, block))
    chunks = []
    for k, (d, c, docs) in enumerate(cuts):
        last = k == len(cuts) - 1
        g = None if last else before.get(cuts[k + 1][0])
        de, e, docs_end = (g.d, g.end, g.docs) if g else (total, -1, ndocs) if last else cuts[k + 1]
        chunks.append(WarcChunk(c, e, docs + 1, de - d, g.cut if g else cut if last else None, docs_end - docs, one))
    return chunks


def _whole(path: Path, total: int, block: int) -> str:
    """What the run says when it plans a ``.warc.gz`` of one gzip member over the block (visible with --quiet)."""
    return (
        f"{path}: one gzip member of {path.stat().st_size:,} bytes ({total:,} decompressed), over the crawl block of "
        f"{block:,} bytes (ingest.blocksize_mb, ingest.crawl_min_block_mb): a .warc.gz is cut only where a gzip member "
        f"starts, so it cannot be cut into parts and one worker reads it whole, its memory growing with the decompressed "
        f"size; recompress it one member per record, as Common Crawl writes them (warcio recompress {path} "
        f"OUT.warc.gz), to read it in {-(-total // block)} parts"
    )


def _warning(path: Path, gaps: list[Gap], cut: Cut | None) -> str:
    """What the run says when it plans a damaged or cut WARC file (visible with --quiet)."""
    said = []
    if gaps:
        first = next((g.cut.error for g in gaps if g.cut is not None), "a record that is not a document")
        said.append(f"{len(gaps)} damaged stretch(es) skipped, reading went on after each (the first: {first})")
    if cut is not None:
        said.append(f"reading ended at document record {cut.line}: {cut.error}")
    rows = sum(g.cut.rows for g in gaps if g.cut is not None) + (cut.rows if cut is not None else 0)
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
            pos, docs, stop = read_heads(fh, starts, pos, docs)
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
            bad, corrupt, after = _damage(fh, starts, docs, pos, stop, members) if gz else (None, False, 0)
            if bad is not None:  # a corrupt member, or a Content-Length that does not end its record
                members.update({d: c for c, d in fh.raw.members})
                rows, what, kept = _loss(path, bad, corrupt, starts, members, after)
                docs, at = bad.docs, _member(members, bad.start)
                if (nxt := next_member(path, bad.member)) is None:
                    rest = f"the {path.stat().st_size - at} bytes of the file from byte {at} on were not read"
                    rest = f"no later gzip member starts a record: {'the file is not read past it' if kept else rest}{what}"
                    final = Cut(bad.docs + 1, at, f"{bad.why}; {rest}", bad.id, bad.url, more=max(rows - 1, 0))
                    break
                resume = nxt[0]
                end = members[bad.start] if bad.start in members else min((c for d, c in members.items() if d > bad.start), default=resume)
                skipped = (
                    f"{bad.why}: {resume - at} compressed bytes from the gzip member at byte {at} on skipped{what}, reading "
                    f"went on at the next gzip member that starts a record (byte {resume})"
                )
                row = Cut(docs + 1, at, skipped, bad.id, bad.url, final=False, more=rows - 1) if rows else None
                pos = fh.raw.made + 1  # past every byte this stream decompressed: the offsets after it stay unique
                gaps.append(Gap(bad.start, end, docs, pos, resume, row))
                docs += rows
                fh.close()
                fh = open_at(path, resume, pos)
                continue
            if not (isinstance(stop, Bad) and gz and stop.start in members and not stop.lie):
                break
            nxt, pos = skip_to_member(fh, stop.end)
            if nxt is None:
                break
            skipped = f"{stop.why}: {nxt[0] - members[stop.start]} compressed bytes skipped, reading went on at the next gzip member (byte {nxt[0]})"
            row = Cut(docs + 1, members[stop.start], skipped, stop.id, stop.url, final=False) if stop.doc else None
            gaps.append(Gap(stop.start, members[stop.start], docs, nxt[1], nxt[0], row))
            docs += row is not None
            pos = nxt[1]
        pos += skip(fh, 1 << 62)  # to the end
        members.update({d: c for c, d in getattr(fh.raw, "members", [])})
        error, junk = stream_error(fh), junk_at(fh)
    finally:
        fh.close()
    if final is not None:
        return starts, pos, final, members, docs, gaps
    if not gz:
        members = {d: d for d, _ in starts}
    if isinstance(stop, Bad):
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


def _damage(
    fh: Any, starts: list[tuple[int, int]], docs: int, pos: int, stop: Cut | Bad | None, members: dict[int, int]
) -> tuple[Damage | None, bool, int]:
    """The record a ``.warc.gz`` loses to a corrupt member or to a ``Content-Length`` that does not end it
    (None if neither), whether its member is corrupt, and the document records found after it in its member.

    Where a record has no usable ``Content-Length`` or one that does not end it, its member is read on
    to its end, counting the record headers in the rest (:func:`~curation.ingest.warc_heads.heads_after`):
    a member that then fails its check is corrupt (a flipped byte garbles what follows it before the
    check fails), and loses all its records; one that passes it loses that record and the rest of itself."""
    current = None  # the record being read when the stream stopped
    if isinstance(stop, Cut):
        current = Damage(stop.offset, docs, 0, "", stop.doc, stop.id, stop.url)
    elif isinstance(stop, Bad) and stop.length:
        current = Damage(stop.start, docs, 0, stop.why, stop.doc, stop.id, stop.url)
    head = isinstance(stop, Bad) and stop.length  # a Content-Length that does not end its record, or none usable
    own, after = True, 0
    if head and not fh.raw.corrupt:
        after = heads_after(fh, pos)
        own = fh.raw.members[-1][1] <= stop.start  # a corrupt member after its own is the next member's to say
    bad = damaged(fh, starts, docs, pos, current) if own else None
    if bad is not None and head:
        return dataclasses.replace(bad, why=f"{bad.why} ({stop.why})"), True, after
    if head:
        return dataclasses.replace(current, member=_member(members, stop.start)), False, after
    return bad, bad is not None, after


def _loss(
    path: Path, bad: Damage, corrupt: bool, starts: list[tuple[int, int]], members: dict[int, int], after: int
) -> tuple[int, str, int]:
    """The rows a damaged stretch that starts at ``bad`` takes, one per document record it loses, and
    what its row adds. A corrupt member loses every record that starts in it, counted in its data
    inflated without its check (:func:`~curation.ingest.warc_heads.member_heads`): exactly where its
    records' ``Content-Length`` walk from its first byte to its last, else by their header lines, a
    figure the row gives as "at least" (the damage may have garbled a record's header lines); and the
    record that runs into it from an earlier member. A sound one whose record's ``Content-Length``
    does not end it loses that record and the ``after`` records after it."""
    kept, least = 0, False  # records before it in its member, kept; whether the count is a lower bound
    if corrupt:
        found, whole, exact = member_heads(path, bad.member)
        d = next((d for d, c in members.items() if c == bad.member), bad.start)
        rows, least = max(found + (bad.start < d and bad.doc), int(bad.doc or bad.start not in members)), not exact
        said = "; counted by their WARC/1.x lines in the member's data inflated without its check" + (
            ", which stops inflating before the member's end: records after that are not counted"
            if not whole
            else ", where its records do not follow one another by their Content-Length to its end (the damage "
            "changed their bytes): a record whose header lines it garbled is not counted"
        )
        if exact:
            said = "; counted by walking their Content-Length from the member's first byte to its last in its data inflated without its check"
    else:
        rows = int(bad.doc) + after
        said = f"; {after} after it in its member, found by their WARC/1.x lines" if after else ""
        d0 = max((d for d in members if d <= bad.start), default=0)
        i = bisect.bisect_left(starts, (d0, -1))
        if i < len(starts) and (kept := bad.docs - starts[i][1]):  # records before it in its sound member
            said += f"; the {kept} document record(s) before it in that member, which passed its check, are kept"
    if rows < 2 and not kept:  # one record: its row says it all, but for records the damage hid
        if not least:
            return rows, "", 0
        return rows, f"; at least {rows} document record(s): {_hidden(whole)} in its member, if any, are not counted", 0
    count = f"at least {rows}" if least else f"its {rows}"
    return rows, f"; {count} document record(s) (row(s) {bad.docs + 1}..{bad.docs + rows}) are not kept{said}", kept


def _hidden(whole: bool) -> str:
    return "records whose header lines the damage garbled" if whole else "records after the damage"


def _member(members: dict[int, int], d: int) -> int:
    """Compressed offset of the member that holds decompressed byte ``d``."""
    keys = sorted(members)
    i = bisect.bisect_right(keys, d) - 1
    return members[keys[i]] if i >= 0 else 0
