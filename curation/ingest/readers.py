"""Reading one planned partition (:class:`~curation.ingest.inputs.InputSpec`) into schema rows.

JSONL lines are streamed (a partition's bytes are never held whole; a chunk of a compressed file
starts by decompressing up to its first line) and a truncated compressed
stream becomes a ledger row (``truncated_input``) after the records read before it; Parquet row
groups, dataset shards and crawl files (WARC/WET, HTML) go through the same row builders.
"""

from __future__ import annotations

from collections.abc import Iterator

import pandas as pd
import pyarrow.parquet as pq

from curation.ingest.chunks import open_input
from curation.ingest.inputs import InputSpec
from curation.ingest.records import parse_jsonl_lines, rows_from_records
from curation.ingest.warc import crawl_frame, iter_warc, read_html_file
from curation.schema import DropReason


def read_spec(spec: InputSpec, max_chars: int) -> pd.DataFrame:
    """Parse one partition spec into schema rows (with drop reasons)."""
    label = str(spec.path)
    if spec.fmt in ("warc", "html"):
        records = iter_warc(spec.path, max_chars) if spec.fmt == "warc" else read_html_file(spec.path, max_chars)
        return crawl_frame(records, spec.source)
    if spec.fmt == "parquet":
        table = pq.ParquetFile(spec.path).read_row_group(spec.start) if spec.end > spec.start else None
        first, last = spec.rows
        if table is not None and last >= 0:  # a row range of a large group: its rows keep their numbers in the group
            table = table.slice(first, last - first)
        records = table.to_pylist() if table is not None else []
        return rows_from_records(records, None, label, list(range(first + 1, first + len(records) + 1)), spec.fields, spec.source, max_chars)
    if spec.fmt == "datasets":
        import datasets

        ds = datasets.load_from_disk(str(spec.path)).select(range(spec.start, spec.end))
        records = ds.to_list()
        lines = list(range(spec.start + 1, spec.start + len(records) + 1))
        return rows_from_records(records, None, label, lines, spec.fields, spec.source, max_chars)
    lines = Lines(spec)
    df = parse_jsonl_lines(lines, label, spec.first_line, spec.fields, spec.source, max_chars)
    if lines.error is None:
        return df
    truncated_line = spec.first_line + lines.count
    bad = rows_from_records([None], [(DropReason.TRUNCATED_INPUT.value, f"{lines.error}; re-create the file")], label, [truncated_line], spec.fields, spec.source)
    return pd.concat([df, bad], ignore_index=True)


class Lines:
    """The lines of a JSONL partition (without newlines), streamed: the partition's bytes are never
    held whole (a 128 MB block read at once and split took ~2.5x its size before parsing began).

    A compressed stream that ends early sets ``error``; the partial last record is not yielded, so
    a truncated file loses at most one 64 KiB read besides it. ``count`` is the lines yielded.
    """

    def __init__(self, spec: InputSpec) -> None:
        self.spec, self.error, self.count = spec, None, 0

    def __iter__(self) -> Iterator[bytes]:
        spec = self.spec
        with open_input(spec.path) as fh:
            if spec.end >= 0:  # a chunk: skip to its first line (a zstd stream is decompressed up to it)
                if fh.seekable():
                    fh.seek(spec.start)
                else:
                    for _ in range(spec.start >> 20):
                        fh.read(1 << 20)
                    fh.read(spec.start & ((1 << 20) - 1))
                left = spec.end - spec.start
                while left > 0 and (line := fh.readline(left)):
                    left -= len(line)
                    self.count += 1
                    yield line.rstrip(b"\n")
                return
            rest, read = bytearray(), 0  # the current line's start (a 50 MB line is not re-scanned per read)
            try:
                while chunk := fh.read(1 << 16):  # small reads: a truncated stream loses < 64 KiB
                    read += len(chunk)
                    if b"\n" not in chunk:
                        rest += chunk
                        continue
                    first, *middle, last = chunk.split(b"\n")
                    rest += first
                    self.count += 1 + len(middle)
                    yield bytes(rest)
                    yield from middle
                    rest = bytearray(last)
            except (EOFError, OSError) as exc:
                self.error = f"truncated compressed stream after {read} bytes ({exc or type(exc).__name__}); later records could not be read"
                return
            if rest:
                self.count += 1
                yield bytes(rest)
