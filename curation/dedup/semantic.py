"""SemDeDup pruning (Abbas et al. 2023): within a cluster, drop a member too similar to an earlier one.

Members of a cluster are ordered by the keep rule (first = most wanted); one similarity pass
records, for every member, its maximum cosine to any earlier member (``max_sim``) and which one
(``nearest``). A member is a duplicate when ``max_sim > 1 - eps`` — the decision is a cheap
function of ``max_sim``, so an ε sweep needs no second pass (as in the paper's reference code,
which thresholds ``triu(X Xᵀ, 1).max(0)``).

>>> members = pd.DataFrame({"doc_id": ["a", "b", "c"], "_part": 0, "source": "web",
...                         "cluster": 0, "keep_key": [0.0, 1.0, 2.0]})
>>> vecs = np.array([[1, 0], [1, 0], [0, 1]], dtype=np.float32)
>>> sims = similarity_pass(members, vecs)
>>> sims[["doc_id", "max_sim", "nearest"]].values.tolist()
[['a', -1.0, None], ['b', 1.0, 'a'], ['c', 0.0, 'a']]
>>> decide(sims, eps=0.05)[["doc_id", "drop_reason"]].values.tolist()
[['b', 'semantic_duplicate']]
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

# the keep rules (curation.dedup.semantic_keep) are part of this module's interface
from curation.dedup.semantic_keep import GROUP_COLUMNS, KEEP_RULES, keep_key, keep_order, parse_keep  # noqa: F401
from curation.dedup.vectors import sketch_jaccard
from curation.schema import DROP_DETAIL, DROP_REASON, DropReason, detail_json

#: Members of one similarity block: rows × cluster size stays under this many float32 (256 MiB).
MAX_BLOCK_ELEMENTS = 1 << 26
#: Pairs whose sketches are compared at once by the text check (2 × 32 MiB of 128 × uint32 sketches).
PAIRS_PER_CHECK = 1 << 16
SIMILARITY_COLUMNS = ("doc_id", "_part", "source", "cluster", "rank", "max_sim", "nearest", "lang")


def max_similarity_to_earlier(
    vectors: np.ndarray, *, block_rows: int = 1024, max_elements: int = MAX_BLOCK_ELEMENTS,
    bars: np.ndarray | None = None, sketches: np.ndarray | None = None, min_jaccard: float | np.ndarray = 0.0,
    cut: np.ndarray | None = None, always: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """For row ``i`` of unit ``vectors``: max cosine to rows ``< i`` and its row (-1.0 / -1 for row 0).

    Computed block by block (``rows × i`` similarities at a time), so memory stays bounded for
    clusters of any size; the result equals the dense ``triu(X Xᵀ, 1)`` column max.

    With ``bars`` (one cosine per row, NaN = no check) and ``sketches`` (:func:`bigram_sketch` rows),
    a pair of row ``i`` above ``bars[i]`` counts only when the two texts' estimated bigram Jaccard is
    at least ``min_jaccard`` (one value, or one per row ``i``); a pair that fails is left out of the
    maximum. Pairs at or below the bar keep their cosine: they decide nothing at that bar. With
    ``cut`` (the window check, :mod:`curation.dedup.window_check`) only the pairs above the bar where
    ``always[i]``, ``always[j]``, ``cut[i]`` or ``cut[j]`` is true are checked; the others stand on
    their cosine.

    >>> v = np.array([[1, 0], [0.6, 0.8], [0.8, 0.6]], dtype=np.float32)
    >>> s, j = max_similarity_to_earlier(v, block_rows=1)
    >>> [round(float(x), 2) for x in s], j.tolist()
    ([-1.0, 0.6, 0.96], [-1, 0, 1])
    """
    x = np.ascontiguousarray(vectors, dtype=np.float32)
    n = len(x)
    best = np.full(n, -1.0, dtype=np.float32)
    nearest = np.full(n, -1, dtype=np.int64)
    rows = int(max(1, min(block_rows, max_elements // max(n, 1))))
    floor = np.broadcast_to(np.asarray(min_jaccard, dtype=np.float64), (n,))
    if cut is not None:
        always = np.zeros(n, dtype=bool) if always is None else always
    for a in range(1, n, rows):  # row 0 has no earlier member
        b = min(n, a + rows)
        s = x[a:b] @ x[:b].T
        # Row r is member a + r: only columns j < a + r are earlier members.
        later = np.arange(b)[None, :] >= (a + np.arange(b - a))[:, None]
        s[later] = -np.inf
        if bars is not None and sketches is not None:
            rr, cc = np.nonzero(s > np.nan_to_num(bars[a:b], nan=np.inf)[:, None])
            if cut is not None:
                need = always[a + rr] | always[cc] | cut[a + rr] | cut[cc]
                rr, cc = rr[need], cc[need]
            for c in range(0, len(rr), PAIRS_PER_CHECK):  # bounded memory however many pairs pass the bar
                r, col = rr[c : c + PAIRS_PER_CHECK], cc[c : c + PAIRS_PER_CHECK]
                fails = sketch_jaccard(sketches[a + r], sketches[col]) < floor[a + r]
                s[r[fails], col[fails]] = -np.inf
        j = np.argmax(s, axis=1)
        best[a:b] = np.maximum(s[np.arange(b - a), j], -1.0)
        nearest[a:b] = np.where(np.isfinite(s[np.arange(b - a), j]), j, -1)
    return best, nearest


def similarity_pass(members: pd.DataFrame, vectors: np.ndarray, *, block_rows: int = 1024,
                    bars: np.ndarray | None = None, sketches: np.ndarray | None = None, min_jaccard: float | np.ndarray = 0.0,
                    cut: np.ndarray | None = None, always: np.ndarray | None = None) -> pd.DataFrame:
    """Max similarity of each member to an earlier member of its (source, cluster) group.

    ``members`` has ``doc_id``, ``_part``, ``source``, ``cluster``, ``keep_key`` and optionally
    ``lang`` and ``length`` (row-aligned with ``vectors``); the result has :data:`SIMILARITY_COLUMNS`,
    ``rank`` being the keep order in the group (:func:`keep_order`). ``bars``, ``sketches``, ``min_jaccard``, ``cut`` and ``always``
    (row-aligned too): the pair checks of :func:`max_similarity_to_earlier`.
    """
    if len(members) != len(vectors):
        raise ValueError(f"{len(members)} members for {len(vectors)} vectors")
    frame = members.reset_index(drop=True).assign(_pos=np.arange(len(members)))
    if "lang" not in frame.columns:
        frame["lang"] = None
    frame = keep_order(frame)
    checked = bars is not None and sketches is not None
    per_row = np.ndim(min_jaccard) > 0
    outs = []
    # one BLAS thread: a multi-threaded sgemm sums in another order, so a one-process run (all cores)
    # and a cluster's workers (Dask sets OMP_NUM_THREADS=1) differed in max_sim's last bits
    with threadpool_limits(1, user_api="blas"):
        for _, group in frame.groupby(list(GROUP_COLUMNS), sort=True):
            pos = group["_pos"].to_numpy()
            sims, near = max_similarity_to_earlier(
                vectors[pos], block_rows=block_rows, bars=bars[pos] if checked else None, sketches=sketches[pos] if checked else None,
                min_jaccard=np.asarray(min_jaccard)[pos] if per_row else min_jaccard,
                cut=cut[pos] if cut is not None else None, always=always[pos] if always is not None else None)
            ids = group["doc_id"].to_numpy(dtype=object)
            outs.append(pd.DataFrame({
                "doc_id": pd.Series(ids, dtype=object),
                "_part": group["_part"].to_numpy(dtype=np.int64),
                "source": pd.Series(group["source"].to_numpy(dtype=object), dtype=object),
                "cluster": group["cluster"].to_numpy(dtype=np.int64),
                "rank": np.arange(len(group), dtype=np.int64),
                "max_sim": sims,
                "nearest": pd.Series(np.where(near >= 0, ids[np.maximum(near, 0)], None), dtype=object),
                "lang": pd.Series(group["lang"].to_numpy(dtype=object), dtype=object),
            }))
    if not outs:
        return empty_similarity()
    return pd.concat(outs, ignore_index=True)[list(SIMILARITY_COLUMNS)]


def empty_similarity() -> pd.DataFrame:
    dtypes = {"_part": "int64", "cluster": "int64", "rank": "int64", "max_sim": "float32"}
    return pd.DataFrame({c: pd.Series(dtype=dtypes.get(c, object)) for c in SIMILARITY_COLUMNS})


def is_duplicate(max_sim: np.ndarray, eps: float | np.ndarray) -> np.ndarray:
    """The decision: ``max_sim > 1 - eps`` (``eps`` one value, or one per row).

    >>> is_duplicate(np.array([0.95, 0.9, -1.0]), 0.1).tolist()
    [True, False, False]
    >>> is_duplicate(np.array([0.95, 0.9]), np.array([0.01, 0.12])).tolist()
    [False, True]
    """
    e = np.asarray(eps, dtype=np.float64)
    if not ((e > 0.0) & (e <= 1.0)).all():
        raise ValueError(f"eps must be in (0, 1], not {eps}")
    return np.asarray(max_sim, dtype=np.float64) > 1.0 - e


def language_eps(langs: np.ndarray, eps: float, eps_by_language: dict[str, float] | None = None) -> np.ndarray:
    """ε per row: ``eps_by_language[lang]`` where given, else ``eps``.

    >>> language_eps(np.array(["en", "zh", None], dtype=object), 0.05, {"zh": 0.12}).tolist()
    [0.05, 0.12, 0.05]
    """
    out = np.full(len(langs), float(eps), dtype=np.float64)
    for lang, value in (eps_by_language or {}).items():
        out[np.asarray(langs, dtype=object) == lang] = float(value)
    return out


def check_bars(langs: np.ndarray, languages: Iterable[str], eps: float, eps_by_language: dict[str, float] | None = None) -> np.ndarray:
    """The cosine above which a row's pairs need the text check: ``1 - ε`` of its language for rows in
    ``languages``, NaN (no check) for the others.

    >>> check_bars(np.array(["en", "zh"], dtype=object), ["zh"], 0.05, {"zh": 0.12}).round(2).tolist()
    [nan, 0.88]
    """
    bars = 1.0 - language_eps(langs, eps, eps_by_language)
    return np.where(np.isin(np.asarray(langs, dtype=object), list(languages)), bars, np.nan)


def decide(sims: pd.DataFrame, eps: float, eps_by_language: dict[str, float] | None = None) -> pd.DataFrame:
    """Removal rows (``doc_id``, ``_part``, ``drop_reason``, ``drop_detail``) for the duplicates at ``eps``
    (``eps_by_language[lang]`` for the rows of those languages).

    ``sims`` must hold whole groups (the stage shuffles on the cluster). The detail names the kept
    document the duplicate leads to (``duplicate_of``: following ``nearest`` through removed members),
    the ``nearest`` earlier member, the cosine ``similarity`` to it, the ``cluster`` and the ``eps`` applied.
    """
    cols = ["doc_id", "_part", DROP_REASON, DROP_DETAIL]
    langs = sims["lang"].to_numpy(dtype=object) if "lang" in sims.columns else np.full(len(sims), None, dtype=object)
    row_eps = language_eps(langs, eps, eps_by_language)
    dup = is_duplicate(sims["max_sim"].to_numpy(), row_eps)
    if not dup.any():
        return pd.DataFrame({c: pd.Series(dtype="int64" if c == "_part" else object) for c in cols})
    ids = sims["doc_id"].to_numpy(dtype=object)
    parent = pd.Index(ids).get_indexer(sims["nearest"].to_numpy(dtype=object))
    own = np.arange(len(sims))
    parent = np.where(dup & (parent >= 0), parent, own)
    root = parent.copy()
    while True:  # pointer jumping: log(chain length) rounds to reach a kept member
        nxt = root[root]
        if np.array_equal(nxt, root):
            break
        root = nxt
    rows = sims.loc[dup]
    out = rows[["doc_id", "_part"]].reset_index(drop=True)
    out[DROP_REASON] = DropReason.SEMANTIC_DUPLICATE.value
    out[DROP_DETAIL] = [
        detail_json(duplicate_of=k, nearest=n, similarity=round(float(s), 4), cluster=int(c), eps=float(e))
        for k, n, s, c, e in zip(ids[root[dup]], rows["nearest"], rows["max_sim"], rows["cluster"], row_eps[dup], strict=True)
    ]
    return out[cols]


def eps_sweep(max_sim: np.ndarray, eps_values: Iterable[float]) -> dict[str, int]:
    """Documents that would be removed at each ε (keys formatted ``"0.05"``).

    >>> eps_sweep(np.array([0.99, 0.93, 0.5]), [0.01, 0.1])
    {'0.01': 0, '0.1': 2}
    """
    s = np.asarray(max_sim, dtype=np.float64)
    return {f"{e:g}": int(is_duplicate(s, e).sum()) for e in eps_values}


def sweep_counts(sims: pd.DataFrame, eps_values: Iterable[float]) -> pd.DataFrame:
    """Per source and language of a similarity frame: its document count and :func:`eps_sweep`
    (``source``, ``lang``, ``key``, ``count`` rows, ``lang`` "" where unknown; summed over
    partitions by :func:`fold_sweep`)."""
    rows = []
    langs = sims["lang"] if "lang" in sims.columns else pd.Series(None, index=sims.index, dtype=object)
    langs = langs.map(lambda x: x if isinstance(x, str) else "")
    for (source, lang), group in sims.groupby([sims["source"], langs], sort=True):
        rows.append((source, lang, "documents", len(group)))
        rows.extend((source, lang, key, count) for key, count in eps_sweep(group["max_sim"].to_numpy(), eps_values).items())
    return pd.DataFrame(rows, columns=list(SWEEP_COLUMNS)).astype({"source": object, "lang": object, "key": object, "count": "int64"})


SWEEP_COLUMNS = ("source", "lang", "key", "count")


def fold_sweep(counts: pd.DataFrame, own: Iterable[str] = ()) -> dict:
    """``{"pruned": documents, "by_source": {source: {documents, removed: {ε: n}, rate: {ε: share}}},
    "by_language": {lang: {source: …}}}``: the pages of the ``own`` languages (those with their own ε,
    ``eps_by_language``) are counted under ``by_language``, the others under ``by_source``, so each
    count is what setting that ε removes.

    >>> s = pd.DataFrame({"source": ["web", "web"], "lang": ["en", "zh"], "max_sim": [0.99, 0.99]})
    >>> f = fold_sweep(pd.concat([sweep_counts(s, [0.1]), sweep_counts(s, [0.1])]), own=["zh"])
    >>> f["by_source"]["web"], f["by_language"]["zh"]["web"]["removed"]
    ({'documents': 2, 'removed': {'0.1': 2}, 'rate': {'0.1': 1.0}}, {'0.1': 2})
    """
    own = set(own)
    by_source: dict[str, dict] = {}
    by_language: dict[str, dict[str, dict]] = {}
    if "lang" not in counts.columns:
        counts = counts.assign(lang="")
    totals = counts.groupby(["source", "lang", "key"], sort=True)["count"].sum()
    for (source, lang, key), value in totals.items():
        block = by_language.setdefault(lang, {}) if lang in own else by_source
        entry = block.setdefault(source, {"documents": 0, "removed": {}, "rate": {}})
        if key == "documents":
            entry["documents"] += int(value)
        else:
            entry["removed"][key] = entry["removed"].get(key, 0) + int(value)
    for entry in [*by_source.values(), *(e for block in by_language.values() for e in block.values())]:
        entry["rate"] = {e: round(c / max(entry["documents"], 1), 6) for e, c in entry["removed"].items()}
    pruned = sum(e["documents"] for e in by_source.values()) + sum(e["documents"] for b in by_language.values() for e in b.values())
    return {"pruned": pruned, "by_source": by_source, "by_language": dict(sorted(by_language.items()))}
