"""What ``code_web`` reads of ingest's page artifacts: the HTML (``artifacts/html``) and code tags
(``artifacts/code_tags``) of the pages it scores, by doc_id, reading only the row groups that hold them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
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
        for path in ([own] if own.exists() else []) + ([] if own_part else art.parts()):
            missing = wanted - found
            if not missing:
                break
            frame = read_ids(path, missing, columns)  # one open of the file (an empty one reads no rows)
            if len(frame):
                frames.append(frame)
                found.update(frame["doc_id"])
    if not frames:
        return pd.DataFrame({c: [] for c in columns})
    # an id is read from one part only (the same number first); within it the last row wins, as in a dict
    return pd.concat(frames, ignore_index=True).drop_duplicates("doc_id", keep="last")


def read_ids(path: str | Path, ids: set[str], columns: list[str]) -> pd.DataFrame:
    """``columns`` (with ``doc_id``) of the rows of a Parquet file whose doc_id is in ``ids``, in file
    order, reading only the row groups that hold one (all of a file of one row group)."""
    pf = pq.ParquetFile(path)
    groups = list(range(pf.num_row_groups))
    if len(groups) > 1:
        doc_ids = pf.read(columns=["doc_id"]).column(0).to_numpy(zero_copy_only=False)
        rows = np.flatnonzero(np.isin(doc_ids, list(ids)))
        ends = np.cumsum([pf.metadata.row_group(g).num_rows for g in groups])
        groups = np.unique(np.searchsorted(ends, rows, side="right")).tolist()
    if not groups:
        return pf.schema_arrow.empty_table().select(columns).to_pandas()
    frame = pf.read_row_groups(groups, columns=columns).to_pandas()
    return frame[frame["doc_id"].isin(ids).to_numpy()].reset_index(drop=True)
