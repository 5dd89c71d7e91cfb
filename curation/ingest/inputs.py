"""Planning the input of a run: files, folders, globs and ``@list`` files → one spec per partition.

Planning runs on the client and fails before any output when a file is unreadable, has an
unknown format or no text field: a partition per file chunk (JSONL, plain or compressed, cut into
equal chunks of at most the block size on line boundaries), per Parquet row group (or row range of
a group over the block), per dataset shard, or per crawl file (:mod:`curation.ingest.chunks`).
The block size depends only on the inputs (:func:`block_bytes`), never on the workers, so the
partitions, and every output, are the same however the run is scheduled.
:mod:`curation.ingest.readers` reads a spec into schema rows on the workers.
"""

from __future__ import annotations

import dataclasses
import logging
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from curation.ingest import peek
from curation.ingest.chat import check_fields, column_kinds, turns_fix
from curation.ingest.chunks import Stop, row_chunks
from curation.ingest.discover import READS, InputError, find_inputs, input_label, survey  # noqa: F401 -- InputError, find_inputs: imported from here
from curation.ingest.input_entries import entry_index, names, unused_entry_warnings
from curation.ingest.jsonl_plan import jsonl_chunks
from curation.ingest.notices import binary_columns, binary_note, input_name_warnings, unmapped_fields
from curation.ingest.records import FieldMap
from curation.ingest.unread import note, repeated_note, underscore_note
from curation.ingest.warc_plan import Cut, warc_chunks

#: The smallest JSONL block, MB: a partition's fixed cost (~0.8 s over the recipe: its Parquet reads,
#: writes and tasks) stays small against its work; 8 MB blocks cost a 133 MB run 6 % more
#: (benchmarks/recipe/RESULTS.md).
MIN_BLOCK_MB = 16
#: The smallest block of a WARC/WET file, MB of its decompressed records: a page's extracted text is
#: ~5 % of its record, so a 16 MB block of pages made a partition of ~0.8 MB of documents, and every
#: stage after ingest paid its per-partition cost on it (a 248 MB crawl of 1,051 real pages: 15
#: partitions, 41.4 CPU-s for the whole recipe; in 2 partitions 31.5, the same documents; benchmarks/code_web).
CRAWL_MIN_BLOCK_MB = 128

log = logging.getLogger(__name__)


@dataclasses.dataclass(frozen=True)
class InputSpec:
    """One partition to read: a file (or a chunk of it, or a dataset shard)."""

    path: Path
    fmt: str  # jsonl | parquet | datasets | warc | html
    source: str | None
    fields: FieldMap
    start: int = 0  # byte offset (jsonl; decompressed bytes if compressed), row group (parquet) or first row (datasets)
    end: int = -1  # jsonl: -1 = to the end of the file; start = end = 0: an empty file, nothing to read
    first_line: int = 1
    rows: tuple[int, int] = (0, -1)  # parquet: a row range of the group (-1: to its end)
    nbytes: int = 0  # bytes to read (decompressed; Parquet: uncompressed), what partitions are balanced by
    cut: Cut | None = None  # warc: the record where a cut file ends (on its last chunk)
    docs: int = -1  # warc: document records the planning pass counted in this chunk (-1: not counted)
    one_member: bool = False  # warc: a .warc.gz of one gzip member (offsets in its rows are decompressed bytes)
    label: str = ""  # how ledgers and artifacts name the file (:func:`input_label`); "" for ``str(path)``
    damaged: Stop | None = None  # jsonl: the member that failed its check, where this chunk ends (its ledger row)
    resume: tuple[int, int] | None = None  # jsonl: the (compressed, decompressed) offset of the member its stream opens at, past a damaged one

    @property
    def name(self) -> str:
        """The file's name in ledgers and artifacts."""
        return self.label or str(self.path)


@dataclasses.dataclass(frozen=True)
class _Rules:
    source: str | None
    fields: dict[str, str]
    inputs: tuple[dict[str, Any], ...]
    block: int  # bytes
    crawl_block: int  # bytes of decompressed WARC/WET records
    max_chars: int  # the reader's: its line bound holds where a compressed JSONL file is read past a damaged member
    binary: dict[str, Path] = dataclasses.field(default_factory=dict)  # binary columns that reach meta → the first file


