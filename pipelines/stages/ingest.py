"""``ingest``: raw JSONL (plain, .gz, .zst), Parquet, ``datasets.save_to_disk`` folders, WARC/WET
crawl files and plain HTML files → documents.

Sub-steps, each cached under ``.cache/ingest/``:

1. ``parsed``: read the inputs once (:mod:`curation.ingest.inputs` cuts files into chunks sized from
   the inputs alone (JSONL, plain or compressed, on line boundaries; WARC/WET on record boundaries;
   Parquet row groups; dataset shards), groups small files into partitions of the same size, and
   fails before any output on unusable input; :mod:`curation.ingest.readers` reads them on the workers); token counts with
   ``ingest.tokenizer``, languages identified; page HTML apart, under ``parsed/html/``.
2. ``extracted``: main content of the pages that have HTML and no text, with ``ingest.extractor``
   (changing the extractor re-runs only this step; :mod:`pipelines.stages.ingest_extract`); a part
   with no kept page HTML is the parsed part, hard-linked.
3. duplicate ids: a shuffle on ``doc_id`` of the parsed rows, before extraction (a later copy is
   not extracted); the first occurrence (input order) keeps the id, later ones are ledger rows of
   their own id (``duplicate_id``, or the reason they already have).
4. ``url_duplicates``: the same normalised URL twice; the first in input order is kept.

The HTML is linked into ``artifacts/html/`` (``doc_id, html``, in row groups of at most
``HTML_GROUP_CHARS`` characters, so that ``code_web`` reads only the pages it recalls); it is never
a document column.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from pathlib import Path
from typing import Any

import dask.dataframe as dd
import pandas as pd
import pyarrow as pa

from classifiers.langid import annotate as annotate_language
from curation.config import StageConfig, check_choice, check_range
from curation.errors import nearest
from curation.ingest import chat, jsonl_decode, record_meta, source_field
from curation.ingest.duplicate_ids import find_duplicate_ids, finish_docs
from curation.ingest.extract import EXTRACTORS
from curation.ingest.inputs import CRAWL_MIN_BLOCK_MB, MIN_BLOCK_MB, InputError, InputSpec, find_inputs, plan_partitions
from curation.ingest.language_field import MOVED, MOVED_META, moved_counts, moved_figures
from curation.ingest.mojibake import FIGURES as MOJIBAKE
from curation.ingest.mojibake import REPAIRED, repair_part
from curation.ingest.readers import read_group
from curation.ingest.records import HTML_COLUMN, LOCATION_COLUMNS, FieldMap
from curation.ingest.urls import URL_COLUMNS
from curation.schema import DROP_DETAIL, DROP_REASON, SOURCES, annotated_meta, empty_docs
from curation.tokens import count_tokens
from pipelines.io import read_docs, write_frame
from pipelines.kit import Artifact, StageContext
from pipelines.stages.ingest_extract import extract_all, mark_url_duplicates

HTML_SCHEMA = pa.schema([("doc_id", pa.string()), ("html", pa.string())])  #: artifacts/html parts (typed even when empty)
#: artifacts/html row groups hold up to this many characters of HTML (a longer page has its own), so
#: that code_web reads the few pages it recalls, not whole parts (:func:`pipelines.stages.code_web_pages.load_pages`)
HTML_GROUP_CHARS = 1 << 18
#: Columns of the extracted parts that ``finish_docs`` and the URL keys read (:func:`mark_url_duplicates`).
URL_KEY_READS = ("doc_id", "source", "url", DROP_REASON, DROP_DETAIL, "_ord", "_file", "_line")
#: In the parse key: 2 = ``parsed/html`` rows paired with the ``_has_html`` rows by position (1: found by id)
PAGES_LAYOUT = 2
#: Keys of the extract step: changing them re-runs extraction and later steps, never the crawl read.
EXTRACT_KEYS = ("extractor", "url_dedup_sources")


@dataclasses.dataclass(frozen=True)
class IngestConfig(StageConfig):
    tokenizer: str = "qwen"
    blocksize_mb: int = 128
    min_block_mb: int = MIN_BLOCK_MB
    min_partitions: int = 16
    crawl_min_block_mb: int = CRAWL_MIN_BLOCK_MB
    max_chars: int = 20_000_000
    on_error: str = "ledger"
    source: str | None = None
    fields: dict[str, str] = dataclasses.field(default_factory=dict)
    inputs: tuple[dict[str, Any], ...] = ()
    extractor: str = "resiliparse_routed"
    max_html_bytes: int = 10_000_000
    max_meta_chars: int = 1_000_000
    url_dedup_sources: tuple[str, ...] = ("web", "social")
    fix_mojibake: bool = True

    def validate(self) -> None:
        check_range(self, "blocksize_mb", 1, 4096)
        check_range(self, "min_block_mb", 1, 4096)
        check_range(self, "min_partitions", 1, None)
        check_range(self, "crawl_min_block_mb", 1, 4096)
        check_range(self, "max_html_bytes", 1, None)
        check_range(self, "max_chars", 1, None)
        check_range(self, "max_meta_chars", 1, None)
        check_choice(self, "on_error", ("ledger", "fail"))
        check_choice(self, "extractor", tuple(EXTRACTORS))
        bad = sorted(set(self.url_dedup_sources) - set(SOURCES))
        if bad:
            raise ValueError(f"ingest.url_dedup_sources has unknown sources {bad}; choose from {list(SOURCES)}")
        FieldMap.from_dict(self.fields)
        if self.source is not None and self.source not in SOURCES:
            raise ValueError(f"ingest.source (--source) {self.source!r} is not a source; choose from {', '.join(SOURCES)}")
        for i, entry in enumerate(self.inputs):
            if not isinstance(entry, dict) or not isinstance(entry.get("match"), str):
                raise ValueError(f"ingest.inputs[{i}] = {str(entry)[:80]!r}: an entry is a mapping with a 'match' glob "
                                 "(a string), and source and/or fields, e.g. {match: '*.parquet', source: code}")
            unknown = sorted(set(entry) - {"match", "source", "fields"})
            if unknown:
                near = nearest(unknown[0], ["match", "source", "fields"])
                raise ValueError(f"ingest.inputs entry {entry['match']!r} has unknown key {unknown[0]!r}"
                                 f"{f' (did you mean {near!r}?)' if near else ''}; an entry has match, source and fields")
            FieldMap.from_dict(entry.get("fields"), f"ingest.inputs entry {entry['match']!r}: fields")
            if entry.get("source") is not None and entry["source"] not in SOURCES:
                raise ValueError(f"ingest.inputs entry {entry['match']!r}: source {entry['source']!r} is not a source; "
                                 f"choose from {', '.join(SOURCES)}")


class IngestStage:
    name = "ingest"
    version = "12"  # 3: lang / lang_score; 4: crawl input, extraction, URL columns; 5: damaged members dropped whole, meta kept, float ids;
    # 6: reading resumes after a damaged member or a lying record, element cap, long pages routed, BOM on any line;
    # 7: invisible-only text is empty_text, binary meta values by size, non-UTF-8 binary ids in hex, `_*` data files passed over;
    # 8: Han rule leaves Korean and confident English, bare pages, one-member offsets, zeros between members, reopen bound,
    # a natural-language `language` field (zh, cmn_Hani) of a non-code document kept in meta, not in the column;
    # 9: a source field naming no source (a dataset's name) gives way to its input's source and is kept in meta; mojibake repaired;
    # a JSONL line over 12 x max_chars bytes too_large unparsed, GB18030/Windows-1252 files refused, integers of any length kept;
    # 10: meta over max_meta_chars leaves its largest fields out and names them (meta_left_out)
    #     the first line after a damaged member is read within the 12 x max_chars line bound too (over it: too_large, unparsed)
    #     a record with no `id` (fields.id left at its default) takes its `doc_id` as its id, not in meta
    # 11: a WARC response record whose block opens with an HTTP status line is read as HTTP without `application/http`;
    #     a damaged gzip member of several WARC records is a truncated_input row per record (those decoded before the damage too);
    #     a page labelled iso-8859-1 whose bytes are another script's (windows-1251, GBK) is read in the charset detected
    # 12: ingest.fields.chat renders chat turns (or a question and its answer) to the text; a record without text whose
    #     fields hold chat turns or a question/answer pair says so in its missing_text detail (wrong_type: its text field)
    #     a conversation with no content or a question with an empty answer is empty_text, a turn whose role is not a string
    #     wrong_type, a null chat field missing_text naming it
    #     WARC HTTP header lines that end in a bare LF are read (not an empty page); HTTP header lines over the bound are one
    #     too_large row, the file read on; a damaged member's row says "at least N" records unless they walk to its end
    config_cls = IngestConfig
    requires: tuple[str, ...] = ()
    produces: dict[str, Any] = {}
    reads_raw = True

    def input_files(self, paths: list[Any], cfg: IngestConfig) -> list[Path]:
        """The files ``plan_inputs`` would read (what the runner fingerprints), found without reading them
        (a name that is not UTF-8 is refused there, before any output)."""
        return [f for f, _fmt in find_inputs([str(p) for p in paths])]  # str: a glob's trailing '/' kept

    def plan_inputs(self, paths: list[Any], cfg: IngestConfig) -> list[tuple[InputSpec, ...]]:
        return plan_partitions([str(p) for p in paths], source=cfg.source, fields=cfg.fields, inputs=cfg.inputs,
                               blocksize_mb=cfg.blocksize_mb, min_block_mb=cfg.min_block_mb, min_partitions=cfg.min_partitions,
                               crawl_min_block_mb=cfg.crawl_min_block_mb, max_chars=cfg.max_chars)

    def build(self, specs: list[tuple[InputSpec, ...]], cfg: IngestConfig, ctx: StageContext) -> dd.DataFrame:
        key = {"cfg": {k: v for k, v in cfg.flat_dict().items() if k not in EXTRACT_KEYS}, "version": self.version,
               # rows name their file by its label (ids of id-less records hash it): runs that name a file
               # otherwise (another working folder) do not share these steps in one --cache-dir
               "files": hashlib.sha256("\n".join(sorted({s.name for g in specs for s in g})).encode()).hexdigest()[:16],
               "pages": PAGES_LAYOUT}
        parsed = ctx.step("parsed", key, lambda out: _parse_all(specs, cfg, Artifact(out), ctx))
        dup_map = _duplicate_ids(parsed, ctx)
        if dup_map and cfg.on_error == "fail":
            raise InputError(f"{len(dup_map)} duplicate ids in the input; fix the ids or set ingest.on_error=ledger")
        extracted = extract_all(parsed, cfg, ctx, key, set(dup_map))
        meta = annotated_meta(empty_docs(URL_COLUMNS))
        docs = read_docs(extracted.path).map_partitions(finish_docs, dup_map, meta=meta)
        # the URL keys are read from these columns alone, without the texts
        # with each row's file and line, which a duplicate_url row names
        url_meta = meta[[c for c in meta.columns if c in URL_KEY_READS or c in URL_COLUMNS]].assign(
            _file=pd.Series(dtype=object), _line=pd.Series(dtype="int64"))
        url_docs = read_docs(extracted.path, columns=list(URL_KEY_READS)).map_partitions(
            finish_docs, dup_map, LOCATION_COLUMNS, meta=url_meta)
        return mark_url_duplicates(docs, cfg, ctx, key, url_docs)


def _parse_all(groups: list[tuple[InputSpec, ...]], cfg: IngestConfig, out: Artifact, ctx: StageContext) -> dict[str, Any] | None:
    """Parse every partition; the figures of the ``language`` and ``source`` fields kept in meta, of meta fields left
    out and of repeated keys (``stats.json`` ``extra``)."""
    tasks = dd.from_map(_parse_part, groups, list(range(len(groups))), args=(cfg, out), meta=MOVED_META, enforce_metadata=False)
    # the largest partitions first: a file's last, shorter chunk then fills a tail (benchmarks/recipe)
    counts = ctx.compute(tasks, "parse", costs=[sum(s.nbytes for s in g) for g in groups])
    figures = {**(moved_figures(counts) or {}), **(moved_figures(counts, column=source_field.MOVED, key=source_field.FIGURES) or {}),
               **(moved_figures(counts, column=REPAIRED, key=MOJIBAKE) or {}),
               **(moved_figures(counts, column=jsonl_decode.REPEATED, key=jsonl_decode.FIGURES) or {}),
               **(moved_figures(counts, column=chat.CHAT_JSON, key=chat.FIGURES) or {})}
    if left_out := moved_figures(counts, column=record_meta.LEFT_OUT, key=record_meta.FIGURES):
        figures[record_meta.FIGURES] = {**left_out[record_meta.FIGURES], "max_meta_chars": cfg.max_meta_chars}
    return figures or None


def _parse_part(group: tuple[InputSpec, ...], number: int, cfg: IngestConfig, out: Artifact) -> pd.DataFrame:
    """Parse partition ``number`` (one file chunk, or several small files); write its rows and, apart, its page HTML.
    Returns its rows whose ``language`` or ``source`` field went to meta, whose text was repaired, whose meta left
    fields out or whose line repeated a key, per file and value."""
    df = read_group(group, cfg.max_chars, cfg.max_html_bytes, cfg.max_meta_chars)
    bad = df[DROP_REASON].notna()
    if cfg.on_error == "fail" and bad.any():
        row = df[bad].iloc[0]
        raise InputError(f"{row['_file']} line {row['_line']}: {row[DROP_REASON]} ({json.loads(row[DROP_DETAIL])['error']}); fix the input or set ingest.on_error=ledger")
    ok = ~bad.to_numpy() & df["text"].notna().to_numpy()  # pages without text yet are counted after extraction
    texts = df.loc[ok, "text"].tolist()
    if cfg.fix_mojibake and texts:
        texts = repair_part(df, ok, texts)
    if texts:
        df.loc[ok, "n_tokens"] = count_tokens(texts, cfg.tokenizer)
    annotate_language(df, ok, texts)  # lang / lang_score (classifiers/langid.py); ``und`` for ledgered rows
    df["_ord"] = (number << 32) + pd.Series(range(len(df)), dtype="int64").to_numpy()
    df = df.reset_index(drop=True)
    # one page per row with HTML, in row order (extraction pairs them by position, never by id); a later
    # copy of an id in the part is never kept (the first occurrence keeps the id): its page is not stored
    has_html = df[HTML_COLUMN].notna().to_numpy() & ~df["doc_id"].duplicated(keep="first").to_numpy()
    pages = pd.DataFrame({"doc_id": df.loc[has_html, "doc_id"].to_numpy(), "html": df.loc[has_html, HTML_COLUMN].to_numpy()})
    write_frame(pages, Artifact(out.path / "html").part_path(number), schema=HTML_SCHEMA,
                groups=html_groups(pages["html"].str.len().to_numpy(), HTML_GROUP_CHARS))
    notes = [MOVED, source_field.MOVED, REPAIRED, record_meta.LEFT_OUT, jsonl_decode.REPEATED, chat.CHAT_JSON]  # private columns, counted
    out.write_part(number, df.assign(_has_html=has_html).drop(columns=[HTML_COLUMN, *notes], errors="ignore"))
    return pd.concat([moved_counts(df, column) for column in notes], ignore_index=True)


def html_groups(sizes: Any, budget: int) -> list[int]:
    """Row offsets ``[0, …, len(sizes)]`` of consecutive groups of at most ``budget`` in all (a row
    over it alone).

    >>> html_groups([100, 100, 300, 50, 50, 50], 200)
    [0, 2, 3, 6]
    >>> html_groups([], 200)
    [0]
    """
    bounds, total = [0], 0
    for i, n in enumerate(sizes):
        if total and total + int(n) > budget:
            bounds.append(i)
            total = 0
        total += int(n)
    if len(sizes):
        bounds.append(len(sizes))
    return bounds


def _duplicate_ids(parsed: Artifact, ctx: StageContext) -> dict[int, tuple[str, int]]:
    """``_ord`` of every later copy of an id, ledgered or not (its row takes an id of its own) →
    (file, line) of its first occurrence."""
    ids = read_docs(parsed.path, columns=["doc_id", "_ord", "_file", "_line"])
    dups = ctx.compute(ctx.shuffle(ids, "doc_id", "duplicate ids").map_partitions(find_duplicate_ids, meta=find_duplicate_ids(ids._meta)), "duplicate ids")
    return {int(o): (f, int(n)) for o, f, n in dups[["_ord", "first_file", "first_line"]].itertuples(index=False)}


STAGE = IngestStage()
