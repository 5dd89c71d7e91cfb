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

from curation.schema import DROP_DETAIL, DROP_REASON, annotated_meta, mark_kept
from pipelines.kit import Artifact, StageContext

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
    return StageContext.map_parts(docs, _keys, fn, meta=meta)


def _keys(number: int, df: pd.DataFrame, fn: Callable[[pd.DataFrame], pd.DataFrame]) -> pd.DataFrame:
    out = fn(df).reset_index(drop=True)
    out["_part"] = number
    out["_row"] = range(len(out))
    return out


def write_removals(removals: dd.DataFrame, folder: Path, ctx: StageContext, label: str) -> int:
    """Compute ``removals`` and write them under ``folder/pNNNNN/`` by input partition."""
    folder.mkdir(parents=True, exist_ok=True)
    counts = ctx.compute(ctx.map_parts(removals, _write_groups, Artifact(folder), meta=pd.Series(dtype="int64")), label)
    return int(counts.sum())


def _write_groups(number: int, df: pd.DataFrame, artifact: Artifact) -> pd.Series:
    return pd.Series([artifact.write_by_part(df[list(REMOVAL_META.columns)], source=number)], dtype="int64")


def mark_removed(docs: dd.DataFrame, folder: Path, produces: dict[str, Any] | None = None) -> dd.DataFrame:
    """``docs`` with drop_reason/drop_detail set from the removals written to ``folder``."""
    meta = annotated_meta(docs._meta, produces)
    return StageContext.map_parts(docs, _mark, Artifact(folder), meta=meta)


def _mark(number: int, df: pd.DataFrame, artifact: Artifact) -> pd.DataFrame:
    df = mark_kept(df.copy())
    removed = artifact.read_group(number)
    if removed is None:
        return df
    by_id = removed.drop_duplicates("doc_id").set_index("doc_id")
    hit = df["doc_id"].isin(by_id.index).to_numpy()
    ids = df.loc[hit, "doc_id"]
    df.loc[hit, DROP_REASON] = by_id.loc[ids, DROP_REASON].to_numpy()
    df.loc[hit, DROP_DETAIL] = by_id.loc[ids, DROP_DETAIL].to_numpy()
    return df
