"""Connected components of an edge list: the in-memory fast path and the rounds of the distributed one.

A component's label is its smallest node id, so the union-find path and the distributed
min-label propagation (:func:`initial_labels`, then :func:`propagate` until no label changes;
the loop runs in ``pipelines/stages/minhash_steps.py``) give identical labels.

>>> nodes, labels = union_find_components(np.array([5, 7, 1]), np.array([7, 9, 2]))
>>> dict(zip(nodes.tolist(), labels.tolist()))
{1: 1, 2: 1, 5: 5, 7: 5, 9: 5}
"""

from __future__ import annotations

from typing import Any

import numpy as np

#: A pandas or a Dask dataframe (the propagation round is written for both).
Frame = Any


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


def initial_labels(sym: Frame) -> Frame:
    """Each node's first label: the smallest of itself and its neighbours (``node``, ``label``).

    ``sym``: the edges ``u``, ``v`` in both directions.
    """
    labels = sym.groupby("u")["v"].min().reset_index().rename(columns={"u": "node", "v": "label"})
    labels["label"] = labels[["node", "label"]].min(axis=1)
    return labels


def propagate(sym: Frame, labels: Frame) -> Frame:
    """One round of min-label propagation with pointer jumping: each node takes the smallest label
    of its neighbours, then the label of the node its label names (both in one component).

    ``sym``: edges ``u``, ``v`` in both directions; ``labels``: ``node``, ``label``. Returns
    ``node``, ``label``, ``old`` (the label before the round); the labels no longer change once
    each is its component's smallest node. Written with what pandas and ``dask.dataframe``
    share, so the pipeline runs this very round on Dask frames (``pipelines/stages/minhash_steps.py``).

    >>> import pandas as pd
    >>> e = pd.DataFrame({"u": [1, 2, 2, 3], "v": [2, 1, 3, 2]})
    >>> lab = pd.DataFrame({"node": [1, 2, 3], "label": [1, 2, 3]})
    >>> propagate(e, lab)["label"].tolist()
    [1, 1, 1]
    """
    best = sym.merge(labels, left_on="v", right_on="node")[["u", "label"]].groupby("u")["label"].min()
    best = best.reset_index().rename(columns={"u": "node", "label": "nl"})
    new = labels.merge(best, on="node", how="left")
    new["old"] = new["label"]
    new["label"] = new[["label", "nl"]].min(axis=1).astype("int64")
    # Pointer jumping: a node's label is a node of the same component; take that node's label.
    jump = new[["node", "label"]].rename(columns={"node": "label", "label": "l2"})
    new = new[["node", "label", "old"]].merge(jump, on="label", how="left")
    new["label"] = new[["label", "l2"]].min(axis=1).astype("int64")
    return new[["node", "label", "old"]]
