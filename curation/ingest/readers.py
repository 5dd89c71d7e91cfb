"""Reading one planned partition (:class:`~curation.ingest.inputs.InputSpec`) into schema rows.

JSONL lines are streamed (a partition's bytes are never held whole; a chunk of a compressed file
starts by decompressing up to its first line) and a truncated compressed
stream becomes a ledger row (``truncated_input``) after the records read before it (a member that
failed its check, found when the run was planned, after the records of the members before it); Parquet row
groups, dataset shards and crawl files (WARC/WET, HTML) go through the same row builders.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from curation.ingest.inputs import InputSpec
from curation.ingest.json_line import max_line_bytes, read_line
from curation.ingest.jsonl_decode import decode_jsonl_lines
from curation.ingest.records import rows_from_records
from curation.ingest.streams import BOM, open_input, stream_error
from curation.ingest.warc import crawl_frame, iter_warc, read_html_file, until_cut
from curation.schema import DropReason


def read_spec(spec: InputSpec, max_chars: int, max_meta_chars: int = 0) -> pd.DataFrame:
    """Parse one partition spec into schema rows (with drop reasons); ``meta`` of JSONL, Parquet and
    ``datasets`` records bounded by ``max_meta_chars`` (0: no bound)."""
    label = spec.name
    if spec.fmt in ("warc", "html"):
        if spec.start == spec.end == 0 and spec.cut is None:  # an empty file (a damaged first record has a row)
            return crawl_frame(iter(()), spec.source)
        if spec.fmt == "html":
            return crawl_frame(read_html_file(spec.path, max_chars, label), spec.source)
        expected = spec.docs if spec.docs >= 0 else None  # fewer records read than planned: a ledger row, never silence
        records = until_cut(iter_warc(spec.path, max_chars, spec.start, spec.end, spec.first_line, expected, label, spec.one_member),
                            spec.cut, label)
        return crawl_frame(records, spec.source)
    if spec.fmt == "parquet":
        return _parquet_rows(spec, label, max_chars, max_meta_chars)
    if spec.fmt == "datasets":
        import datasets

        if spec.end <= spec.start:  # an empty dataset: nothing to load (datasets cannot load one of no file)
            return rows_from_records([], None, label, [], spec.fields, spec.source, max_chars, max_meta_chars)
        ds = datasets.load_from_disk(str(spec.path)).select(range(spec.start, spec.end))
        records = ds.to_list()
        lines = list(range(spec.start + 1, spec.start + len(records) + 1))
        return rows_from_records(records, None, label, lines, spec.fields, spec.source, max_chars, max_meta_chars)
    records, errors, numbers = _jsonl_records(spec, max_chars)
    return rows_from_records(records, errors, label, numbers, spec.fields, spec.source, max_chars, max_meta_chars)


def _parquet_rows(spec: InputSpec, label: str, max_chars: int, max_meta_chars: int) -> pd.DataFrame:
    """The rows of a Parquet spec: row groups ``start``..``end`` (consecutive small groups read
    together), or a row range of one large group. A group that cannot be read (a corrupt page) is one
    ``truncated_input`` row naming it and its rows; the other groups are read."""
    pf = pq.ParquetFile(spec.path) if spec.end > spec.start else None
    if pf is None:
        return rows_from_records([], None, label, [], spec.fields, spec.source, max_chars, max_meta_chars)
    first, last = spec.rows
    # a row's number is its row in the file (1-based), whatever group and range it was read in
    line = first + sum(pf.metadata.row_group(g).num_rows for g in range(spec.start)) + 1
    records: list = []
    errors: list = []
    numbers: list[int] = []
    for g in range(spec.start, spec.end):
        try:
            table = pf.read_row_group(g)
        except (OSError, pa.ArrowException) as exc:
            n = pf.metadata.row_group(g).num_rows if last < 0 else last - first
            records.append(None)
            errors.append((DropReason.TRUNCATED_INPUT.value, f"row group {g} ({n} rows from row {line}) cannot be read ({' '.join(str(exc).split())}); "
                           "re-create the file", {"row_group": g, "rows": n}))
            numbers.append(line)
            line += n
            continue
        if last >= 0:  # a row range of a large group
            table = table.slice(first, last - first)
        rows = table.to_pylist()
        records += rows
        errors += [None] * len(rows)
        numbers += range(line, line + len(rows))
        line += len(rows)
    return rows_from_records(records, errors, label, numbers, spec.fields, spec.source, max_chars, max_meta_chars)


def read_group(specs: Sequence[InputSpec], max_chars: int, max_html_bytes: int, max_meta_chars: int = 0) -> pd.DataFrame:
    """The rows of a partition's specs, in order. Small JSONL files read together become one frame
    (a frame per file cost ~1 ms of pandas each: 10,000 files took 9 s more than their bytes)."""
    frames: list[pd.DataFrame] = []
    run: list[InputSpec] = []  # consecutive JSONL specs with the same source and fields

    def flush() -> None:
        if len(run) == 1:
            frames.append(read_spec(run[0], max_chars, max_meta_chars))
        elif run:
            records, errors, numbers, files = [], [], [], []
            for spec in run:
                r, e, n = _jsonl_records(spec, max_chars)
                records += r
                errors += e
                numbers += n
                files += [spec.name] * len(r)
            frames.append(rows_from_records(records, errors, files, numbers, run[0].fields, run[0].source, max_chars, max_meta_chars))
        run.clear()

    for spec in specs:
        if spec.fmt == "jsonl" and (not run or (run[0].fields, run[0].source) == (spec.fields, spec.source)):
            run.append(spec)
            continue
        flush()
        if spec.fmt == "jsonl":
            run.append(spec)
        else:
            frames.append(read_spec(spec, max_html_bytes if spec.fmt in ("warc", "html") else max_chars, max_meta_chars))
    flush()
    return frames[0] if len(frames) == 1 else pd.concat(frames, ignore_index=True)


def _jsonl_records(spec: InputSpec, max_chars: int) -> tuple[list, list, list[int]]:
    """Decoded records of a JSONL spec, with a ``truncated_input`` record after the last complete one of a cut file."""
    lines = Lines(spec, max_line_bytes(max_chars))
    records, errors, numbers = decode_jsonl_lines(lines, spec.first_line, lines.max_bytes)
    if spec.damaged is not None:  # the planning pass found a member that failed its check: this chunk ends before it
        stop = spec.damaged
        records.append(None)
        errors.append((DropReason.TRUNCATED_INPUT.value, stop.row(), stop.detail()))  # type: ignore[arg-type]
        numbers.append(spec.first_line + lines.count)
    elif lines.error is not None:
        error = (f"{lines.error}; the complete records before decompressed byte {lines.offset} are kept (unless on_error=fail), "
                 "later records could not be read; re-create the file")
        records.append(None)
        errors.append((DropReason.TRUNCATED_INPUT.value, error, {"offset": lines.offset}))  # type: ignore[arg-type]
        numbers.append(spec.first_line + lines.count)
    elif lines.short:  # the file shrank (or was rewritten) while it was read: the part's last records are not there
        error = (f"the file ended {lines.short} bytes before this part's planned end (byte {spec.end}): it changed while ingest "
                 f"read it; the records from byte {lines.offset} on were not read; re-run ingest once the file is complete")
        records.append(None)
        errors.append((DropReason.TRUNCATED_INPUT.value, error, {"offset": lines.offset, "missing_bytes": lines.short}))  # type: ignore[arg-type]
        numbers.append(spec.first_line + lines.count)
    return records, errors, numbers


class Lines:
    """The lines of a JSONL partition (each with its newline), streamed: the partition's bytes are never
    held whole (a 128 MB block read at once and split took ~2.5x its size before parsing began).

    A compressed stream that ends early sets ``error`` and ``offset`` (the decompressed byte where
    the unreadable part begins): every complete line before it is yielded, the partial last record
    is not. A line over ``max_bytes`` is read on to its end without being held, and yielded as its
    length (an int: :func:`~curation.ingest.records.decode_jsonl_lines` ledgers it). A file that ends before the partition's planned end (it shrank while it was read) sets
    ``short``, the bytes missing, and ``offset``; a partial line it ends in is not yielded. ``count``
    is the lines yielded.
    """

    def __init__(self, spec: InputSpec, max_bytes: int = 0) -> None:
        self.spec, self.max_bytes, self.error, self.count, self.offset, self.short = spec, max_bytes, None, 0, 0, 0

    def __iter__(self) -> Iterator[bytes | int]:
        spec = self.spec
        with open_input(spec.path, spec.resume) as fh:  # past a damaged member: at the member reading went on at
            if skip := spec.start - (spec.resume[1] if spec.resume else 0):  # a chunk: skip to its first line
                if fh.seekable():
                    fh.seek(skip)
                else:  # a compressed stream is decompressed up to it
                    for _ in range(skip >> 20):
                        fh.read(1 << 20)
                    fh.read(skip & ((1 << 20) - 1))
            left, pos = spec.end - spec.start if spec.end >= 0 else -1, spec.start  # -1: to the end of the stream
            cut = False
            while left and (size := (got := read_line(fh, left, self.max_bytes))[1]):
                line, newline = got[0], got[2]  # line: its bytes, or its length when over the bound (json_line.py)
                if not newline and stream_error(fh) is not None:
                    cut = True  # the partial record at a cut
                    break
                if 0 < size < left and not newline:  # the end of the file, before the planned end
                    break
                pos += size
                left = max(left - size, 0) if left > 0 else -1
                self.count += 1
                # a UTF-8 byte order mark opens files some Windows tools write, and opens a line in the
                # middle of files joined with cat: never part of a record (no JSON value starts with it)
                while isinstance(line, bytes) and line.startswith(BOM):  # files joined with cat more than once
                    line = line[len(BOM):]
                yield line  # with its line end (whitespace to JSON): never line.rstrip(), a copy of the line
            # a chunk's read-ahead may reach a cut that belongs to a later chunk: only the open-ended last one reports it
            if cut or spec.end < 0:
                self.error, self.offset = stream_error(fh), pos
            elif left > 0:
                self.short, self.offset = left, pos

