"""LSH banding, star edges inside buckets, edge verification and keeper choice (pure pandas/numpy).

Documents are addressed by a ``uid`` (int64: input partition << 32 | row), so the global steps
shuffle integers, and ``first`` (input order) is the smallest uid.

>>> lsh_params(0.8, 128)
(9, 13)
>>> round(s_curve(9, 13)["0.8"], 3)
0.399
"""

from __future__ import annotations

import functools

import numpy as np
import pandas as pd

from curation.schema import DROP_DETAIL, DROP_REASON, DropReason, detail_json

#: Similarities at which the stats report the LSH candidate probability.
CURVE_POINTS = (0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95)
KEEP_RULES = ("first", "longest", "highest:<column>", "lowest:<column>")
_COMBINE = np.uint64(0xFF51AFD7ED558CCD)
#: How far below the threshold a signature estimate may be for the exact Jaccard to be computed.
PREFILTER = 0.2
#: Keepers a cluster is split into at most: each costs one comparison with every member left, so a
#: template cluster whose members sit just under the threshold of each other (shop pages: 4 in 10
#: become keepers) cost time quadratic in its size (4,000 members: 67 s); the members left after
#: this many keepers, within the threshold of none of them, are kept.
MAX_KEEPERS = 32


def uid_of(part: int, rows: np.ndarray) -> np.ndarray:
    """``part << 32 | row``: a document's position as one sortable int64."""
    return (np.int64(part) << np.int64(32)) | np.asarray(rows, dtype=np.int64)


def part_of(uid: np.ndarray | pd.Series) -> np.ndarray:
    """The input partition of each uid."""
    return np.asarray(uid, dtype=np.int64) >> np.int64(32)


def lsh_params(threshold: float, num_perm: int, bands: int | None = None, rows: int | None = None) -> tuple[int, int]:
    """``(bands, rows)``: explicit values, or datasketch's ``_optimal_param`` (equal FP/FN weights,
    computed once per process and setting)."""
    if bands and rows:
        if bands * rows > num_perm:
            raise ValueError(f"bands * rows = {bands * rows} exceeds num_perm = {num_perm}")
        return int(bands), int(rows)
    if bands or rows:
        raise ValueError("set both bands and rows, or neither (then they follow lsh_threshold)")
    return _optimal(float(threshold), int(num_perm))


