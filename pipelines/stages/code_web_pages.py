"""What ``code_web`` reads of ingest's page artifacts: the HTML (``artifacts/html``) and code tags
(``artifacts/code_tags``) of the pages it scores, by doc_id, reading only the row groups that hold them."""

from __future__ import annotations

import bisect
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from pipelines.kit import Artifact

TAG_COLUMNS = ["pre_blocks", "code_elements", "highlighted", "code_chars"]


def load_pages(html_dir: str | Path | None, number: int, ids: list[str], column: str = "html", own_part: bool = False) -> dict[str, Any]:
    """``column`` of ``ids`` from an ingest artifact keyed by doc_id (``artifacts/html``: ``doc_id, html``).

    The part of the same number is read first (stages keep ingest's partitioning); ids not in it
    are looked up across all parts, unless ``own_part``: for an artifact that holds some pages and
    not others (``artifacts/code_text``), where a page it lacks is one to parse, not one to look
    for in every other part. Of a part, only the row groups that hold ``ids`` are read (ingest
    writes the HTML in small row groups).
    """
    frame = _load_rows(html_dir, number, ids, ["doc_id", column], own_part)
    return dict(zip(frame["doc_id"].tolist(), frame[column].tolist(), strict=True))  # lists: no per-value Arrow scalar


def load_code_tags(tags_dir: str | Path | None, number: int, ids: list[str]) -> pd.DataFrame:
    """Rows of ingest's ``artifacts/code_tags`` for ``ids`` (pages without HTML have none), indexed by doc_id."""
    return _load_rows(tags_dir, number, ids, ["doc_id", "has_html", *TAG_COLUMNS]).set_index("doc_id")


def _load_rows(folder: str | Path | None, number: int, ids: list[str], columns: list[str], own_part: bool = False) -> pd.DataFrame:
    frames: list[pd.DataFrame] = []
    if folder and ids:
        art = Artifact(Path(folder))
        wanted, found = set(ids), set()
        own = art.part_path(number)

        def paths() -> Iterator[Path]:  # the other parts are listed only when an id is not in its own
            if own.exists():
                yield own
            if not own_part:
                yield from art.parts()

        for path in paths():
            missing = wanted - found
            if not missing:
                break
            frame = read_ids(path, missing, columns)  # one open of the file (an empty one reads no rows)
            if len(frame):
                frames.append(frame)
                found.update(frame["doc_id"].tolist())
    if not frames:
        return pd.DataFrame({c: [] for c in columns})
    # an id is read from one part only (the same number first); within it the last row wins, as in a dict
    frame = frames[0] if len(frames) == 1 else pd.concat(frames, ignore_index=True)
    read = frame["doc_id"].tolist()
    return frame.drop_duplicates("doc_id", keep="last") if len(set(read)) < len(read) else frame


def read_ids(path: str | Path, ids: set[str], columns: list[str]) -> pd.DataFrame:
    """``columns`` (with ``doc_id``) of the rows of a Parquet file whose doc_id is in ``ids``, in file
    order, reading only the row groups that hold one (all of a file of one row group).

    Of a file of several row groups, the ``doc_id`` column is read only in the groups whose
    ``doc_id`` statistics (the smallest and largest id, which ingest's writer keeps in the footer)
    span one of ``ids``: ingest keeps a few pages a group, so that is about the groups that hold them,
    not the ids of the whole part. A group without statistics is read."""
    pf = pq.ParquetFile(path)
    groups = list(range(pf.num_row_groups))
    if len(groups) > 1:
        groups = spanning_groups(pf.metadata, sorted(ids))
        read = pf.read_row_groups(groups, columns=["doc_id"]) if groups else None
        doc_ids = read.column(0).to_numpy(zero_copy_only=False) if read is not None else ()
        rows = np.flatnonzero(np.isin(doc_ids, list(ids)))
        ends = np.cumsum([pf.metadata.row_group(g).num_rows for g in groups])
        groups = [groups[i] for i in np.unique(np.searchsorted(ends, rows, side="right")).tolist()]
    if not groups:
        return pf.schema_arrow.empty_table().select(columns).to_pandas()
    table = pf.read_row_groups(groups, columns=columns)
    doc_id = table.column("doc_id")
    if pa.types.is_string(doc_id.type) or pa.types.is_large_string(doc_id.type):  # the rows kept in Arrow: fewer to convert
        return table.filter(pc.is_in(doc_id, value_set=pa.array(list(ids), type=doc_id.type))).to_pandas()
    frame = table.to_pandas()
    return frame[frame["doc_id"].isin(ids).to_numpy()].reset_index(drop=True)


def spanning_groups(meta: pq.FileMetaData, ids: list[str]) -> list[int]:
    """The row groups whose ``doc_id`` statistics span one of ``ids`` (sorted), and those without
    statistics. Parquet orders strings by their UTF-8 bytes, which is the order of their code
    points, as Python compares them.

    >>> import pyarrow as pa
    >>> buf = pa.BufferOutputStream()
    >>> pq.write_table(pa.table({"doc_id": ["a", "c", "e", "f"]}), buf, row_group_size=2)
    >>> meta = pq.ParquetFile(pa.BufferReader(buf.getvalue())).metadata
    >>> spanning_groups(meta, ["b"]), spanning_groups(meta, ["d"]), spanning_groups(meta, ["a", "f"])
    ([0], [], [0, 1])
    """
    at = [meta.schema.column(i).path for i in range(meta.num_columns)].index("doc_id")
    out = []
    for g in range(meta.num_row_groups):
        stats = meta.row_group(g).column(at).statistics
        low, high = (stats.min, stats.max) if stats is not None and stats.has_min_max else (None, None)
        if not (isinstance(low, str) and isinstance(high, str)):
            out.append(g)  # nothing to rule the group out by
            continue
        i = bisect.bisect_left(ids, low)
        if i < len(ids) and ids[i] <= high:
            out.append(g)
    return out


def reparse_counts(s: pd.DataFrame, cfg: Any) -> dict[str, int]:
    """Of the pages ``cfg`` recalls in one scores part: those whose text was rebuilt from their HTML
    (``n_tokens`` counted) and those with no page HTML to rebuild it from."""
    took = ~pd.isna(cfg.recalled(s))
    return {"reparsed_pages": int((took & (s["n_tokens"].to_numpy() >= 0)).sum()),
            "recalled_without_html": int((took & ~s["has_html"].to_numpy(dtype=bool)).sum())}


def reparse_note(recalled: int, totals: dict[str, int], reparse: bool) -> str:
    """What ``reparse`` did to the recalled pages, in one line.

    >>> reparse_note(63, {"reparsed_pages": 0, "recalled_without_html": 63}, False)
    'code_web: 63 recalled pages, 0 re-parsed, 63 without page HTML: no recalled page has HTML (a text-only input), so reparse = false changes nothing here; their text is scored as it is'
    """
    without = totals.get("recalled_without_html", 0)
    line = f"code_web: {recalled:,} recalled pages, {totals.get('reparsed_pages', 0):,} re-parsed, {without:,} without page HTML"
    if recalled and without == recalled:
        line += (f": no recalled page has HTML (a text-only input), so reparse = {str(reparse).lower()} changes nothing here; "
                 "their text is scored as it is")
    return line
