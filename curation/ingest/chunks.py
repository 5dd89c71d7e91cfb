"""Cutting one input file into near-equal chunks of at most ``block`` bytes, deterministically.

JSONL (plain or gzip/zstd) is cut after newlines, the cuts of a compressed file are found by one
streaming pass at planning time; a Parquet row group larger than the block is cut into row ranges.
Each chunk is (start, end, first line): the rows a reader gives for the chunks of a file are
exactly, and in order, those it gives for the whole file.
"""

from __future__ import annotations

import bisect
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


def compressed_chunks(path: Path, block: int) -> tuple[list[tuple[int, int, int]], int]:
    """Like :func:`plain_chunks` in decompressed bytes: one streaming pass notes a line start per
    64 KiB read; the cuts are the first noted line starts past k/n of the size. A stream that
    ends early is cut the same way over the bytes that decompress, its last chunk open-ended
    (end -1: to the end of the stream, where its reader ledgers the truncation). Also returns
    the decompressed size."""
    marks: list[tuple[int, int]] = []  # (decompressed offset of a line start, its line number)
    pos, line = 0, 1
    with open_input(path) as fh:
        while chunk := fh.read(1 << 16):
            i = chunk.find(b"\n")
            if i >= 0:
                marks.append((pos + i + 1, line + 1))
            line += chunk.count(b"\n")
            pos += len(chunk)
        cut = stream_error(fh) is not None
    if pos <= block:
        return [(0, -1, 1)], pos
    n = -(-pos // block)
    cuts = [(0, 1)]
    for k in range(1, n):
        i = bisect.bisect_left(marks, (k * pos // n, 0))
        if i < len(marks) and cuts[-1][0] < marks[i][0] < pos:
            cuts.append(marks[i])
    out = [(s, e, ln) for (s, ln), (e, _) in zip(cuts, [*cuts[1:], (pos, 0)], strict=True)]
    if cut:
        out[-1] = (out[-1][0], -1, out[-1][2])
    return out, pos


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
