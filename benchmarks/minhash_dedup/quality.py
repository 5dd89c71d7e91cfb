"""Ground truth by exact Jaccard of shingle sets, and pair precision/recall of a clustering.

The shingle sets come from the reference (regex) shingler ``curation.dedup.shingles.shingles``
hashed with 64-bit BLAKE2b, independent of the stage's vectorised hash. All pairs with Jaccard
>= ``t`` are found exactly with prefix filtering (Chaudhuri et al. 2006): two sets with
J >= t share at least one of their ``|S| - ceil(t|S|) + 1`` rarest elements.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Sequence

import numpy as np
import pandas as pd

from curation.dedup.components import union_find_components
from curation.dedup.shingles import ShingleSpec, shingles


def shingle_sets(texts: Sequence[str], spec: ShingleSpec | None = None) -> list[np.ndarray]:
    """Sorted unique 64-bit BLAKE2b hashes of each document's shingle strings (default word:5)."""
    spec = spec or ShingleSpec()
    out = []
    for t in texts:
        hs = {int.from_bytes(hashlib.blake2b(s.encode("utf-8"), digest_size=8).digest(), "little") for s in shingles(t, spec)}
        out.append(np.array(sorted(hs), dtype=np.uint64))
    return out


def jaccard(a: np.ndarray, b: np.ndarray) -> float:
    inter = len(np.intersect1d(a, b, assume_unique=True))
    return inter / (len(a) + len(b) - inter)


def exact_pairs(sets: list[np.ndarray], t: float = 0.7) -> pd.DataFrame:
    """Every pair ``(i, j, jaccard)`` with ``i < j`` and exact Jaccard >= ``t``."""
    flat = np.concatenate(sets)
    doc = np.repeat(np.arange(len(sets)), [len(s) for s in sets])
    uniq, inv, counts = np.unique(flat, return_inverse=True, return_counts=True)
    # Rank elements rarest first; each document's prefix is its rarest elements.
    rank_of = np.empty(len(uniq), dtype=np.int64)
    rank_of[np.lexsort((uniq, counts))] = np.arange(len(uniq))
    ranks = rank_of[inv]
    order = np.lexsort((ranks, doc))
    ranks, doc = ranks[order], doc[order]
    sizes = np.array([len(s) for s in sets])
    prefix = sizes - np.ceil(t * sizes - 1e-9).astype(np.int64) + 1
    start = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    pos = np.arange(len(ranks)) - np.repeat(start, sizes)
    keep = pos < np.repeat(prefix, sizes)
    idx = pd.DataFrame({"tok": ranks[keep], "doc": doc[keep]}).drop_duplicates()
    idx = idx[idx["tok"].duplicated(keep=False)]  # a prefix element no other document has pairs nothing
    groups = idx.groupby("tok")["doc"].apply(list)
    cand = set()
    for members in groups[groups.map(len) > 1]:
        members = sorted(members)
        for a in range(len(members)):
            for b in range(a + 1, len(members)):
                cand.add((members[a], members[b]))
    rows = []
    for i, j in cand:
        lo, hi = sorted((sizes[i], sizes[j]))
        if lo < t * hi:
            continue
        jac = jaccard(sets[i], sets[j])
        if jac >= t:
            rows.append((i, j, jac))
    return pd.DataFrame(rows, columns=["i", "j", "jaccard"]).sort_values(["i", "j"]).reset_index(drop=True)


def clusters_from_pairs(n: int, pairs: np.ndarray) -> np.ndarray:
    """Cluster label per document (its own index for singletons) from candidate pairs."""
    labels = np.arange(n)
    if len(pairs):
        nodes, lab = union_find_components(pairs[:, 0], pairs[:, 1])
        labels[nodes] = lab
    return labels


def score(labels: np.ndarray, truth: pd.DataFrame, sets: list[np.ndarray], max_pairs: int = 300_000, seed: int = 0) -> dict:
    """Recall of true pairs at several Jaccard levels and the true Jaccard of clustered pairs."""
    out: dict = {}
    same = labels[truth["i"].to_numpy()] == labels[truth["j"].to_numpy()]
    for t in (0.7, 0.8, 0.85, 0.9):
        m = truth["jaccard"].to_numpy() >= t
        out[f"recall@{t}"] = round(float(same[m].mean()), 4) if m.any() else None
        out[f"true_pairs@{t}"] = int(m.sum())
    known = {(i, j): jac for i, j, jac in truth.itertuples(index=False)}
    frame = pd.DataFrame({"doc": np.arange(len(labels)), "label": labels})
    sizes = frame.groupby("label")["doc"].transform("size")
    clustered = frame[sizes > 1]
    pairs = []
    for members in clustered.groupby("label")["doc"].apply(list):
        pairs += [(a, b) for k, a in enumerate(members) for b in members[k + 1 :]]
    rng = random.Random(seed)
    sampled = len(pairs) > max_pairs
    if sampled:
        pairs = rng.sample(pairs, max_pairs)
    jac = np.array([known.get((a, b)) or jaccard(sets[a], sets[b]) for a, b in pairs]) if pairs else np.zeros(0)
    out["clustered_pairs"] = len(pairs)
    out["clustered_pairs_sampled"] = sampled
    out["pair_precision@0.7"] = round(float((jac >= 0.7).mean()), 4) if len(jac) else None
    out["pairs_below_0.8"] = round(float((jac < 0.8).mean()), 4) if len(jac) else None
    out["clusters"] = int(clustered["label"].nunique())
    out["documents_removed"] = int(len(clustered) - clustered["label"].nunique())
    return out


def planted_recall(labels: np.ndarray, doc_ids: list[str], metas: list[dict]) -> dict[str, float]:
    """Share of planted (variant, base) pairs put in one cluster, per edit rate."""
    index = {d: k for k, d in enumerate(doc_ids)}
    hits: dict[str, list[bool]] = {}
    for k, m in enumerate(metas):
        if "base" in m and m["base"] in index:
            hits.setdefault(f"{m['rate']:g}", []).append(bool(labels[k] == labels[index[m["base"]]]))
    return {r: round(sum(v) / len(v), 3) for r, v in sorted(hits.items(), key=lambda kv: float(kv[0]))}

