"""The sample of documents an LLM annotates: stratified by source and length, deterministic.

A document's stratum is ``<source>:<length bucket>`` (token-count edges from the recipe); its
priority is a hash of (seed, doc_id), so the sample does not depend on partitioning or worker
count. Quotas per stratum come from the stratum sizes (``equal``: water-filling, every stratum
as many as it can up to a common level; ``proportional``: largest remainders, at least one per
stratum); within a stratum the lowest priorities are chosen.

Sized for Dask: :func:`stratum_counts` per partition (summed), :func:`allocate` on the client
(one number per stratum), :func:`candidates` per partition (a few times the quota), then
:func:`select` on the small union.

>>> df = pd.DataFrame({"doc_id": [f"d{i}" for i in range(6)], "source": ["web"] * 4 + ["math_science"] * 2,
...                    "n_tokens": [10, 2000, 30, 5000, 40, 3000]})
>>> sorted(stratified_sample(df, 4, edges=(1000,), seed=1)["stratum"].value_counts().to_dict().items())
[('math_science:0', 1), ('math_science:1', 1), ('web:0', 1), ('web:1', 1)]
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import numpy as np
import pandas as pd

ALLOCATIONS = ("equal", "proportional")


def strata(df: pd.DataFrame, edges: Sequence[int]) -> pd.Series:
    """``<source>:<bucket>`` where bucket counts the ``edges`` at or below ``n_tokens``."""
    buckets = np.searchsorted(np.asarray(edges, dtype=np.int64), df["n_tokens"].fillna(0).to_numpy(np.int64), side="right")
    return df["source"].fillna("unknown").astype(str).str.cat(buckets.astype(str), sep=":")


def priority(doc_ids: Sequence[str], seed: int) -> np.ndarray:
    """A uniform number in [0, 1) per document from (seed, doc_id)."""
    return np.fromiter(
        (int.from_bytes(hashlib.blake2b(f"{seed}:{d}".encode(), digest_size=8).digest(), "big") / 2**64 for d in doc_ids),
        dtype=np.float64, count=len(doc_ids),
    )


def stratum_counts(df: pd.DataFrame, edges: Sequence[int]) -> pd.Series:
    """Documents per stratum (sum these over partitions)."""
    return strata(df, edges).value_counts()


def allocate(counts: dict[str, int], size: int, allocation: str = "equal") -> dict[str, int]:
    """Quota per stratum, summing to ``min(size, total)``.

    >>> allocate({"a": 100, "b": 3, "c": 50}, 30)
    {'a': 13, 'b': 3, 'c': 14}
    >>> allocate({"a": 100, "b": 3, "c": 50}, 30, "proportional")
    {'a': 19, 'b': 1, 'c': 10}
    """
    if allocation not in ALLOCATIONS:
        raise ValueError(f"allocation must be one of {ALLOCATIONS}, not {allocation!r}")
    counts = {k: int(v) for k, v in sorted(counts.items()) if int(v) > 0}
    total = min(int(size), sum(counts.values()))
    if total <= 0:
        return {k: 0 for k in counts}
    if allocation == "equal":
        quotas = {k: 0 for k in counts}
        left = total
        open_ = sorted(counts, key=lambda k: (counts[k], k))
        while left > 0 and open_:
            share = max(left // len(open_), 1)
            for k in list(open_):
                take = min(share, counts[k] - quotas[k], left)
                quotas[k] += take
                left -= take
                if quotas[k] >= counts[k]:
                    open_.remove(k)
                if left == 0:
                    break
        return quotas
    exact = {k: total * v / sum(counts.values()) for k, v in counts.items()}
    quotas = {k: min(counts[k], max(1, int(e))) for k, e in exact.items()}
    order = sorted(counts, key=lambda k: (-(exact[k] - int(exact[k])), k))
    i = 0
    while sum(quotas.values()) < total and i < 10 * len(order):
        k = order[i % len(order)]
        if quotas[k] < counts[k]:
            quotas[k] += 1
        i += 1
    while sum(quotas.values()) > total:  # the minimum of one overshot: take back from the largest
        k = max(quotas, key=lambda s: (quotas[s], s))
        quotas[k] -= 1
    return quotas


def candidates(
    df: pd.DataFrame, quotas: dict[str, int], counts: dict[str, int], edges: Sequence[int], seed: int, slack: float = 3.0
) -> pd.DataFrame:
    """Rows that may make the sample: priority below ``(slack × quota + 20) / count`` of their stratum.

    The 20 spare expected candidates make a short stratum (fewer candidates than its quota)
    practically impossible even for quotas of one.

    Returns ``doc_id, stratum, priority`` (plus any other columns of ``df``).
    """
    out = df.assign(stratum=strata(df, edges).to_numpy(), priority=priority(df["doc_id"].astype(str).tolist(), seed))
    cut = out["stratum"].map(lambda s: min(1.0, (slack * quotas.get(s, 0) + 20) / max(counts.get(s, 1), 1)) if quotas.get(s, 0) else -1.0)
    return out[out["priority"] < cut.to_numpy()]


def select(cands: pd.DataFrame, quotas: dict[str, int]) -> pd.DataFrame:
    """The ``quota`` lowest-priority candidates of each stratum, ordered by stratum then priority."""
    ranked = cands.sort_values(["stratum", "priority", "doc_id"], kind="stable")
    rank = ranked.groupby("stratum", sort=False).cumcount()
    keep = rank.to_numpy() < ranked["stratum"].map(quotas).fillna(0).to_numpy()
    return ranked[keep].reset_index(drop=True)


def stratified_sample(
    df: pd.DataFrame, size: int, edges: Sequence[int] = (256, 1024, 4096), seed: int = 0, allocation: str = "equal"
) -> pd.DataFrame:
    """The whole procedure on one in-memory frame (``doc_id``, ``source``, ``n_tokens``)."""
    counts = stratum_counts(df, edges).to_dict()
    quotas = allocate(counts, size, allocation)
    cands = candidates(df, quotas, counts, edges, seed)
    chosen = select(cands, quotas)
    short = {s: q - int((chosen["stratum"] == s).sum()) for s, q in quotas.items()}
    if any(v > 0 for v in short.values()):  # the slack was not enough (tiny strata): take all candidates
        chosen = select(candidates(df, quotas, counts, edges, seed, slack=float("inf")), quotas)
    return chosen