@functools.lru_cache(maxsize=32)
def _optimal(threshold: float, num_perm: int) -> tuple[int, int]:
    """datasketch's ``_optimal_param``: the ``(b, r)``, ``b * r <= num_perm``, first in ``(b, r)``
    order to minimise ``0.5 * FP + 0.5 * FN``, where FP integrates ``1 - (1 - s**r)**b`` over
    ``[0, threshold]`` and FN ``(1 - s**r)**b`` over ``[threshold, 1]``. Both integrands are
    polynomials of degree ``b * r``, so Gauss-Legendre with ``num_perm // 2 + 1`` nodes integrates
    them exactly, every pair at once (datasketch calls an adaptive quadrature per pair)."""
    pairs = [(b, r) for b in range(1, num_perm + 1) for r in range(1, num_perm // b + 1)]
    bands = np.array([b for b, _ in pairs], dtype=np.float64)[:, None]
    rows = np.array([r for _, r in pairs], dtype=np.float64)[:, None]
    x, w = np.polynomial.legendre.leggauss(num_perm // 2 + 1)
    below, above = threshold * (x + 1) / 2, threshold + (1 - threshold) * (x + 1) / 2
    fp = ((1 - (1 - below**rows) ** bands) * w).sum(axis=1) * (threshold / 2)
    fn = ((1 - above**rows) ** bands * w).sum(axis=1) * ((1 - threshold) / 2)
    return pairs[int(np.argmin(fp * 0.5 + fn * 0.5))]


def s_curve(bands: int, rows: int, points: tuple[float, ...] = CURVE_POINTS) -> dict[str, float]:
    """Probability that a pair of Jaccard ``s`` shares at least one bucket: ``1 - (1 - s^r)^b``."""
    return {f"{s:g}": round(1.0 - (1.0 - s**rows) ** bands, 6) for s in points}


def band_hashes(sig: np.ndarray, bands: int, rows: int, salt: np.ndarray | int = 0) -> np.ndarray:
    """``(n, bands)`` int64 hash of each band's ``rows`` values (salted, e.g. by shingle spec).

    >>> sig = np.array([[1, 2, 3, 4], [1, 2, 9, 9]], dtype=np.uint32)
    >>> h = band_hashes(sig, 2, 2)
    >>> bool(h[0, 0] == h[1, 0]), bool(h[0, 1] == h[1, 1])
    (True, False)
    """
    n = len(sig)
    out = np.empty((n, bands), dtype=np.int64)
    salt_arr = np.broadcast_to(np.asarray(salt, dtype=np.uint64), (n,))
    with np.errstate(over="ignore"):
        for band in range(bands):
            h = (salt_arr * _COMBINE) ^ np.uint64(band + 1)
            for j in range(band * rows, (band + 1) * rows):
                h = (h ^ sig[:, j].astype(np.uint64)) * _COMBINE
            h = h ^ (h >> np.uint64(29))
            h = h * np.uint64(0xC4CEB9FE1A85EC53)
            out[:, band] = (h ^ (h >> np.uint64(32))).view(np.int64)
    return out


def band_rows(uids: np.ndarray, sig: np.ndarray, bands: int, rows: int, salt: np.ndarray | int = 0) -> pd.DataFrame:
    """One row per (document, band): ``band``, ``band_hash``, ``uid`` (what the shuffle groups)."""
    h = band_hashes(sig, bands, rows, salt)
    return pd.DataFrame(
        {
            "band": np.tile(np.arange(bands, dtype=np.int64), len(uids)),
            "band_hash": h.ravel(),
            "uid": np.repeat(np.asarray(uids, dtype=np.int64), bands),
        }
    )


def star_edges(buckets: pd.DataFrame) -> tuple[pd.DataFrame, np.ndarray]:
    """Edges from each bucket's first member (smallest uid) to every other member.

    A bucket of k members yields k - 1 edges, never k(k-1)/2. Returns the deduplicated edges
    ``(u, v)`` with ``u < v`` and the sizes of the buckets with more than one member.

    >>> b = pd.DataFrame({"band": [0, 0, 0, 1, 1], "band_hash": [7, 7, 7, 5, 5], "uid": [3, 1, 2, 1, 2]})
    >>> e, sizes = star_edges(b)
    >>> e.values.tolist(), sizes.tolist()
    ([[1, 2], [1, 3]], [3, 2])
    """
    if buckets.empty:
        return pd.DataFrame({"u": pd.Series(dtype="int64"), "v": pd.Series(dtype="int64")}), np.zeros(0, dtype=np.int64)
    s = buckets.sort_values(["band", "band_hash", "uid"], kind="stable")
    band = s["band"].to_numpy()
    bh = s["band_hash"].to_numpy()
    uid = s["uid"].to_numpy()
    new = np.ones(len(s), dtype=bool)
    new[1:] = (band[1:] != band[:-1]) | (bh[1:] != bh[:-1])
    group = np.cumsum(new) - 1
    starts = np.flatnonzero(new)
    sizes = np.diff(np.append(starts, len(s)))
    center = uid[starts][group]
    member = ~new
    edges = pd.DataFrame({"u": center[member], "v": uid[member]})
    edges = edges.drop_duplicates().sort_values(["u", "v"], kind="stable").reset_index(drop=True)
    return edges, sizes[sizes > 1]


def verify_mask(sig_u: np.ndarray, sig_v: np.ndarray, threshold: float | None) -> tuple[np.ndarray, np.ndarray]:
    """Estimated Jaccard of each edge and whether it reaches ``threshold`` (None: keep all)."""
    est = (sig_u == sig_v).mean(axis=1) if len(sig_u) else np.zeros(0)
    keep = np.ones(len(est), dtype=bool) if threshold is None else est >= threshold - 1e-12
    return est, keep


def exact_jaccard(a: np.ndarray, b: np.ndarray, assume_unique: bool = False) -> float:
    """Jaccard of two sets of shingle hashes (``assume_unique``: each already sorted and unique, as
    :func:`~curation.dedup.minhash_stats.exact_shingle_sets` writes them).

    >>> exact_jaccard(np.array([1, 2, 3]), np.array([2, 3, 4])), exact_jaccard(np.array([1, 2]), np.array([2, 3]), True)
    (0.5, 0.3333333333333333)
    """
    if not assume_unique:
        a, b = np.unique(a), np.unique(b)
    inter = len(np.intersect1d(a, b, assume_unique=True))
    union = len(a) + len(b) - inter
    return inter / union if union else 1.0


def check_keep(keep: str) -> None:
    if keep in ("first", "longest") or keep_column(keep):
        return
    raise ValueError(f"keep must be one of {KEEP_RULES}, not {keep!r}")


def keep_column(keep: str) -> str | None:
    """The document column a ``highest:<column>`` / ``lowest:<column>`` rule reads (None: another rule).

    >>> keep_column("lowest:perplexity"), keep_column("longest")
    ('perplexity', None)
    """
    rule, _, column = keep.partition(":")
    return column if rule in ("highest", "lowest") and column else None


def pick_keepers(members: pd.DataFrame, keep: str, threshold: float | None = None) -> pd.DataFrame:
    """Keepers per cluster; a removal row or a kept row for every member.

    ``members``: ``label`` (cluster, the smallest uid), ``uid``, ``doc_id``, ``key`` (length, the
    ``highest:<column>`` value or minus the ``lowest:<column>`` value; larger wins, NaN loses),
    ``sig`` (signature bytes) and, for exact similarity, ``sh`` (sorted unique shingle hashes as
    bytes, :func:`~curation.dedup.minhash_stats.exact_shingle_sets`). With ``threshold`` a member
    is removed only when its own similarity to its keeper reaches it (:func:`star_keepers`: exact
    Jaccard where ``sh`` is given, else the signature estimate); ``None``: every member of a
    cluster goes against its one keeper. Returns ``doc_id``, ``uid``, ``minhash_cluster`` (doc_id of
    the cluster's first member), ``drop_reason``, ``drop_detail`` (kept doc_id, cluster id, size,
    estimated and, with ``sh``, exact Jaccard to the kept document).

    >>> m = pd.DataFrame({"label": [1, 1], "uid": [1, 2], "doc_id": ["a", "b"], "key": [1.0, 5.0],
    ...                   "sig": [b"\\0\\0\\0\\1", b"\\0\\0\\0\\1"]})
    >>> pick_keepers(m, "longest")[["doc_id", "drop_reason"]].values.tolist()
    [['a', 'near_duplicate'], ['b', None]]
    """
    check_keep(keep)
    cols = ["doc_id", "uid", "minhash_cluster", DROP_REASON, DROP_DETAIL]
    if members.empty:
        return pd.DataFrame({c: pd.Series(dtype="int64" if c == "uid" else object) for c in cols})
    m = members.sort_values(["label", "uid"], kind="stable").reset_index(drop=True)
    cluster_first = m.groupby("label", sort=False)["doc_id"].transform("first").to_numpy()
    size = m.groupby("label", sort=False)["uid"].transform("size").to_numpy()
    if keep == "first":
        ranked = m.index.to_numpy()  # (label, uid) order
    else:
        key = pd.to_numeric(m["key"], errors="coerce").fillna(-np.inf)
        ranked = m.assign(_neg=-key.to_numpy()).sort_values(["label", "_neg", "uid"], kind="stable").index.to_numpy()
    sig = np.stack([np.frombuffer(s, dtype=np.uint32) for s in m["sig"]])
    sets = [np.frombuffer(b, dtype=np.uint64) for b in m["sh"]] if "sh" in m.columns else None
    k_row, jac = star_keepers(m["label"].to_numpy()[ranked], ranked, sig, sets, threshold)
    est = (sig == sig[k_row]).mean(axis=1)
    doc_ids = m["doc_id"].astype(object).to_numpy()
    is_keeper = np.arange(len(m)) == k_row
    reason = np.where(is_keeper, None, DropReason.NEAR_DUPLICATE.value).astype(object)
    detail = [
        None
        if kept
        else detail_json(duplicate_of=doc_ids[k], cluster=c, cluster_size=int(s), jaccard_estimate=round(float(e), 4),
                         **({} if np.isnan(j) else {"jaccard": round(float(j), 4)}))
        for kept, k, c, s, e, j in zip(is_keeper, k_row, cluster_first, size, est, jac, strict=True)
    ]
    # Series with dtype=object: pandas 3 would infer "str" and turn the kept rows' None into NaN.
    return pd.DataFrame(
        {
            "doc_id": pd.Series(doc_ids, dtype=object),
            "uid": m["uid"].to_numpy(dtype=np.int64),
            "minhash_cluster": pd.Series(cluster_first, dtype=object),
            DROP_REASON: pd.Series(reason, dtype=object),
            DROP_DETAIL: pd.Series(detail, dtype=object),
        }
    )[cols]


def star_keepers(
    labels: np.ndarray, ranked: np.ndarray, sig: np.ndarray, sets: list[np.ndarray] | None, threshold: float | None
) -> tuple[np.ndarray, np.ndarray]:
    """``(keeper row, exact Jaccard to it or NaN)`` of every row: greedy star clustering per cluster.

    ``ranked``: the rows in keep order, grouped by cluster (``labels``: their cluster). The best
    remaining member becomes a keeper and takes every remaining member whose similarity to it is
    at least ``threshold``; the rest repeat this among themselves, up to :data:`MAX_KEEPERS`
    keepers (the members left then keep themselves). The order depends on the
    cluster's members and the keep rule only, so the result does not depend on partitioning.
    Exact similarity (``sets`` given) is computed for the members whose signature estimate is
    within ``PREFILTER`` of the threshold (a pair at 0.8 estimates below 0.6 with p < 1e-8).

    >>> sig = np.array([[1, 1, 1, 1], [1, 1, 1, 2], [1, 1, 2, 2]], dtype=np.uint32)
    >>> k, _ = star_keepers(np.zeros(3), np.arange(3), sig, None, 0.75)
    >>> k.tolist()
    [0, 0, 2]
    """
    n = len(ranked)
    keeper = np.empty(n, dtype=np.int64)
    jac = np.full(n, np.nan)
    bounds = np.flatnonzero(np.r_[True, labels[1:] != labels[:-1], True])
    for lo, hi in zip(bounds[:-1], bounds[1:], strict=True):
        rest, made = ranked[lo:hi], 0
        while len(rest):
            if made == MAX_KEEPERS:  # within the threshold of none of the keepers so far: each keeps itself
                keeper[rest] = rest
                break
            made += 1
            k = rest[0]
            if threshold is None:
                take = np.ones(len(rest), dtype=bool)
            else:
                est = (sig[rest] == sig[k]).mean(axis=1)
                if sets is None:
                    take = est >= threshold - 1e-12
                else:
                    near = np.flatnonzero(est >= threshold - PREFILTER)
                    exact = np.array([exact_jaccard(sets[rest[i]], sets[k], assume_unique=True) for i in near])
                    take = np.zeros(len(rest), dtype=bool)
                    take[near] = exact >= threshold - 1e-12
                    jac[rest[near]] = exact
                take[0] = True
            keeper[rest[take]] = k
            rest = rest[~take]
    return keeper, jac

