"""Ingest sub-steps after the crawl is read: main-content extraction and URL duplicates.

``extract_all`` fills the text of pages that came with HTML and no text (WARC responses, HTML
files, records with an ``html`` field) with ``ingest.extractor``, counts their tokens, and
ledgers pages with no main content (``extraction_empty``). It is its own cached sub-step, keyed
by the parse step and the extractor, so another extractor re-runs it without re-reading the crawl.
The same step reads the code tags of every kept page with HTML from the tree the extractor parsed
(:func:`curation.quality.page_code.page_code_tags`) into ``code_tags/``, linked as
``artifacts/code_tags/`` (:data:`CODE_TAGS_SCHEMA`): ``code_web`` recalls by them and parses only
the pages it recalls.
``mark_url_duplicates`` keeps the first document (input order) of each normalised URL among the
sources in ``ingest.url_dedup_sources`` and ledgers the others (``duplicate_url``, naming their file
and line and the kept one), through the id-keyed removal the dedup stages use.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import dask.dataframe as dd
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from classifiers.langid import identify_docs
from curation.files import link_file
from curation.ingest.extract import extract_page, too_deep_reason
from curation.ingest.mojibake import REPAIRED, repair_part
from curation.quality.code_pages import page_html
from curation.quality.html_code import CodeTagStats
from curation.quality.page_code import page_code
from curation.schema import DROP_DETAIL, DROP_REASON, DropReason, detail_json
from curation.tokens import count_tokens
from pipelines.io import write_frame
from pipelines.kit import Artifact, StageContext, link_tree
from pipelines.own_thread import on_own_thread
from pipelines.removal import REMOVAL_META, keys_with_part, mark_removed, write_removals

if TYPE_CHECKING:
    from pipelines.stages.ingest import IngestConfig

#: ``artifacts/code_tags`` parts: one row per kept page with HTML (the HTML artifact's, else ``meta.html``)
CODE_TAGS_SCHEMA = pa.schema([("doc_id", pa.string()), ("has_html", pa.bool_()), ("pre_blocks", pa.int64()),
                              ("code_elements", pa.int64()), ("highlighted", pa.int64()), ("code_chars", pa.int64())])
#: ``artifacts/code_text`` parts: the re-parsed text (code blocks fenced) of the pages ingest parsed with lxml
#: for their code tags and that hold code (:func:`curation.quality.page_code.page_code`); code_web takes it
#: for the pages it recalls instead of parsing them again
CODE_TEXT_SCHEMA = pa.schema([("doc_id", pa.string()), ("text", pa.string())])
CODE_TAGS_VERSION = 2  #: in the ``extracted`` step's key: a step cached without ``code_tags/`` or ``code_text/`` is not reused


def extract_all(parsed: Artifact, cfg: IngestConfig, ctx: StageContext, parse_key: dict[str, Any],
                skip: frozenset[int] | set[int] = frozenset()) -> Artifact:
    """The cached ``extracted`` artifact (the parsed parts, texts filled); links the HTML and code-tag
    artifacts. ``skip``: ``_ord`` of the rows not extracted (later copies of an id, ledgered after)."""
    html = Artifact(parsed.path / "html")
    if html.path.exists():
        link_tree(html.path, ctx.artifacts_dir / "html")
    numbers = list(range(len(parsed.parts())))  # parse writes one part per input partition

    def produce(out: Path) -> dict[str, int]:
        # one partition per parsed part, holding its number: each task reads its part itself
        parts = dd.from_map(_number, numbers, meta=pd.DataFrame({"number": pd.Series(dtype="int64")}), enforce_metadata=False)
        counts = ctx.map_resumable(parts, Artifact(out), _extract_numbered, parsed, html, Artifact(out), cfg.extractor, cfg.tokenizer,
                                   cfg.max_chars, skip, cfg.fix_mojibake, label=f"extract ({cfg.extractor})")
        return {"extracted_pages": int(counts["pages"].sum()), "extraction_empty": int(counts["empty"].sum()),
                "mojibake_repaired_pages": int(counts["repaired"].sum())}

    ctx.extra_stats["extractor"] = cfg.extractor
    # resumable: a stop (a preempted job, a killed run) keeps the parts already extracted, the costliest work of a crawl run
    extracted = ctx.step("extracted", {**parse_key, "extractor": cfg.extractor, "code_tags": CODE_TAGS_VERSION}, produce, resume=True)
    link_tree(extracted.path / "code_tags", ctx.artifacts_dir / "code_tags")
    link_tree(extracted.path / "code_text", ctx.artifacts_dir / "code_text")
    return extracted


def extract_frame(df: pd.DataFrame, pages: pd.DataFrame, extractor: str, tokenizer: str, max_chars: int,
                  skip: frozenset[int] | set[int] = frozenset(), fix_mojibake: bool = True) -> tuple[pd.DataFrame, int, pd.DataFrame]:
    """``df`` with the text of its pending pages (kept, no text, HTML in ``pages``, not in ``skip``)
    extracted, the number of pages extracted, and the code tags of its kept pages with HTML
    (:data:`CODE_TAGS_SCHEMA`). ``pages`` holds one row per row of ``df`` with HTML, in row order:
    a page is its row's, never another row's of the same id. With ``fix_mojibake`` the extracted texts are
    repaired (:mod:`curation.ingest.mojibake`)."""
    html = row_pages(df, pages)
    kept = _kept(df, skip)
    pending = kept & df["text"].isna() & df.get("_has_html", pd.Series(False, index=df.index)).astype(bool)
    if not pending.any():
        return df, 0, _code_tags(df, html, {}, kept)
    df = df.copy()
    df["text"] = df["text"].astype(object)
    idx = df.index[pending.to_numpy()]
    texts, tags = on_own_thread(_extract_pages, [(i, html.get(i, "")) for i in idx], extractor, max_chars)
    for i, text in zip(idx, texts, strict=True):
        if not text:
            df.at[i, DROP_REASON] = DropReason.EXTRACTION_EMPTY.value
            df.at[i, DROP_DETAIL] = detail_json(file=df.at[i, "_file"], line=int(df.at[i, "_line"]), url=df.at[i, "url"],
                                                error=too_deep_reason(html.get(i, "")) or f"{extractor} found no main content")
        elif max_chars and len(text) > max_chars:
            df.at[i, "text"] = text[:1000]
            df.at[i, DROP_REASON] = DropReason.TOO_LARGE.value
            df.at[i, DROP_DETAIL] = detail_json(file=df.at[i, "_file"], line=int(df.at[i, "_line"]), error=f"{len(text)} characters > max_chars {max_chars}")
        else:
            df.at[i, "text"] = text
    ok = [i for i, t in zip(idx, texts, strict=True) if t and not (max_chars and len(t) > max_chars)]
    if ok and fix_mojibake:
        repair_part(df, df.index.isin(ok), df.loc[df.index.isin(ok), "text"].tolist())
    if ok:
        df.loc[ok, "n_tokens"] = count_tokens(df.loc[ok, "text"].tolist(), tokenizer)
        # parse identified the languages of documents that came with text; pages get theirs from the extracted text
        langs, scores = identify_docs(df.loc[ok, "text"].tolist(), df.loc[ok, "source"].tolist())
        df.loc[ok, "lang"], df.loc[ok, "lang_score"] = list(langs), list(scores)
    return df, len(idx), _code_tags(df, html, tags, _kept(df, skip))


def _extract_pages(pages: list[tuple[Any, str]], extractor: str, max_chars: int) -> tuple[list[str], dict[Any, Any]]:
    """The text of each ``(row, page)`` and the code tags of those kept (:func:`page_code`, from the
    tree just parsed: code_web parses none but the pages it recalls). Run on a thread of its own
    (:func:`on_own_thread`): Resiliparse's trees are made and freed there, out of the Dask profiler's sight."""
    texts, tags = [], {}
    for i, page in pages:
        text, tree = extract_page(page, extractor)
        texts.append(text)
        if text and not (max_chars and len(text) > max_chars):
            tags[i] = page_code(page, tree)
        del tree
    return texts, tags


def row_pages(df: pd.DataFrame, pages: pd.DataFrame) -> dict[Any, str]:
    """Row index of ``df`` → its page HTML: ``pages`` (parse's ``html/`` part) holds one row per
    row of ``df`` with ``_has_html``, in the same order."""
    with_html = df.index[df["_has_html"].astype(bool).to_numpy()] if "_has_html" in df.columns else df.index[:0]
    if len(with_html) != len(pages):
        raise ValueError(f"{len(pages)} pages for {len(with_html)} rows with HTML: the parsed step is from another "
                         "version; delete the run's .cache/ingest folder and run again")
    return dict(zip(with_html, pages["html"].tolist(), strict=True))


def _kept(df: pd.DataFrame, skip: frozenset[int] | set[int]) -> pd.Series:
    """Rows with no drop reason that are not later copies of an id (``skip``: their ``_ord``)."""
    kept = df[DROP_REASON].isna()
    return kept & ~df["_ord"].isin(skip) if skip and "_ord" in df.columns else kept


def _code_tags(df: pd.DataFrame, html: dict[Any, str], done: dict[Any, tuple[bool, CodeTagStats, str | None]],
               kept: pd.Series) -> pd.DataFrame:
    """Code tags of the ``kept`` rows with page HTML (``html``'s, by row index, else ``meta.html``:
    what code_web re-parses), from ``done`` (row index → :func:`~curation.quality.page_code.page_code`
    of the extraction's tree) or parsed here; the rendered text, where there is one, in ``code_text``."""
    rows = []
    for i, keep, d, meta in zip(df.index, kept.to_numpy(), df["doc_id"], df["meta"], strict=True):
        if not keep:
            continue
        if i in done:
            parsed, stats, text = done[i]
        else:
            page = html.get(i) or page_html(meta)
            if not page:
                continue
            parsed, stats, text = page_code(page)
        rows.append((d, parsed, stats.pre_blocks, stats.code_elements, stats.highlighted, stats.code_chars, text))
    return pd.DataFrame(rows, columns=[*CODE_TAGS_SCHEMA.names, "code_text"])


def write_code_parts(tags: pd.DataFrame, out: Artifact, number: int) -> None:
    """A part's code tags (``code_tags/``) and the rendered texts among them (``code_text/``)."""
    write_frame(tags[CODE_TAGS_SCHEMA.names], Artifact(out.path / "code_tags").part_path(number), schema=CODE_TAGS_SCHEMA)
    texts = tags.loc[tags["code_text"].notna(), ["doc_id", "code_text"]].rename(columns={"code_text": "text"})
    write_frame(texts, Artifact(out.path / "code_text").part_path(number), schema=CODE_TEXT_SCHEMA)


def _number(number: int) -> pd.DataFrame:
    return pd.DataFrame({"number": [number]})


def _extract_numbered(number: int, _part: pd.DataFrame, *args: Any) -> pd.DataFrame:
    """:func:`_extract_part` as :meth:`~pipelines.kit.StageContext.map_resumable` calls it."""
    return _extract_part(number, *args)


def _extract_part(number: int, parsed: Artifact, html: Artifact, out: Artifact, extractor: str, tokenizer: str,
                  max_chars: int, skip: frozenset[int] | set[int] = frozenset(), fix_mojibake: bool = True) -> pd.DataFrame:
    pages = html.read_part(number)
    pages = pages if pages is not None else pd.DataFrame({"doc_id": [], "html": []})
    has_html = "_has_html" in pq.read_schema(parsed.part_path(number)).names
    head = parsed.read_part(number, columns=["doc_id", "meta", "_ord", DROP_REASON, *(["_has_html"] if has_html else [])])
    if not has_html or not (_kept(head, skip) & head["_has_html"].astype(bool)).any():
        # no kept page with HTML: extraction changes no row, so the part is the parsed one (linked, not rewritten)
        link_file(parsed.part_path(number), out.part_path(number))
        write_code_parts(_code_tags(head, row_pages(head, pages), {}, _kept(head, skip)), out, number)
        return pd.DataFrame({"pages": [0], "empty": [0], "repaired": [0]})
    df = parsed.read_part(number)
    before = int((df[DROP_REASON] == DropReason.EXTRACTION_EMPTY.value).sum())
    df, n, tags = extract_frame(df, pages, extractor, tokenizer, max_chars, skip, fix_mojibake)
    repaired = int(df[REPAIRED].notna().sum()) if REPAIRED in df.columns else 0
    out.write_part(number, df.drop(columns=[REPAIRED], errors="ignore"))
    write_code_parts(tags, out, number)
    empty = int((df[DROP_REASON] == DropReason.EXTRACTION_EMPTY.value).sum()) - before
    return pd.DataFrame({"pages": [n], "empty": [empty], "repaired": [repaired]})


def find_url_duplicates(keys: pd.DataFrame) -> pd.DataFrame:
    """Removals for every row of ``keys`` (url_normalized, _ord, doc_id, url, file, line, _part) after
    the first of its URL.

    >>> k = pd.DataFrame({"url_normalized": ["a.com/", "a.com/"], "_ord": [5, 2], "doc_id": ["x", "y"],
    ...                   "url": ["http://a.com", "https://a.com/"], "file": ["c.warc", "c.warc"], "line": [7, 2], "_part": [0, 0]})
    >>> find_url_duplicates(k)[["doc_id", "drop_reason", "drop_detail"]].values.tolist()[0][1:]
    ['duplicate_url', '{"duplicate_of": "y", "file": "c.warc", "kept_url": "https://a.com/", "line": 7, "url": "http://a.com", "url_normalized": "a.com/"}']
    """
    if keys.empty:
        return REMOVAL_META.copy()
    keys = keys.sort_values(["url_normalized", "_ord"], kind="stable")
    first = keys.groupby("url_normalized", sort=False).transform("first")
    dup = (keys["_ord"].to_numpy() != first["_ord"].to_numpy())
    d, f = keys[dup], first[dup]
    details = [detail_json(file=fi, line=int(li), duplicate_of=k, url=u, kept_url=ku, url_normalized=n)
               for fi, li, k, u, ku, n in zip(d["file"], d["line"], f["doc_id"], d["url"], f["url"], d["url_normalized"], strict=True)]
    return pd.DataFrame({"doc_id": d["doc_id"].to_numpy(), "_part": d["_part"].to_numpy().astype("int64"),
                         DROP_REASON: DropReason.DUPLICATE_URL.value, DROP_DETAIL: pd.Series(details, dtype=object).to_numpy()})


def _url_keys(df: pd.DataFrame, sources: tuple[str, ...]) -> pd.DataFrame:
    out = pd.DataFrame({"url_normalized": df["url_normalized"], "_ord": range(len(df)), "doc_id": df["doc_id"], "url": df["url"],
                        "file": df["_file"], "line": df["_line"].astype("int64")})
    scope = df[DROP_REASON].isna() & df["url_normalized"].notna() & df["source"].isin(sources)
    out.loc[~scope.to_numpy(), "url_normalized"] = None
    return out


def _scoped(keys: pd.DataFrame) -> pd.DataFrame:
    keys = keys[keys["url_normalized"].notna()].copy()
    keys["_ord"] = keys["_part"].astype("int64") * (1 << 32) + keys["_ord"].astype("int64")
    return keys


def mark_url_duplicates(docs: dd.DataFrame, cfg: IngestConfig, ctx: StageContext, key: dict[str, Any],
                        url_docs: dd.DataFrame | None = None) -> dd.DataFrame:
    """``docs`` with later copies of a normalised URL ledgered as ``duplicate_url``; the URL keys
    come from ``url_docs`` (the same partitions with the columns they need; default ``docs``)."""
    if not cfg.url_dedup_sources:
        return docs
    sources = tuple(cfg.url_dedup_sources)
    meta = pd.DataFrame({"url_normalized": pd.Series(dtype=object), "_ord": pd.Series(dtype="int64"),
                         "doc_id": pd.Series(dtype=object), "url": pd.Series(dtype=object),
                         "file": pd.Series(dtype=object), "line": pd.Series(dtype="int64")})

    def produce(out: Path) -> dict[str, int]:
        keys = keys_with_part(docs if url_docs is None else url_docs, lambda df: _url_keys(df, sources), meta)
        keys = keys.map_partitions(_scoped, meta=keys._meta)
        removals = ctx.shuffle(keys, "url_normalized", "duplicate URLs").map_partitions(find_url_duplicates, meta=REMOVAL_META)
        return {"duplicate_urls": write_removals(removals, out, ctx, "duplicate URLs")}

    # "detail": 2, rows that name their file and line (a step cached without them is not reused)
    removals = ctx.step("url_duplicates", {**key, "extractor": cfg.extractor, "sources": list(sources), "detail": 2}, produce)
    return mark_removed(docs, removals.path)
