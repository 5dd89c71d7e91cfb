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

from curation.ingest.json_line import skip_line


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
            skip_line(fh)  # never fh.readline(): the rest of a long line (a 268 MB record) held, twice
            end = min(fh.tell(), size) if k < n else size
            if end <= start:
                continue
            out.append((start, end, line))
            fh.seek(start)
            for at in range(start, end, 1 << 24):  # 16 MiB at a time: a chunk of one long line is over the block
                line += fh.read(min(1 << 24, end - at)).count(b"\n")
            start = end
    return out


@dataclasses.dataclass(frozen=True)
class Stop:
    """Why a compressed JSONL stream ends early, or goes on past a damaged member, from the planning
    pass: nothing from decompressed byte ``offset`` (line ``line``, a line start) on is kept (to the
    end of the damaged member when reading went on). ``member``: the (compressed, decompressed) start
    of the gzip member (zstd frame) whose data failed to decompress or failed its check; None for a
    stream that is cut (or followed by bytes that are not its kind's), whose complete records before
    the cut are sound. ``unit``: what that member is called. ``resumed``: the compressed byte of the
    member reading went on at, and the decompressed offset and line its lines are numbered from;
    ``partial``: that stream's first line was passed over (it does not parse as a JSON object).
    ``how``: ``check`` (its data failed to decompress or failed its check), ``header`` (its header is
    damaged: its first bytes are not the kind's) or ``junk`` (bytes that are no member, between two);
    ``sound``: the member reading went on at is sound (False: its header is damaged too, its own row).
    ``long_first``: the bytes of that stream's first line when they are over the line bound (0: within
    it): it is not parsed, and its reader ledgers it ``too_large``."""

    error: str
    offset: int
    line: int
    member: tuple[int, int] | None = None
    unit: str = "gzip member"
    resumed: tuple[int, int, int] | None = None
    partial: bool = False
    how: str = "check"
    sound: bool = True
    long_first: int = 0

    def row(self) -> str:
        """The ``truncated_input`` ledger row's text for a damaged member (true whatever ``on_error`` is)."""
        c, d = self.member or (0, 0)
        unit = self.unit
        said = {"check": f"the {unit} at compressed byte {c} (decompressed byte {d}) failed its check, so its records may be garbled",
                "header": f"the {unit} at compressed byte {c} (decompressed byte {d}) has a damaged header, so it cannot be decompressed",
                "junk": f"the bytes at compressed byte {c} (decompressed byte {d}) are no {unit}"}[self.how]
        said, end = f"{self.error}: {said}", f"that {unit}" if self.how != "junk" else "them"
        if self.resumed is not None:
            r, rd, rl = self.resumed
            first = ("its first line, which does not parse as a JSON object (the end of a record that began before), is "
                     "not kept" if self.partial else
                     f"its first line, of {self.long_first} bytes, is over the line bound and is not parsed (its own too_large "
                     "row; it may be the end of a record that began before)" if self.long_first else
                     "its first line parses as a JSON object and is read as a record")
            nxt = f"the next {unit} that decompresses" if self.sound else f"the next {unit}, whose header is damaged too (its own row)"
            return (f"{said}: no record from line {self.line} (decompressed byte {self.offset}) to the end of {end} is "
                    f"kept; {r - c} compressed bytes skipped, reading went on at {nxt} "
                    f"(compressed byte {r}), its lines numbered from line {rl} (decompressed byte {rd})"
                    f"{f'; {first}' if self.sound else ''}; re-create the file")
        before = (f"it is the file's first {unit}, so none of the file's records is kept" if d == 0 else
                  f"the records before line {self.line}, in earlier {unit}s, passed their checks (kept unless on_error=fail)")
        return (f"{said}: no record from line {self.line} (decompressed byte {self.offset}) on is kept, "
                f"and the file is not read past it (no later {unit} decompresses); {before}; re-create the file")

    def detail(self) -> dict[str, int]:
        """The ledger row's detail beside its text: where the damaged stretch is, and where reading went on."""
        out = {"offset": self.offset, "member": self.member[0] if self.member else 0}
        if self.resumed is not None:
            out.update(skipped_bytes=self.resumed[0] - out["member"], resumed_at=self.resumed[0])
        return out

    def warning(self, path: Path) -> str:
        """What the run says when it plans the file (visible with --quiet)."""
        if self.member is None:
            return (f"{path}: {self.error}: the records from line {self.line} (decompressed byte {self.offset}) on "
                    "could not be read (how many is unknown); a truncated_input ledger row says so; re-create the file")
        return f"{path}: {self.row()} (a truncated_input ledger row says so)"


def segment_chunks(marks: list[tuple[int, int]], start: int, end: int, line: int, block: int,
                   open_end: bool, damaged: bool = False) -> list[tuple[int, int, int]]:
    """Like :func:`plain_chunks` over decompressed bytes ``[start, end)`` of a compressed stream (the
    whole file, or the part of it read between damaged members), first line ``line``: the cuts are
    the first noted line starts (``marks``) past k/n of its size. ``open_end``: a stream that ends
    early, its last chunk read to the end of the stream (where its reader ledgers the truncation);
    ``damaged``: it ends before a damaged member, where its last chunk ends. A stream of one chunk
    that is neither reads to its end (-1)."""
    size = end - start
    if size <= block:
        return [(start, end if damaged else -1, line)]
    n = -(-size // block)
    cuts = [(start, line)]
    for k in range(1, n):
        i = bisect.bisect_left(marks, (start + k * size // n, 0))
        if i < len(marks) and cuts[-1][0] < marks[i][0] < end:
            cuts.append(marks[i])
    out = [(s, e, ln) for (s, ln), (e, _) in zip(cuts, [*cuts[1:], (end, 0)], strict=True)]
    if open_end:
        out[-1] = (out[-1][0], -1, out[-1][2])
    return out


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
