"""``ingest``: raw JSONL (plain, .gz, .zst), Parquet, ``datasets.save_to_disk`` folders, WARC/WET
crawl files and plain HTML files → documents.

Sub-steps, each cached under ``.cache/ingest/``: ``parsed`` (read the inputs once; page HTML
apart, under ``parsed/html/``), ``extracted`` (main content of the pages that have HTML and no
text, with ``ingest.extractor``: changing the extractor re-runs only this step), ``url_duplicates``
(the same normalised URL twice: the first in input order is kept). The HTML is linked into
``artifacts/html/`` (``doc_id, html``) for ``code_web``; it is never a document column.

Planning happens on the client and fails before any output if a file is unreadable or has
no text field; records are parsed on the workers, one partition per file chunk (plain JSONL
split at ~``blocksize`` on line boundaries), per Parquet row group, or per dataset shard.
Token counts use the recipe's tokenizer. Duplicate input ids are found by a shuffle on
``doc_id``: the first occurrence (in input order) is kept, later ones are ledgered.
"""

from __future__ import annotations

import dataclasses
import glob
import gzip
import json
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import dask.dataframe as dd
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from classifiers.langid import annotate as annotate_language
from curation.config import StageConfig, check_choice, check_range
from curation.ingest.extract import EXTRACTORS
from curation.ingest.records import (
    HTML_COLUMN,
    LOCATION_COLUMNS,
    FieldMap,
    find_duplicate_ids,
    parse_jsonl_lines,
    rows_from_records,
)
from curation.ingest.urls import url_columns
from curation.ingest.warc import crawl_frame, iter_warc, read_html_file
from curation.schema import (
    DOC_COLUMNS,
    DROP_DETAIL,
    DROP_REASON,
    SOURCES,
    DropReason,
    annotated_meta,
    detail_json,
    empty_docs,
)
from curation.tokens import count_tokens
from pipelines.io import InputError, read_docs, write_frame
from pipelines.progress import compute_with_progress
from pipelines.stages.ingest_extract import URL_COLUMNS, extract_all, mark_url_duplicates

log = logging.getLogger(__name__)
HTML_SCHEMA = pa.schema([("doc_id", pa.string()), ("html", pa.string())])  #: artifacts/html parts (typed even when empty)

JSONL_SUFFIXES = (".jsonl", ".json", ".ndjson", ".jsonl.gz", ".json.gz", ".ndjson.gz", ".jsonl.zst", ".json.zst", ".ndjson.zst")
WARC_SUFFIXES = (".warc", ".warc.gz", ".wet", ".wet.gz", ".warc.zst", ".wet.zst")
HTML_SUFFIXES = (".html", ".htm", ".xhtml")
#: Keys of the extract step: changing them re-runs extraction and later steps, never the crawl read.
EXTRACT_KEYS = ("extractor", "url_dedup_sources")
MAGIC = {b"\x1f\x8b": "gzip", b"\x28\xb5\x2f\xfd": "zstd"}


@dataclasses.dataclass(frozen=True)
class IngestConfig(StageConfig):
    tokenizer: str = "qwen"
    blocksize_mb: int = 128
    max_chars: int = 20_000_000
    on_error: str = "ledger"
    source: str | None = None
    fields: dict[str, str] = dataclasses.field(default_factory=dict)
    inputs: tuple[dict[str, Any], ...] = ()
    extractor: str = "trafilatura"
    max_html_bytes: int = 10_000_000
    url_dedup_sources: tuple[str, ...] = ("web", "social")

    def validate(self) -> None:
        check_range(self, "blocksize_mb", 1, 4096)
        check_range(self, "max_html_bytes", 1, None)
        check_choice(self, "on_error", ("ledger", "fail"))
        check_choice(self, "extractor", tuple(EXTRACTORS))
        bad = sorted(set(self.url_dedup_sources) - set(SOURCES))
        if bad:
            raise ValueError(f"ingest.url_dedup_sources has unknown sources {bad}; choose from {list(SOURCES)}")
        FieldMap.from_dict(self.fields)
        for entry in self.inputs:
            if not isinstance(entry, dict) or "match" not in entry:
                raise ValueError(f"ingest.inputs entries need a 'match' glob: {entry!r}")