def plan_inputs(paths: Sequence[str | Path], *, source: str | None = None, fields: dict[str, str] | None = None,
                inputs: Sequence[dict[str, Any]] = (), blocksize_mb: int = 128, min_block_mb: int = MIN_BLOCK_MB,
                min_partitions: int = 16, crawl_min_block_mb: int = CRAWL_MIN_BLOCK_MB, max_chars: int = 0) -> list[InputSpec]:
    """Expand files, folders, globs and ``@list`` files into partition specs; fail early on unusable input.

    ``source`` and ``fields`` apply to every file unless the first entry of ``inputs`` whose
    ``match`` glob matches it says otherwise; JSONL is split into chunks of at most
    :func:`block_bytes` of the inputs' total size, WARC/WET files into chunks of at least
    ``crawl_min_block_mb`` of records (:func:`crawl_block_bytes`). ``max_chars``: the reader's (0: no line
    bound), whose line bound the first line after a damaged member of a compressed JSONL file is read within.
    """
    return _plan(paths, source, fields, inputs, blocksize_mb, min_block_mb, min_partitions, crawl_min_block_mb, max_chars)[0]


def plan_partitions(paths: Sequence[str | Path], *, source: str | None = None, fields: dict[str, str] | None = None,
                    inputs: Sequence[dict[str, Any]] = (), blocksize_mb: int = 128, min_block_mb: int = MIN_BLOCK_MB,
                    min_partitions: int = 16, crawl_min_block_mb: int = CRAWL_MIN_BLOCK_MB,
                    max_chars: int = 0) -> list[tuple[InputSpec, ...]]:
    """The specs of :func:`plan_inputs` grouped into partitions (:func:`group_specs`): many small files
    share a partition, so a run's cost follows its bytes, not its number of files."""
    specs, total, block = _plan(paths, source, fields, inputs, blocksize_mb, min_block_mb, min_partitions, crawl_min_block_mb,
                                max_chars)
    return group_specs(specs, small_file_sizes(specs), min(block, max(-(-total // max(min_partitions, 1)), 1)), block)


def group_specs(specs: Sequence[InputSpec], sizes: Sequence[int | None], cap: int, block: int) -> list[tuple[InputSpec, ...]]:
    """Consecutive small files (input order) in groups of at most ``cap`` bytes on disk (``sizes``) and
    ``block`` bytes to read (``nbytes``); a chunk of a file cut into several (size None) stays alone.

    ``cap`` is the block, or the inputs' total over ``min_partitions`` when that is less: a small
    corpus still gets ``min_partitions`` partitions; a file larger than the block is already cut
    into chunks of near a block each.

    >>> s = [InputSpec(Path(f"{i}.jsonl"), "jsonl", None, FieldMap(), nbytes=n) for i, n in enumerate([5, 3, 2, 9, 1, 1])]
    >>> [[x.path.stem for x in g] for g in group_specs(s, [5, 3, 2, 9, None, 1], 10, 100)]
    [['0', '1', '2'], ['3'], ['4'], ['5']]
    """
    groups: list[list[InputSpec]] = []
    size = nbytes = 0
    open_group = False  # the last group takes more small files
    for spec, weight in zip(specs, sizes, strict=True):
        if weight is not None and open_group and size + weight <= cap and nbytes + spec.nbytes <= block:
            groups[-1].append(spec)
            size, nbytes = size + weight, nbytes + spec.nbytes
        else:
            groups.append([spec])
            size, nbytes, open_group = weight or 0, spec.nbytes, weight is not None
    return [tuple(g) for g in groups]


def small_file_sizes(specs: Sequence[InputSpec]) -> list[int | None]:
    """The size on disk of each spec that is a whole file; None for the chunks of a file cut into several."""
    count = Counter(s.path for s in specs)
    return [_disk_bytes(s.path) if count[s.path] == 1 else None for s in specs]


def _plan(paths: Sequence[str | Path], source: str | None, fields: dict[str, str] | None, inputs: Sequence[dict[str, Any]],
          blocksize_mb: int, min_block_mb: int, min_partitions: int, crawl_min_block_mb: int = CRAWL_MIN_BLOCK_MB,
          max_chars: int = 0) -> tuple[list[InputSpec], int, int]:
    """The specs, the inputs' total size on disk and the block."""
    unique, passed_over, underscored, repeated = survey(paths)
    if passed_over:  # neither data nor a sidecar (README, licence, checksums): said once, when ingest runs
        log.warning("%s", note(passed_over, READS))
    if underscored:
        log.warning("%s", underscore_note(underscored))
    if repeated:
        log.info("%s", repeated_note(repeated))
    for line in input_name_warnings([f for f, _fmt in unique]) + unused_entry_warnings(inputs, [names(f, input_label(f)) for f, _ in unique]):
        log.warning("%s", line)
    total = files_bytes(unique)
    block = block_bytes(total, blocksize_mb, min_block_mb, min_partitions)
    rules = _Rules(source, dict(fields or {}), tuple(inputs), block, crawl_block_bytes(block, blocksize_mb, crawl_min_block_mb), max_chars)
    specs: list[InputSpec] = []
    for f, fmt in unique:
        label = input_label(f)
        entry_source, entry_fields = _entry_for(f, label, rules)
        specs.extend(dataclasses.replace(s, label=label) for s in _partitions(f, fmt, entry_source, entry_fields, rules))
    for column, first in rules.binary.items():
        log.warning("%s", binary_note(column, first))
    return specs, total, rules.block


def block_bytes(total_bytes: int, blocksize_mb: int = 128, min_block_mb: int = MIN_BLOCK_MB, min_partitions: int = 16) -> int:
    """The JSONL chunk size in bytes: the inputs' total (on-disk) size over ``min_partitions``,
    clamped to [``min_block_mb``, ``blocksize_mb``] MB (``blocksize_mb`` wins if they cross): a
    small corpus gets several partitions; the inputs alone decide, never the number of workers.

    >>> [block_bytes(mb << 20) >> 20 for mb in (3, 300, 1000, 10_000)]
    [16, 18, 62, 128]
    """
    return min(blocksize_mb << 20, max(min_block_mb << 20, total_bytes // max(min_partitions, 1)))


def crawl_block_bytes(block: int, blocksize_mb: int = 128, crawl_min_block_mb: int = CRAWL_MIN_BLOCK_MB) -> int:
    """The block of a WARC/WET file, bytes of decompressed records: :func:`block_bytes`' ``block``
    raised to ``crawl_min_block_mb`` (``blocksize_mb`` still wins), so that a crawl's partitions
    hold a few MB of documents once the pages' text is extracted, not a few hundred KB.

    >>> [crawl_block_bytes(mb << 20) >> 20 for mb in (16, 128)], crawl_block_bytes(16 << 20, blocksize_mb=32) >> 20
    ([128, 128], 32)
    """
    return min(blocksize_mb << 20, max(block, crawl_min_block_mb << 20))


def files_bytes(files: Sequence[tuple[Path, str]]) -> int:
    """Bytes on disk of :func:`~curation.ingest.discover.find_inputs`' files (a dataset folder: all its files)."""
    return sum(_disk_bytes(f) for f, _ in files)


def _disk_bytes(path: Path) -> int:
    if path.is_dir():
        return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())
    return path.stat().st_size


def _entry_for(path: Path, label: str, rules: _Rules) -> tuple[str | None, FieldMap]:
    """The source and fields of the first ``ingest.inputs`` entry whose ``match`` takes the file
    (:func:`~curation.ingest.input_entries.entry_index`), else the stage's."""
    i = entry_index(names(path, label), rules.inputs)
    if i is None:
        return rules.source, FieldMap.from_dict(rules.fields)
    entry = rules.inputs[i]
    return entry.get("source", rules.source), FieldMap.from_dict({**rules.fields, **entry.get("fields", {})})


def _partitions(path: Path, fmt: str, source: str | None, fields: FieldMap, rules: _Rules) -> list[InputSpec]:
    try:
        if fmt != "datasets" and path.stat().st_size == 0:  # every format alike: no bytes, no documents
            log.warning("%s is empty (0 bytes): no documents", path)
            return [InputSpec(path, fmt, source, fields, 0, 0)]
        if fmt == "parquet":
            pf = pq.ParquetFile(path)
            _check_columns(path, pf.schema_arrow, fields, rules)
            return _parquet_specs(path, pf, source, fields, rules.block) or [InputSpec(path, fmt, source, fields, 0, 0)]
        if fmt == "datasets":
            import datasets

            if peek.empty_dataset(path):  # datasets saves 0 rows as no .arrow file, and its loader fails on that
                log.warning("%s is an empty dataset (0 rows): no documents", path)
                return [InputSpec(path, fmt, source, fields, 0, 0)]
            ds = datasets.load_from_disk(str(path))
            _check_columns(path, ds.data.schema, fields, rules)
            step = 100_000
            starts = range(0, max(len(ds), 1), step)
            return [InputSpec(path, fmt, source, fields, s, min(s + step, len(ds)), nbytes=_disk_bytes(path) // len(starts)) for s in starts]
        if fmt == "html":
            return [InputSpec(path, fmt, source, fields, nbytes=path.stat().st_size)]
        if fmt == "warc":
            if (problem := peek.warc_head_problem(path)) is not None:
                raise InputError(problem)
            return [InputSpec(path, fmt, source, fields, c.start, c.end, c.first_line, nbytes=c.nbytes, cut=c.cut, docs=c.docs, one_member=c.one_member)
                    for c in warc_chunks(path, rules.crawl_block)]
        return _jsonl_partitions(path, source, fields, rules)
    except InputError:
        raise
    except (OSError, ValueError) as exc:
        fix = "it is a Git LFS pointer, not the data: fetch it (git lfs pull)" if peek.lfs_pointer(path) else "check the file's permissions and format"
        raise InputError(f"{path}: cannot be read ({' '.join(str(exc).split())}); {fix}") from exc  # one line: pyarrow's have newlines


def _parquet_specs(path: Path, pf: pq.ParquetFile, source: str | None, fields: FieldMap, block: int) -> list[InputSpec]:
    """A Parquet file's specs: a group over the block cut in row ranges (:func:`row_chunks`), and
    consecutive groups that fit in it read together up to the block (a streaming writer's file of
    10,000 one-row groups was 10,000 partitions, for every later stage too)."""
    specs: list[InputSpec] = []
    run: list[tuple[int, int]] = []  # (group, bytes) of consecutive small groups

    def flush() -> None:
        if run:
            specs.append(InputSpec(path, "parquet", source, fields, run[0][0], run[-1][0] + 1, 1, (0, -1), sum(b for _, b in run)))
            run.clear()

    for g in range(pf.num_row_groups):
        m = pf.metadata.row_group(g)
        chunks = row_chunks(m.num_rows, m.total_byte_size, block)
        if chunks == [(0, -1)]:
            if run and sum(b for _, b in run) + m.total_byte_size > block:
                flush()
            run.append((g, m.total_byte_size))
            continue
        flush()
        specs += [InputSpec(path, "parquet", source, fields, g, g + 1, 1, rows, _share(m.total_byte_size, m.num_rows, rows)) for rows in chunks]
    flush()
    return specs


def _jsonl_partitions(path: Path, source: str | None, fields: FieldMap, rules: _Rules) -> list[InputSpec]:
    chunks, size = jsonl_chunks(path, fields, rules.block, rules.max_chars)
    return [InputSpec(path, "jsonl", source, fields, s, e, n, nbytes=(e if e >= 0 else size) - s, damaged=damaged, resume=resume)
            for s, e, n, resume, damaged in chunks]


def _check_columns(path: Path, schema: pa.Schema, fields: FieldMap, rules: _Rules) -> None:
    """A Parquet file or ``datasets`` folder needs its text column or its HTML column (and a mapping
    that names a column it lacks is said, as a binary column that reaches ``meta`` is, once a run)."""
    names = schema.names
    for column in binary_columns(schema, fields):
        rules.binary.setdefault(column, path)
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:  # rows are read as dicts, where the last column of a name would silently win
        raise InputError(f"{path}: repeated column name{'s' if len(repeated) > 1 else ''} {', '.join(map(repr, repeated))} "
                         f"(columns: {names}); write the file with unique column names")
    unmapped_fields(path, list(names), fields)
    kinds = column_kinds(schema)
    check_fields(str(path), kinds, fields, jsonl=False)  # a text column of chat turns; one half of a question/answer pair
    if fields.text not in names and fields.html not in names and not (fields.chat and all(p.strip() in names for p in fields.chat.split(","))):
        raise InputError(f"{path}: no text column {fields.text!r} nor HTML column {fields.html!r} (columns: {names}); "
                         + (turns_fix(kinds, jsonl=False) or "map one with ingest.fields.text=<column> or ingest.fields.html=<column>"))


def _share(nbytes: int, num_rows: int, rows: tuple[int, int]) -> int:
    first, last = rows
    return nbytes if last < 0 else nbytes * (last - first) // max(num_rows, 1)

