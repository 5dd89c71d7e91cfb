"""The planning pass of a compressed JSONL file, going on past a damaged gzip member (zstd frame).

One streaming pass notes a line start per 64 KiB read. A member whose data fails to decompress or
fails its check is dropped whole (gzip checks a member's CRC only at its end: what it gave may be
garbled), and reading goes on at the next member (frame) after it whose first bytes decompress
(:func:`next_unit`): the file is read as segments, each a stream opened at a member, cut into
chunks like a whole file (:func:`~curation.ingest.chunks.segment_chunks`). A member whose header
is damaged (the stream stops at bytes that are not its kind's, at a header error, or at a header
that gives no byte before the file ends) is skipped the same way, and each of several adjacent ones
is a member of its own, found with its header restored (:mod:`curation.ingest.unit_heads`).

The first line of a resumed stream may be the end of a record that began in the damaged member: it
is kept only if it parses as a JSON object (a record's tail never does, unless it is the whole
record: the damaged member ended at a line end), else it is passed over, its line number unused. A
first line over the line bound (:func:`~curation.ingest.json_line.max_line_bytes`) is read past a
piece at a time, neither held nor parsed, and kept as a line: its reader ledgers it ``too_large``.
Lines after a damaged member cannot be numbered exactly (its line count is unknown): they are
numbered on from what was decompressed before the stream stopped, plus one, and their decompressed
offsets likewise, so ids made from file and line stay unique.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from curation.ingest.chunks import Stop, segment_chunks
from curation.ingest.json_line import loads, read_line
from curation.ingest.streams import BOM, open_input, stream_error
from curation.ingest.unit_heads import damaged_head, decodes, next_start


@dataclasses.dataclass(frozen=True)
class Segment:
    """Lines ``[start, end)`` (decompressed offsets, numbered on past damaged members) of a stream
    opened at ``resume`` (None: the file's start), the first numbered ``line``; ``marks``: its noted
    line starts. ``open_end``: a stream that ends early (a cut), read to its end by its last chunk;
    ``damaged``: the member it ends before."""

    start: int
    end: int
    line: int
    resume: tuple[int, int] | None
    marks: list[tuple[int, int]]
    open_end: bool
    damaged: Stop | None


def segments(path: Path, max_bytes: int = 0) -> tuple[list[Segment], Stop | None]:
    """The file's segments and why reading ended early, if it did (a cut, or a damaged member no
    member that decompresses follows); ``max_bytes``: the line bound of the reader (0: none)."""
    out: list[Segment] = []
    resume, start, line, skip = None, 0, 1, 0  # skip: the bytes of a passed-over first line
    while True:
        with open_input(path, resume) as fh:
            while skip > 0 and (piece := fh.read(min(skip, 1 << 20))):  # never the passed-over line whole
                skip -= len(piece)
            marks, pos, nline, last, at_member = _read(fh, start, line)
            raw, error = fh.raw, stream_error(fh)
        damage = _damage(path, raw, error, last, at_member)
        if damage is None:
            stop = None if error is None else Stop(error, *last)
            if out and pos == start and stop is None:  # a resumed stream of nothing but a passed-over line
                return out, None
            out.append(Segment(start, pos, line, resume, marks, stop is not None, None))
            return out, stop
        member, at, how, nxt = damage
        unit = f"{raw.kind} {raw.unit}"
        if nxt is None:
            stop = Stop(error, *at, member, unit, how=how)
            out.append(Segment(start, at[0], line, resume, marks, False, stop))
            return out, stop
        base, based = raw.made + 1, nline + 1  # past every byte and line decompressed: offsets and line numbers stay unique
        size, newline, whole, long = _first_line(path, (nxt[0], base), max_bytes) if nxt[1] else (0, False, True, False)
        stop = Stop(error, *at, member, unit, (nxt[0], base, based), not whole, how, nxt[1], size if long else 0)
        out.append(Segment(start, at[0], line, resume, marks, False, stop))
        resume, skip = (nxt[0], base), 0 if whole else size
        start, line = base + skip, based + (not whole and newline)


def _damage(path: Path, raw: Any, error: str | None, last: tuple[int, int], at_member: tuple[int, int]) -> tuple[
        tuple[int, int], tuple[int, int], str, tuple[int, int] | None] | None:
    """The damaged member (or junk) a stream stopped at: its (compressed, decompressed) start, the line
    start from which no record is kept, how it is damaged (:class:`~curation.ingest.chunks.Stop`'s
    ``how``) and the next member (:func:`next_unit`); None for a clean end or a cut. A member that gives
    no byte before the stream ends may be a damaged header whose lengths run past the end: it is one
    if a member follows it."""
    if error is None:
        return None
    if raw.junk_at is not None:
        member, at = (raw.junk_at, raw.made), last
    elif raw.corrupt or (raw.members and raw.members[-1][1] == raw.made):
        member, at = raw.members[-1], at_member
    else:
        return None
    how = "header" if _damaged_head(path, raw.kind, member[0]) else "check" if raw.junk_at is None else "junk"
    nxt = next_unit(path, raw.kind, member[0])
    if nxt is None and not raw.corrupt and how != "header":  # nothing after it decompresses: the stream's end, a cut
        return None
    return member, at, how, nxt


def _read(fh: Any, pos: int, line: int) -> tuple[list[tuple[int, int]], int, int, tuple[int, int], tuple[int, int]]:
    """Read ``fh`` (at decompressed byte ``pos``, line ``line``) to its end: the noted line starts,
    the end and its line, the last line start read and the last line start at or before the latest
    member's start."""
    marks: list[tuple[int, int]] = []  # (decompressed offset of a line start, its line number)
    last = (pos, line)  # the last line start read, and its line number
    at_member = last  # the last line start at or before the latest member's start
    seen = 0  # members whose line start is noted
    members = getattr(fh.raw, "members", [])
    while chunk := fh.read(1 << 16):
        end = pos + len(chunk)
        while seen < len(members) and members[seen][1] <= end:  # a member's bytes start in this chunk
            i = chunk.rfind(b"\n", 0, max(members[seen][1] - pos, 0))
            at_member = (pos + i + 1, line + chunk.count(b"\n", 0, i + 1)) if i >= 0 else last
            seen += 1
        i = chunk.find(b"\n")
        if i >= 0:
            marks.append((pos + i + 1, line + 1))
            j = chunk.rfind(b"\n")
            last = (pos + j + 1, line + chunk.count(b"\n"))
        line += chunk.count(b"\n")
        pos = end
    if seen < len(members):  # a member that failed before giving a byte starts where the stream stopped
        at_member = last
    return marks, pos, line, last, at_member