@dataclasses.dataclass(frozen=True)
class InputSpec:
    """One partition to read: a file (or a chunk of it, or a dataset shard)."""

    path: Path
    fmt: str  # jsonl | parquet | datasets | warc | html
    source: str | None
    fields: FieldMap
    start: int = 0  # byte offset (jsonl), row group (parquet) or first row (datasets)
    end: int = -1
    first_line: int = 1


class IngestStage:
    name = "ingest"
    version = "4"  # 3: lang / lang_score; 4: crawl input, extraction, URL columns
    config_cls = IngestConfig
    requires: tuple[str, ...] = ()
    produces: dict[str, Any] = {}
    reads_raw = True

    def plan_inputs(self, paths: list[Any], cfg: IngestConfig) -> list[InputSpec]:
        return plan_inputs([Path(p) for p in paths], cfg)

    def build(self, specs: list[InputSpec], cfg: IngestConfig, ctx: Any) -> dd.DataFrame:
        params = {k: v for k, v in cfg.to_dict().items() if k not in EXTRACT_KEYS}
        parsed_dir = ctx.cached("parsed", {"cfg": params, "version": self.version}, lambda out: _parse_all(specs, cfg, out, ctx))
        parsed_dir = extract_all(parsed_dir, cfg, ctx, {"cfg": params, "version": self.version})
        ids = read_docs(parsed_dir, columns=["doc_id", "_ord", "_file", "_line", DROP_REASON])
        ids = ids[ids[DROP_REASON].isna()][["doc_id", "_ord", "_file", "_line"]]
        dups = compute_with_progress(
            ids.shuffle(on="doc_id").map_partitions(find_duplicate_ids, meta=find_duplicate_ids(ids._meta)),
            ctx.client, "ingest: duplicate ids", ctx.quiet,
        )
        dup_map = {int(o): (f, int(n)) for o, f, n in dups[["_ord", "first_file", "first_line"]].itertuples(index=False)}
        if dup_map and cfg.on_error == "fail":
            raise InputError(f"{len(dup_map)} duplicate ids in the input; fix the ids or set ingest.on_error=ledger")
        docs = read_docs(parsed_dir).map_partitions(_finish, dup_map, meta=annotated_meta(empty_docs(URL_COLUMNS)))
        return mark_url_duplicates(docs, cfg, ctx, {"cfg": params, "version": self.version})


def plan_inputs(paths: list[Path], cfg: IngestConfig) -> list[InputSpec]:
    """Expand files, folders and globs into partition specs; fail early on unusable input."""
    files: list[tuple[Path, str]] = []
    rooted = [(q, root) for p in paths for q, root in (_read_list(p) if str(p).startswith("@") else [(p, None)])]
    paths = [q for q, _ in rooted]
    for p, root in rooted:
        matches = [Path(m) for m in sorted(glob.glob(str(p), recursive=True))] if any(c in str(p) for c in "*?[") else [p]
        if not matches:
            raise InputError(f"{p}: no file matches this pattern")
        for m in matches:
            found = _discover(m)
            if root is not None:  # files found inside a listed folder stay under the list's root too
                for f, _fmt in found:
                    if not f.resolve().is_relative_to(root):
                        raise InputError(f"{f} resolves to {f.resolve()}, outside the input list's root {root}; "
                                         "list only paths (and links) that stay inside it")
            files.extend(found)
    if not files:
        raise InputError(f"no input files found in {[str(p) for p in paths]}")
    seen: set[Path] = set()
    specs: list[InputSpec] = []
    for f, fmt in files:
        real = f.resolve()
        if real in seen:
            continue
        seen.add(real)
        source, fields = _entry_for(f, cfg)
        specs.extend(_partitions(f, fmt, source, fields, cfg))
    return specs


