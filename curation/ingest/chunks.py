"""Cutting one input file into near-equal chunks of at most ``block`` bytes, deterministically.

JSONL (plain or gzip/zstd) is cut after newlines, the cuts of a compressed file are found by one
streaming pass at planning time; a Parquet row group larger than the block is cut into row ranges.
Each chunk is (start, end, first line): the rows a reader gives for the chunks of a file are
exactly, and in order, those it gives for the whole file.
"""

from __future__ import annotations

import bisect
import dataclasses
from pathlib import Path

from curation.ingest.streams import open_input, stream_error


def plain_chunks(path: Path, block: int) -> list[tuple[int, int, int]]:
    """(start, end, first line) of ceil(size / block) near-equal chunks, each cut after a newline."""
    size = path.stat().st_size
    if size <= block:
        return [(0, -1, 1)]
    n = -(-size // block)
    out, start, line = [], 0, 1
    with open(path, "rb") as fh:
        for k in range(1, n + 1):
            if start >= size:
                break
            fh.seek(max(k * size // n, start))
            fh.readline()
            end = min(fh.tell(), size) if k < n else size
            if end <= start:
                continue
            out.append((start, end, line))
            fh.seek(start)
            line += fh.read(end - start).count(b"\n")
            start = end
    return out


@dataclasses.dataclass(frozen=True)
class Stop:
    """Why a compressed JSONL stream ends early, from the planning pass: nothing from decompressed
    byte ``offset`` (line ``line``, a line start) on is kept. ``member``: the (compressed,
    decompressed) start of the gzip member (zstd frame) whose data failed to decompress or failed its
    check; None for a stream that is cut (or followed by bytes that are not its kind's), whose
    complete records before the cut are sound. ``unit``: what that member is called."""

    error: str
    offset: int
    line: int
    member: tuple[int, int] | None = None
    unit: str = "gzip member"

    def row(self) -> str:
        """The ``truncated_input`` ledger row's text for a damaged member (true whatever ``on_error`` is)."""
        c, d = self.member or (0, 0)
        unit = self.unit
        before = (f"it is the file's first {unit}, so none of the file's records is kept" if d == 0 else
                  f"the records before line {self.line}, in earlier {unit}s, passed their checks (kept unless on_error=fail)")
        return (f"{self.error}: the {unit} at compressed byte {c} (decompressed byte {d}) failed its check, so its "
                f"records may be garbled: no record from line {self.line} (decompressed byte {self.offset}) on is kept, "
                f"and the file is not read past it; {before}; re-create the file")

    def warning(self, path: Path) -> str:
        """What the run says when it plans the file (visible with --quiet)."""
        if self.member is None:
            return (f"{path}: {self.error}: the records from line {self.line} (decompressed byte {self.offset}) on "
                    "could not be read (how many is unknown); a truncated_input ledger row says so; re-create the file")
        return f"{path}: {self.row()} (a truncated_input ledger row says so)"


def compressed_chunks(path: Path, block: int) -> tuple[list[tuple[int, int, int]], int, Stop | None]:
    """Like :func:`plain_chunks` in decompressed bytes: one streaming pass notes a line start per
    64 KiB read; the cuts are the first noted line starts past k/n of the size. A stream that
    ends early is cut the same way over the bytes that decompress, its last chunk open-ended
    (end -1: to the end of the stream, where its reader ledgers the truncation). A member that
    fails to decompress or fails its check (:class:`Stop` with a ``member``) is dropped whole: the
    chunks cover only the lines before it, the last one ends there (its reader ledgers it from the
    spec). Also returns the decompressed size (of those lines, for a damaged member) and the stop."""
    marks: list[tuple[int, int]] = []  # (decompressed offset of a line start, its line number)
    pos, line = 0, 1
    last = (0, 1)  # the last line start read, and its line number
    at_member = (0, 1)  # the last line start at or before the latest member's start
    seen = 0  # members whose line start is noted
    with open_input(path) as fh:
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
        error = stream_error(fh)
        stop = None if error is None else Stop(error, *last)
        if error is not None and getattr(fh.raw, "corrupt", False):
            stop = Stop(error, *at_member, members[-1], f"{fh.raw.kind} {fh.raw.unit}")
            pos = at_member[0]
    if pos <= block:
        return [(0, pos if stop and stop.member else -1, 1)], pos, stop
    n = -(-pos // block)
    cuts = [(0, 1)]
    for k in range(1, n):
        i = bisect.bisect_left(marks, (k * pos // n, 0))
        if i < len(marks) and cuts[-1][0] < marks[i][0] < pos:
            cuts.append(marks[i])
    out = [(s, e, ln) for (s, ln), (e, _) in zip(cuts, [*cuts[1:], (pos, 0)], strict=True)]
    if stop is not None and stop.member is None:
        out[-1] = (out[-1][0], -1, out[-1][2])
    return out, pos, stop


def row_chunks(num_rows: int, nbytes: int, block: int) -> list[tuple[int, int]]:
    """Row ranges of a Parquet row group of ``nbytes`` (uncompressed): ceil(nbytes / block) equal
    parts, or ``[(0, -1)]`` (the whole group) when it fits in a block.

    >>> row_chunks(10, 30, 10), row_chunks(10, 5, 10)
    ([(0, 3), (3, 6), (6, 10)], [(0, -1)])
    """
    n = min(-(-nbytes // block), num_rows)
    if n <= 1:
        return [(0, -1)]
    return [(k * num_rows // n, (k + 1) * num_rows // n) for k in range(n)]
