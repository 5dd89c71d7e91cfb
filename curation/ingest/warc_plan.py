"""Cutting a WARC/WET file into partitions on record boundaries, and finding where a cut file ends.

One pass reads the record headers (decompressing a ``.warc.gz``; a record's payload is skipped by
its ``Content-Length``, as FastWARC reads it). A partition may start at a record that starts a
gzip member (Common Crawl writes one member per record; a plain ``.warc`` can start at any record),
so each partition is a compressed byte range a reader opens on its own. The file is cut into
ceil(size / block) near-equal parts of its decompressed size, the rule JSONL follows
(:mod:`curation.ingest.chunks`): a worker holds one part, never the whole file.

A file that ends inside a record (its header or its payload) is :class:`Cut`: the reader keeps the
records before it and ledgers that record as ``truncated_input``.
"""

from __future__ import annotations

import bisect
import dataclasses
from pathlib import Path
from typing import Any

from curation.ingest.streams import compression, open_input, stream_error

#: WARC-Type of the records that become rows (``curation.ingest.warc.iter_warc`` reads these).
DOC_TYPES = (b"response", b"conversion", b"resource")
_LINE = 1 << 16  # a header line longer than this is read in pieces (a hostile file is not one line in memory)


@dataclasses.dataclass(frozen=True)
class Cut:
    """Where a cut WARC file ends: the record that is cut (its row number among documents), its offset, why."""

    line: int
    offset: int  # decompressed byte where the cut record starts
    error: str
    id: str | None = None
    url: str | None = None


@dataclasses.dataclass(frozen=True)
class WarcChunk:
    start: int  # compressed byte offset of the partition's first record
    end: int  # compressed byte offset after its last record; -1: to the end of the file
    first_line: int  # row number of its first document record
    nbytes: int  # decompressed bytes
    cut: Cut | None = None  # only on the last chunk of a cut file
    docs: int = -1  # document records the planning pass counted in it (-1: not counted); the reader checks it


def warc_chunks(path: Path, block: int) -> list[WarcChunk]:
    """Near-equal partitions of at most ~``block`` decompressed bytes, cut at record starts that start a member."""
    if compression(path) == "zstd":  # frames do not follow records: one partition
        return [WarcChunk(0, -1, 1, path.stat().st_size)]
    starts, total, cut, members, ndocs = _scan(path)
    candidates = [(d, members[d], docs) for d, docs in starts if d in members]  # (decompressed, compressed, documents before)
    n = max(-(-total // block), 1)
    cuts = [(0, 0, 0)]
    for k in range(1, n):
        i = bisect.bisect_left(candidates, (k * total // n, -1, -1))
        if i < len(candidates) and cuts[-1][0] < candidates[i][0] < total:
            cuts.append(candidates[i])
    ends = [*cuts[1:], (total, -1, ndocs)]
    return [WarcChunk(c, e, docs + 1, de - d, cut if k == len(cuts) - 1 else None, docs_end - docs)
            for k, ((d, c, docs), (de, e, docs_end)) in enumerate(zip(cuts, ends, strict=True))]


def _scan(path: Path) -> tuple[list[tuple[int, int]], int, Cut | None, dict[int, int], int]:
    """(decompressed offset of each record start, documents before it), the decompressed size, the
    cut, the compressed offset of each decompressed offset that starts a gzip member, and the
    number of complete document records."""
    with open_input(path) as fh:
        starts, total, cut, ndocs = _records(fh)
        _drain(fh)
        raw = getattr(fh, "raw", None)
        members = {d: c for c, d in raw.members} if hasattr(raw, "members") else {d: d for d, _ in starts}
    return starts, total, cut, members, ndocs


def _records(fh: Any) -> tuple[list[tuple[int, int]], int, Cut | None, int]:
    """Read record headers, skip payloads; stop at the end, at a cut, or where no record starts."""
    starts: list[tuple[int, int]] = []
    docs, pos = 0, 0
    while True:
        while fh.peek(1)[:1] in (b"\r", b"\n"):  # the blank lines that end the previous record
            pos += len(fh.read(1))
        first = fh.readline(_LINE)
        if not first:
            break
        if not first.startswith(b"WARC/"):  # not where a record should start: no more cut points
            return starts, pos + len(first) + _drain(fh), None, docs
        start, headers, size = pos, {}, len(first)
        complete = False
        while line := fh.readline(_LINE):
            size += len(line)
            if line in (b"\r\n", b"\n"):
                complete = True
                break
            key, _, value = line.partition(b":")
            headers[key.strip().lower()] = value.strip()
        rid = headers.get(b"warc-record-id", b"").decode("utf-8", "replace").strip("<>").removeprefix("urn:uuid:") or None
        url = headers.get(b"warc-target-uri", b"").decode("utf-8", "replace") or None
        if not complete:
            return starts, start + size, Cut(docs + 1, start, _why(fh, f"cut inside the record header at byte {start + size}")), docs
        try:
            length = int(headers.get(b"content-length", b""))
        except ValueError:
            return starts, start + size + _drain(fh), None, docs  # FastWARC decides what this is
        read = _skip(fh, length)
        if read < length:
            why = f"cut inside the record payload after {read} of {length} bytes"
            return starts, start + size + read, Cut(docs + 1, start, _why(fh, why), rid, url), docs
        starts.append((start, docs))
        docs += headers.get(b"warc-type", b"").lower() in DOC_TYPES
        pos = start + size + length
    error = stream_error(fh)
    return starts, pos, Cut(docs + 1, pos, error) if error else None, docs


def _why(fh: Any, what: str) -> str:
    error = stream_error(fh)
    return f"{what} ({error})" if error else f"{what} (the file ends there)"


def _skip(fh: Any, n: int) -> int:
    read = 0
    while read < n and (piece := fh.read(min(n - read, 1 << 20))):
        read += len(piece)
    return read


def _drain(fh: Any) -> int:
    return _skip(fh, 1 << 62)