def _read_list(arg: Path) -> list[tuple[Path, Path]]:
    """``@inputs.txt``: one path a line, relative to the list's folder, never outside it (symlinks
    resolved); each entry comes with that root, which files found inside listed folders must keep."""
    listing = Path(str(arg)[1:])
    if not listing.is_file():
        raise InputError(f"input list {listing} does not exist")
    root = listing.parent.resolve()
    out = []
    for n, line in enumerate(listing.read_text().splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        target = (root / line).resolve()
        if not target.is_relative_to(root):
            raise InputError(f"{listing} line {n}: {line!r} is outside the input root {root}; list only paths inside it")
        out.append((target, root))
    return out


def _discover(path: Path) -> list[tuple[Path, str]]:
    try:
        path.stat()
    except OSError as exc:
        if exc.errno == 40:  # ELOOP
            raise InputError(f"{path}: symlink loop; point the link at a real file or folder") from exc
        raise InputError(f"{path} does not exist{' (a dangling symlink)' if path.is_symlink() else ''}") from exc
    if path.is_dir():
        if (path / "dataset_info.json").exists() or (path / "state.json").exists():
            return [(path, "datasets")]
        out: list[tuple[Path, str]] = []
        for child in sorted(path.rglob("*"), key=str):
            if child.is_file() and child.name != "README.md" and _format(child):
                out.append((child, _format(child)))  # type: ignore[arg-type]
        return out
    fmt = _format(path)
    if fmt is None:
        raise InputError(f"{path}: unknown format; use .jsonl/.json[.gz|.zst], .parquet, .warc/.wet[.gz], .html or a datasets folder")
    return [(path, fmt)]


def _format(path: Path) -> str | None:
    name = path.name.lower()
    if name.endswith(".parquet"):
        return "parquet"
    if name.endswith(JSONL_SUFFIXES):
        return "jsonl"
    if name.endswith(WARC_SUFFIXES):
        return "warc"
    if name.endswith(HTML_SUFFIXES):
        return "html"
    return None


def _entry_for(path: Path, cfg: IngestConfig) -> tuple[str | None, FieldMap]:
    from fnmatch import fnmatch

    for entry in cfg.inputs:
        if fnmatch(path.as_posix(), entry["match"]) or fnmatch(path.name, entry["match"]):
            return entry.get("source", cfg.source), FieldMap.from_dict({**cfg.fields, **entry.get("fields", {})})
    return cfg.source, FieldMap.from_dict(cfg.fields)


def _partitions(path: Path, fmt: str, source: str | None, fields: FieldMap, cfg: IngestConfig) -> list[InputSpec]:
    try:
        if fmt == "parquet":
            pf = pq.ParquetFile(path)
            names = pf.schema_arrow.names
            if fields.text not in names and fields.html not in names:
                raise InputError(f"{path}: no text column {fields.text!r} nor HTML column {fields.html!r} (columns: {names}); map one with ingest.fields.text=<column> or ingest.fields.html=<column>")
            return [InputSpec(path, fmt, source, fields, g, g + 1) for g in range(pf.num_row_groups)] or [InputSpec(path, fmt, source, fields, 0, 0)]
        if fmt == "datasets":
            import datasets

            ds = datasets.load_from_disk(str(path))
            if fields.text not in ds.column_names:
                raise InputError(f"{path}: no text column {fields.text!r} (columns: {ds.column_names})")
            step = 100_000
            return [InputSpec(path, fmt, source, fields, s, min(s + step, len(ds))) for s in range(0, max(len(ds), 1), step)]
        if fmt in ("warc", "html"):
            _check_crawl_file(path, fmt)
            return [InputSpec(path, fmt, source, fields)]  # one partition per crawl file (Common Crawl: ~1 GB each)
        return _jsonl_partitions(path, source, fields, cfg)
    except InputError:
        raise
    except (OSError, ValueError) as exc:
        raise InputError(f"{path}: cannot be read ({exc}); check the file's permissions and format") from exc


def _jsonl_partitions(path: Path, source: str | None, fields: FieldMap, cfg: IngestConfig) -> list[InputSpec]:
    with open(path, "rb") as fh:
        head = fh.read(4)
    comp = next((c for m, c in MAGIC.items() if head.startswith(m)), None)
    if path.name.endswith((".gz", ".zst")) and comp is None and head:
        raise InputError(f"{path}: the name says compressed but the content is not gzip or zstd")
    first = _first_record(path)
    if first is not None and fields.text not in first and fields.html not in first:
        raise InputError(f"{path}: the first record has no {fields.text!r} field (fields: {sorted(first)[:20]}); map it with ingest.fields.text=<field> (or ingest.fields.html=<field> for pages)")
    size = path.stat().st_size
    block = cfg.blocksize_mb << 20
    if comp is not None or size <= block:
        return [InputSpec(path, "jsonl", source, fields, 0, -1, 1)]
    specs, start, line = [], 0, 1
    with open(path, "rb") as fh:
        while start < size:
            fh.seek(min(start + block, size))
            fh.readline()
            end = min(fh.tell(), size)
            specs.append(InputSpec(path, "jsonl", source, fields, start, end, line))
            fh.seek(start)
            line += fh.read(end - start).count(b"\n")
            start = end
    return specs


def _check_crawl_file(path: Path, fmt: str) -> None:
    with open(path, "rb") as fh:
        head = fh.read(8)
    if fmt == "warc" and head and not (head.startswith(b"WARC/") or any(head.startswith(m) for m in MAGIC)):
        raise InputError(f"{path}: not a WARC file (it starts with {head!r}, not 'WARC/' or a gzip/zstd header)")


def _first_record(path: Path) -> dict[str, Any] | None:
    try:
        with _open(path) as fh:
            for _ in range(100):
                raw = fh.readline()
                if not raw:
                    return None
                try:
                    obj = json.loads(raw)
                except ValueError:
                    continue
                if isinstance(obj, dict):
                    return obj
    except (EOFError, OSError) as exc:
        raise InputError(f"{path}: cannot be read ({exc})") from exc
    return None


def _open(path: Path) -> Any:
    with open(path, "rb") as fh:
        head = fh.read(4)
    if head.startswith(b"\x1f\x8b"):
        return gzip.open(path, "rb")
    if head.startswith(b"\x28\xb5\x2f\xfd"):
        import io as _io

        import zstandard

        return _io.BufferedReader(zstandard.ZstdDecompressor().stream_reader(open(path, "rb"), closefd=True))
    return open(path, "rb")


def read_spec(spec: InputSpec, max_chars: int) -> pd.DataFrame:
    """Parse one partition spec into schema rows (with drop reasons)."""
    label = str(spec.path)
    if spec.fmt in ("warc", "html"):
        records = iter_warc(spec.path, max_chars) if spec.fmt == "warc" else read_html_file(spec.path, max_chars)
        return crawl_frame(records, spec.source)
    if spec.fmt == "parquet":
        table = pq.ParquetFile(spec.path).read_row_group(spec.start) if spec.end > spec.start else None
        records = table.to_pylist() if table is not None else []
        return rows_from_records(records, None, label, list(range(1, len(records) + 1)), spec.fields, spec.source, max_chars)
    if spec.fmt == "datasets":
        import datasets

        ds = datasets.load_from_disk(str(spec.path)).select(range(spec.start, spec.end))
        records = ds.to_list()
        lines = list(range(spec.start + 1, spec.start + len(records) + 1))
        return rows_from_records(records, None, label, lines, spec.fields, spec.source, max_chars)
    lines = _Lines(spec)
    df = parse_jsonl_lines(lines, label, spec.first_line, spec.fields, spec.source, max_chars)
    if lines.error is None:
        return df
    truncated_line = spec.first_line + lines.count
    bad = rows_from_records([None], [(DropReason.TRUNCATED_INPUT.value, f"{lines.error}; re-create the file")], label, [truncated_line], spec.fields, spec.source)
    return pd.concat([df, bad], ignore_index=True)


class _Lines:
    """The lines of a JSONL partition (without newlines), streamed: the partition's bytes are never
    held whole (a 128 MB block read at once and split took ~2.5x its size before parsing began).

    A compressed stream that ends early sets ``error``; the partial last record is not yielded, so
    a truncated file loses at most one 64 KiB read besides it. ``count`` is the lines yielded.
    """

    def __init__(self, spec: InputSpec) -> None:
        self.spec, self.error, self.count = spec, None, 0

    def __iter__(self) -> Iterator[bytes]:
        spec = self.spec
        with _open(spec.path) as fh:
            if spec.end >= 0:
                fh.seek(spec.start)
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


def _parse_all(specs: list[InputSpec], cfg: IngestConfig, out: Path, ctx: Any) -> None:
    meta = annotated_meta(empty_docs({"_file": object, "_line": "int64", "_ord": "int64", HTML_COLUMN: object}))
    frames = dd.from_map(_parse_partition, specs, list(range(len(specs))), cfg=cfg, meta=meta, enforce_metadata=False)
    compute_with_progress(frames.map_partitions(_write_parsed, str(out), meta=pd.Series(dtype="int64")), ctx.client, "ingest: parse", ctx.quiet)


def _parse_partition(spec: InputSpec, number: int, cfg: IngestConfig) -> pd.DataFrame:
    df = read_spec(spec, cfg.max_html_bytes if spec.fmt in ("warc", "html") else cfg.max_chars)
    bad = df[DROP_REASON].notna()
    if cfg.on_error == "fail" and bad.any():
        row = df[bad].iloc[0]
        raise InputError(f"{row['_file']} line {row['_line']}: {row[DROP_REASON]} ({json.loads(row[DROP_DETAIL])['error']}); fix the input or set ingest.on_error=ledger")
    ok = ~bad.to_numpy() & df["text"].notna().to_numpy()  # pages without text yet are counted after extraction
    texts = df.loc[ok, "text"].tolist()
    if texts:
        df.loc[ok, "n_tokens"] = count_tokens(texts, cfg.tokenizer)
    annotate_language(df, ok)  # lang / lang_score (classifiers/langid.py); ``und`` for ledgered rows
    df["_ord"] = (number << 32) + pd.Series(range(len(df)), dtype="int64").to_numpy()
    return df


def _write_parsed(df: pd.DataFrame, out: str, partition_info: dict | None = None) -> pd.Series:
    number = (partition_info or {}).get("number", 0)
    df = df.reset_index(drop=True)
    pages = df[df[HTML_COLUMN].notna()][["doc_id", HTML_COLUMN]].rename(columns={HTML_COLUMN: "html"})
    write_frame(pages.reset_index(drop=True), Path(out) / "html" / f"part-{number:05d}.parquet", schema=HTML_SCHEMA)
    write_frame(df.assign(_has_html=df[HTML_COLUMN].notna()).drop(columns=[HTML_COLUMN]), Path(out) / f"part-{number:05d}.parquet")
    return pd.Series([len(df)], dtype="int64")


def _finish(df: pd.DataFrame, dup_map: dict[int, tuple[str, int]]) -> pd.DataFrame:
    df = df.copy()
    if dup_map:
        for i, o in enumerate(df["_ord"].tolist()):
            if o in dup_map and not isinstance(df[DROP_REASON].iat[i], str):
                f, n = dup_map[o]
                df.iat[i, df.columns.get_loc(DROP_REASON)] = DropReason.DUPLICATE_ID.value
                original = df["doc_id"].iat[i]
                df.iat[i, df.columns.get_loc(DROP_DETAIL)] = detail_json(
                    file=df["_file"].iat[i], line=int(df["_line"].iat[i]), error="duplicate id", first_file=f, first_line=n,
                    original_id=original,
                )
                # the ledger row needs an id of its own: ids stay unique across kept ∪ ledger
                df.iat[i, df.columns.get_loc("doc_id")] = f"{original}@{Path(df['_file'].iat[i]).name}:{int(df['_line'].iat[i])}"
    df = df.drop(columns=[*LOCATION_COLUMNS, "_ord", "_has_html"], errors="ignore")
    df = pd.concat([df, url_columns(df["url"])], axis=1)
    return df[[*DOC_COLUMNS, *URL_COLUMNS, DROP_REASON, DROP_DETAIL]]


STAGE = IngestStage()
