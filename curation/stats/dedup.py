"""Duplicate clusters of the dedup stages, from their ledger details.

>>> # clusters = duplicate_clusters(run, "exact_dedup")
>>> # cluster_size_distribution(clusters)   # size → number of clusters, documents

A removed duplicate's ledger detail names the document it lost to (``duplicate_of``). A
cluster is that kept document and every document removed in its favour, so its size is the
number of removed members plus one; the size a stage wrote in the detail (``group_size``,
``cluster_size``) is shown beside it as ``size_reported``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from curation.stats.drops import kept_id, parse_detail
from curation.stats.run import Run

DEDUP_STAGES = ("exact_dedup", "minhash_dedup", "semdedup")
#: Detail keys a stage may use for the size of a duplicate group.
SIZE_KEYS = ("group_size", "cluster_size")
#: Detail keys a stage may use for the group's id (an LSH component, an exact-text hash).
CLUSTER_KEYS = ("cluster", "cluster_id", "minhash_cluster", "component", "hash")

CLUSTER_COLUMNS = ["keeper", "cluster_id", "size", "removed", "tokens_removed", "size_reported"]


def duplicate_clusters(run: Run, stage: str) -> pd.DataFrame:
    """One row per duplicate cluster of ``stage``: keeper, size, removed documents and tokens.

    Built from the stage's ledger rows whose detail names a kept document.
    """
    ledger = run.ledger(stage, ["doc_id", "reason", "detail", "n_tokens"])
    if ledger.empty:
        return pd.DataFrame({c: pd.Series(dtype=object) for c in CLUSTER_COLUMNS})
    details = [parse_detail(d) for d in ledger["detail"]]
    frame = pd.DataFrame(
        {
            "keeper": [kept_id(d) for d in details],
            "cluster_id": [_first(d, CLUSTER_KEYS) for d in details],
            "size_reported": [_first(d, SIZE_KEYS) for d in details],
            "n_tokens": ledger["n_tokens"].astype("int64").to_numpy(),
        }
    )
    frame = frame[frame["keeper"].notna()]
    if frame.empty:
        return pd.DataFrame({c: pd.Series(dtype=object) for c in CLUSTER_COLUMNS})
    frame["size_reported"] = pd.to_numeric(frame["size_reported"], errors="coerce")
    out = frame.groupby("keeper", sort=True).agg(
        cluster_id=("cluster_id", "first"),
        removed=("n_tokens", "size"),
        tokens_removed=("n_tokens", "sum"),
        size_reported=("size_reported", "max"),
    ).reset_index()
    out["size"] = out["removed"] + 1
    out["cluster_id"] = out["cluster_id"].map(lambda v: None if v is None or (isinstance(v, float) and np.isnan(v)) else str(v))
    return out[CLUSTER_COLUMNS].sort_values(["size", "keeper"], ascending=[False, True]).reset_index(drop=True)


def cluster_size_distribution(clusters: pd.DataFrame) -> pd.DataFrame:
    """Number of clusters and documents per cluster size.

    >>> cluster_size_distribution(pd.DataFrame({"size": [2, 2, 5]})).values.tolist()
    [[2, 2, 4], [5, 1, 5]]
    """
    if clusters.empty:
        return pd.DataFrame({"size": pd.Series(dtype="int64"), "clusters": pd.Series(dtype="int64"), "documents": pd.Series(dtype="int64")})
    out = clusters.groupby("size", sort=True).size().rename("clusters").reset_index()
    out["documents"] = out["size"] * out["clusters"]
    return out.astype("int64")


def dedup_summary(run: Run) -> pd.DataFrame:
    """Per dedup stage that ran: clusters, documents removed, largest cluster, mean size."""
    rows = []
    for stage in DEDUP_STAGES:
        if not run.has(stage):
            continue
        c = duplicate_clusters(run, stage)
        rows.append({
            "stage": stage,
            "clusters": len(c),
            "removed": int(c["removed"].sum()) if len(c) else 0,
            "tokens_removed": int(c["tokens_removed"].sum()) if len(c) else 0,
            "largest": int(c["size"].max()) if len(c) else 0,
            "mean_size": float(c["size"].mean()) if len(c) else 0.0,
        })
    return pd.DataFrame(rows, columns=["stage", "clusters", "removed", "tokens_removed", "largest", "mean_size"])


def _first(detail: dict, keys: tuple[str, ...]) -> object:
    for key in keys:
        if detail.get(key) is not None:
            return detail[key]
    return None
