"""Id-keyed removal shared by the dedup stages (identify, then remove by ``doc_id``).

A dedup stage computes a small frame of removals — ``doc_id``, ``_part`` (the input partition
the document lives in), ``drop_reason``, ``drop_detail`` — from a key frame built with
:func:`keys_with_part`. :func:`write_removals` writes it grouped by ``_part`` to an artifact
folder; :func:`mark_removed` then marks each input partition from its own file group, so the
documents never move and the output keeps the input's partitioning (deterministic whatever the
number of workers).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import dask.dataframe as dd
import pandas as pd
import pyarrow.parquet as pq

from curation.schema import DROP_DETAIL, DROP_REASON, annotated_meta, mark_kept
from pipelines.io import write_frame
from pipelines.progress import compute_with_progress

REMOVAL_META = pd.DataFrame(
    {
        "doc_id": pd.Series(dtype=object),
        "_part": pd.Series(dtype="int64"),
        DROP_REASON: pd.Series(dtype=object),
        DROP_DETAIL: pd.Series(dtype=object),
    }
)


def keys_with_part(docs: dd.DataFrame, fn: Callable[[pd.DataFrame], pd.DataFrame], meta: pd.DataFrame) -> dd.DataFrame:
    """Map ``fn`` over partitions and add ``_part`` (partition number) and ``_row`` columns.

    ``fn`` gets the partition and returns a frame with the same index/length (e.g. hashes).
    """
    meta = meta.assign(_part=pd.Series(dtype="int64"), _row=pd.Series(dtype="int64"))
    return docs.map_partitions(_keys, fn, meta=meta)


def _keys(df: pd.DataFrame, fn: Callable[[pd.DataFrame], pd.DataFrame], partition_info: dict | None = None) -> pd.DataFrame:
    out = fn(df).reset_index(drop=True)
    out["_part"] = (partition_info or {}).get("number", 0)
    out["_row"] = range(len(out))
    return out


def write_removals(removals: dd.DataFrame, folder: Path, client: Any, label: str, quiet: bool = False) -> int:
    """Compute ``removals`` and write them under ``folder/pNNNNN/`` by input partition."""
    folder.mkdir(parents=True, exist_ok=True)
    counts = compute_with_progress(
        removals.map_partitions(_write_groups, str(folder), meta=pd.Series(dtype="int64")), client, label, quiet
    )
    return int(counts.sum())


def _write_groups(df: pd.DataFrame, folder: str, partition_info: dict | None = None) -> pd.Series:
    number = (partition_info or {}).get("number", 0)
    for part, group in df.groupby("_part", sort=True):
        write_frame(group[list(REMOVAL_META.columns)].reset_index(drop=True), Path(folder) / f"p{int(part):05d}" / f"from-{number:05d}.parquet")
    return pd.Series([len(df)], dtype="int64")


def mark_removed(docs: dd.DataFrame, folder: Path, produces: dict[str, Any] | None = None) -> dd.DataFrame:
    """``docs`` with drop_reason/drop_detail set from the removals written to ``folder``."""
    meta = annotated_meta(docs._meta, produces)
    return docs.map_partitions(_mark, str(folder), meta=meta)


def _mark(df: pd.DataFrame, folder: str, partition_info: dict | None = None) -> pd.DataFrame:
    number = (partition_info or {}).get("number", 0)
    df = mark_kept(df.copy())
    files = sorted((Path(folder) / f"p{number:05d}").glob("from-*.parquet"))
    if not files:
        return df
    removed = pd.concat([pq.read_table(f).to_pandas() for f in files], ignore_index=True)
    by_id = removed.drop_duplicates("doc_id").set_index("doc_id")
    hit = df["doc_id"].isin(by_id.index).to_numpy()
    ids = df.loc[hit, "doc_id"]
    df.loc[hit, DROP_REASON] = by_id.loc[ids, DROP_REASON].to_numpy()
    df.loc[hit, DROP_DETAIL] = by_id.loc[ids, DROP_DETAIL].to_numpy()
    return df