def _first_line(path: Path, resume: tuple[int, int], max_bytes: int) -> tuple[int, bool, bool, bool]:
    """The first line of the stream opened at ``resume``: its size, whether a newline ends it, whether
    it is a whole line (it parses as a JSON object; a line the stream stops in never is) and whether it
    is over ``max_bytes`` (0: no bound), read past 1 MiB at a time and never held nor parsed: a whole
    line then, which its reader ledgers ``too_large``."""
    with open_input(path, resume) as fh:
        first, size, newline = read_line(fh, -1, max_bytes)
        if not newline and stream_error(fh) is not None:
            return size, newline, False, False
    if isinstance(first, int):
        return size, newline, True, True
    try:
        return size, newline, isinstance(loads(first.removeprefix(BOM)), dict), False
    except (ValueError, RecursionError):
        return size, newline, False, False


def next_unit(path: Path, kind: str, after: int) -> tuple[int, bool] | None:
    """Compressed byte of the first gzip member (zstd frame) after byte ``after`` whose first bytes
    decompress, and whether it is sound (False: they decompress only with its damaged header restored)."""
    return next_start(path, kind, after, lambda data: decodes(data, kind))


def _damaged_head(path: Path, kind: str, offset: int) -> bool:
    return damaged_head(path, kind, offset, lambda data: decodes(data, kind))


#: A chunk of a compressed JSONL file: (start, end, first line) as :func:`~curation.ingest.chunks.plain_chunks`
#: gives, the (compressed, decompressed) offset of the member its stream is opened at (None: the file's start)
#: and the damaged member it ends before (its last chunk's ledger row).
Chunk = tuple[int, int, int, tuple[int, int] | None, Stop | None]


def compressed_chunks(path: Path, block: int, max_bytes: int = 0) -> tuple[list[Chunk], int, int, list[Stop]]:
    """The file's chunks, the decompressed offset where its last one ends, the decompressed bytes
    kept, and the stops: each damaged member, then a cut (a stream that ends early, its complete
    records kept), if any. ``max_bytes``: the reader's line bound (:func:`segments`)."""
    segs, stop = segments(path, max_bytes)
    chunks: list[Chunk] = []
    for seg in segs:
        cut = segment_chunks(seg.marks, seg.start, seg.end, seg.line, block, seg.open_end, seg.damaged is not None)
        chunks += [(s, e, n, seg.resume, seg.damaged if k == len(cut) - 1 else None) for k, (s, e, n) in enumerate(cut)]
    stops = [seg.damaged for seg in segs if seg.damaged is not None]
    if stop is not None and stop.member is None:
        stops.append(stop)
    return chunks, segs[-1].end, sum(seg.end - seg.start for seg in segs), stops


def warning(path: Path, stops: list[Stop]) -> str:
    """What the run says when it plans a file that is damaged or cut (visible with --quiet): one line."""
    went_on = [s for s in stops if s.resumed is not None]
    if not went_on:
        return stops[0].warning(path)
    said = (f"{path}: {len(went_on)} damaged {went_on[0].unit}(s) skipped, reading went on after each (the first: "
            f"{went_on[0].row()})")
    if len(stops) > len(went_on):
        said += f"; then {stops[-1].warning(path).removeprefix(f'{path}: ')}"
    return f"{said}; {len(stops)} truncated_input ledger row(s) say so"
