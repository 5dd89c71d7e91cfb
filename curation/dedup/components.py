"""Connected components of an edge list: the in-memory fast path and one propagation round.

A component's label is its smallest node id, so the union-find path and the distributed
min-label propagation (``pipelines/stages/minhash_dedup.py``) give identical labels.

>>> nodes, labels = union_find_components(np.array([5, 7, 1]), np.array([7, 9, 2]))
>>> dict(zip(nodes.tolist(), labels.tolist()))
{1: 1, 2: 1, 5: 5, 7: 5, 9: 5}
"""

from __future__ import annotations

import numpy as np
import pandas as pd


def union_find_components(u: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(nodes, labels)``: every node of the edges and the smallest node of its component."""
    u = np.asarray(u, dtype=np.int64)
    v = np.asarray(v, dtype=np.int64)
    if len(u) == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    nodes, idx = np.unique(np.concatenate([u, v]), return_inverse=True)
    n = len(nodes)
    graph = coo_matrix((np.ones(len(u), dtype=np.int8), (idx[: len(u)], idx[len(u) :])), shape=(n, n))
    _, comp = connected_components(graph, directed=False)
    # nodes are sorted, so the first node seen for each component is its minimum.
    first = np.full(comp.max() + 1, -1, dtype=np.int64)
    order = np.arange(n)[::-1]
    first[comp[order]] = order  # written last for the smallest index
    return nodes, nodes[first[comp]]


def propagate(edges: pd.DataFrame, labels: pd.DataFrame) -> pd.DataFrame:
    """One min-label round on pandas frames: each node takes the minimum label of its neighbours.

    ``edges``: ``u``, ``v`` (both directions); ``labels``: ``node``, ``label``. Returns
    ``node``, ``label``, ``old`` (the label before the round). Reference for the Dask version.

    >>> e = pd.DataFrame({"u": [1, 2, 2, 3], "v": [2, 1, 3, 2]})
    >>> lab = pd.DataFrame({"node": [1, 2, 3], "label": [1, 2, 3]})
    >>> propagate(e, lab)["label"].tolist()
    [1, 1, 2]
    """
    joined = edges.merge(labels, left_on="v", right_on="node")[["u", "label"]]
    best = joined.groupby("u", sort=False)["label"].min().rename("nl")
    out = labels.merge(best, left_on="node", right_index=True, how="left")
    out["old"] = out["label"]
    out["label"] = np.minimum(out["label"], out["nl"].fillna(out["label"]).astype("int64"))
    return out[["node", "label", "old"]].reset_index(drop=True)
