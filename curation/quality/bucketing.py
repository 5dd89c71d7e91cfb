"""Token-weighted percentile buckets, levels and actions (Nemotron-CC / GLM-4.5).

Per scorer, the thresholds are the token-weighted percentiles 5, 10, …, 95 of its scores over
the whole corpus: the first threshold is the score of the document holding the 5th percentile
of the corpus' *tokens*, and so on. A document's bucket under one scorer is the number of
thresholds at or below its score (0–19); its bucket is the max over scorers; buckets map to levels and levels to
actions (a repeat factor, 0 = discard). All of it is pure numpy on small inputs; the corpus is
summarised by mergeable :class:`QuantileSketch` objects (one per partition, merged in a tree).

>>> s = QuantileSketch.from_values(np.array([1.0, 2.0, 3.0, 4.0]), np.array([1, 1, 1, 97]))
>>> [float(t) for t in s.thresholds([50.0])]   # 97 % of the tokens are in the document scoring 4
[4.0]
>>> int(bucket_of(np.array([3.5]), s.thresholds(percentile_grid(20)))[0])
0
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence

import numpy as np

#: Nemotron-CC's mapping of the 20 buckets to 5 levels (Su et al. 2024; GLM-4.5 §2.2).
NEMOTRON_LEVELS: dict[str, tuple[int, int]] = {
    "high": (19, 19),
    "medium_high": (18, 18),
    "medium": (12, 17),
    "medium_low": (7, 11),
    "low": (0, 6),
}
LEVEL_ORDER: tuple[str, ...] = ("high", "medium_high", "medium", "medium_low", "low")


def percentile_grid(n_buckets: int = 20) -> np.ndarray:
    """The percentiles that cut ``n_buckets`` buckets: 5, 10, …, 95 for 20.

    >>> percentile_grid(4).tolist()
    [25.0, 50.0, 75.0]
    """
    if n_buckets < 2:
        raise ValueError("n_buckets must be at least 2")
    return np.arange(1, n_buckets, dtype=np.float64) * (100.0 / n_buckets)


@dataclasses.dataclass
class QuantileSketch:
    """A weighted quantile summary: sorted distinct values and the weight at each, mergeable.

    While a sketch holds at most ``capacity`` points it is exact. :meth:`compress` keeps
    ``capacity`` points, each standing for the weight of an interval of the sorted values, which
    moves any weighted rank by at most ``total / capacity``. Merging adds the errors of its inputs,
    so a tree of merges with one compression per level has a rank error of at most
    ``levels × total / capacity`` (:attr:`error` tracks this bound, as a fraction of the weight).

    >>> a = QuantileSketch.from_values(np.array([3.0, 1.0]), np.array([1.0, 1.0]))
    >>> b = QuantileSketch.from_values(np.array([2.0]), np.array([2.0]))
    >>> m = a.merge(b)
    >>> m.values.tolist(), m.weights.tolist(), m.total
    ([1.0, 2.0, 3.0], [1.0, 2.0, 1.0], 4.0)
    """

    values: np.ndarray
    weights: np.ndarray
    capacity: int = 4096
    error: float = 0.0

    @classmethod
    def from_values(cls, values: np.ndarray, weights: np.ndarray | None = None, capacity: int = 4096) -> QuantileSketch:
        """Sketch of ``values`` (NaN ignored) with ``weights`` (default 1 each), compressed to ``capacity``."""
        v = np.asarray(values, dtype=np.float64)
        w = np.ones_like(v) if weights is None else np.asarray(weights, dtype=np.float64)
        ok = ~np.isnan(v) & (w > 0)
        v, w = v[ok], w[ok]
        uniq, inverse = np.unique(v, return_inverse=True)
        sums = np.bincount(inverse, weights=w, minlength=len(uniq)) if len(uniq) else np.zeros(0)
        return cls(uniq, sums.astype(np.float64), capacity).compress()

    @classmethod
    def empty(cls, capacity: int = 4096) -> QuantileSketch:
        return cls(np.zeros(0), np.zeros(0), capacity)

    @property
    def total(self) -> float:
        return float(self.weights.sum())

    def merge(self, other: QuantileSketch) -> QuantileSketch:
        """Union of two sketches (compressed again if it holds more than ``capacity`` points)."""
        v = np.concatenate([self.values, other.values])
        w = np.concatenate([self.weights, other.weights])
        uniq, inverse = np.unique(v, return_inverse=True)
        sums = np.bincount(inverse, weights=w, minlength=len(uniq)) if len(uniq) else np.zeros(0)
        cap = max(self.capacity, other.capacity)
        tot = self.total + other.total
        err = (self.error * self.total + other.error * other.total) / tot if tot > 0 else 0.0
        return QuantileSketch(uniq, sums, cap, err).compress()

    def compress(self) -> QuantileSketch:
        """Keep at most ``capacity`` points: each keeps the weight of the values since the previous one."""
        if len(self.values) <= self.capacity:
            return self
        cum = np.cumsum(self.weights)
        total = cum[-1]
        # the last value at or below each of `capacity` equally spaced weighted ranks
        targets = total * np.arange(1, self.capacity + 1) / self.capacity
        idx = np.unique(np.minimum(np.searchsorted(cum, targets, side="left"), len(cum) - 1))
        new_w = np.diff(np.concatenate([[0.0], cum[idx]]))
        return QuantileSketch(self.values[idx], new_w, self.capacity, self.error + 1.0 / self.capacity)

    def thresholds(self, percentiles: Sequence[float] | np.ndarray) -> np.ndarray:
        """Smallest value whose cumulative weight reaches each percentile (NaN if the sketch is empty)."""
        p = np.asarray(percentiles, dtype=np.float64)
        if len(self.values) == 0:
            return np.full(len(p), np.nan)
        cum = np.cumsum(self.weights)
        idx = np.searchsorted(cum, cum[-1] * p / 100.0 * (1 - 1e-12), side="left")
        return self.values[np.minimum(idx, len(self.values) - 1)]

    def cdf(self, scores: np.ndarray) -> np.ndarray:
        """Weighted mid-rank of each score in [0, 1]: weight below + half the weight equal, over the total."""
        s = np.asarray(scores, dtype=np.float64)
        out = np.full(len(s), np.nan)
        if len(self.values) == 0:
            return out
        cum = np.concatenate([[0.0], np.cumsum(self.weights)])
        lo = np.searchsorted(self.values, s, side="left")
        hi = np.searchsorted(self.values, s, side="right")
        ok = ~np.isnan(s)
        out[ok] = (cum[lo[ok]] + 0.5 * (cum[hi[ok]] - cum[lo[ok]])) / cum[-1]
        return out

    def to_dict(self) -> dict[str, object]:
        return {"values": self.values.tolist(), "weights": self.weights.tolist(), "capacity": self.capacity,
                "error": self.error}

    @classmethod
    def from_dict(cls, d: Mapping[str, object]) -> QuantileSketch:
        return cls(np.asarray(d["values"], dtype=np.float64), np.asarray(d["weights"], dtype=np.float64),
                   int(d.get("capacity", 4096)), float(d.get("error", 0.0)))  # type: ignore[arg-type]


def merge_all(sketches: Iterable[QuantileSketch], capacity: int = 4096) -> QuantileSketch:
    """Merge many sketches (left to right; Dask merges partitions in a tree instead)."""
    out = QuantileSketch.empty(capacity)
    for s in sketches:
        out = out.merge(s)
    return out


def bucket_of(scores: np.ndarray, thresholds: np.ndarray) -> np.ndarray:
    """Number of thresholds at or below each score (0 … len(thresholds)); NaN scores → 0.

    A threshold is the score of the document that holds the percentile's token, so that document
    (and any tied with it) goes to the upper bucket: one long page at the top of a small corpus
    fills the top bucket instead of leaving it empty.

    >>> bucket_of(np.array([0.0, 1.0, 1.5, 9.0, np.nan]), np.array([1.0, 2.0])).tolist()
    [0, 1, 1, 2, 0]
    """
    s = np.asarray(scores, dtype=np.float64)
    t = np.asarray(thresholds, dtype=np.float64)
    if len(t) == 0 or np.isnan(t).all():
        return np.zeros(len(s), dtype=np.int64)
    out = np.searchsorted(t, s, side="right").astype(np.int64)
    out[np.isnan(s)] = 0
    return out


def max_bucket(per_scorer: Mapping[str, np.ndarray]) -> np.ndarray:
    """The bucket of each document: the max over scorers (Nemotron-CC ensemble rule).

    >>> max_bucket({"a": np.array([3, 19]), "b": np.array([7, 0])}).tolist()
    [7, 19]
    """
    arrays = [np.asarray(a, dtype=np.int64) for a in per_scorer.values()]
    if not arrays:
        raise ValueError("no scorer buckets to combine")
    return np.max(np.stack(arrays), axis=0)


def validate_levels(levels: Mapping[str, Sequence[int]], n_buckets: int = 20) -> dict[str, tuple[int, int]]:
    """Check a level → [lo, hi] bucket mapping covers 0 … n_buckets-1 exactly once; return it as tuples."""
    out: dict[str, tuple[int, int]] = {}
    owner: dict[int, str] = {}
    for name, rng in levels.items():
        if len(rng) != 2:
            raise ValueError(f"level {name!r}: give [lowest bucket, highest bucket], not {list(rng)}")
        lo, hi = int(rng[0]), int(rng[1])
        if not 0 <= lo <= hi < n_buckets:
            raise ValueError(f"level {name!r}: bucket range [{lo}, {hi}] must lie within 0 … {n_buckets - 1}")
        for b in range(lo, hi + 1):
            if b in owner:
                raise ValueError(f"bucket {b} is in both {owner[b]!r} and {name!r}")
            owner[b] = name
        out[str(name)] = (lo, hi)
    missing = [b for b in range(n_buckets) if b not in owner]
    if missing:
        raise ValueError(f"buckets {missing} belong to no level; every bucket 0 … {n_buckets - 1} needs one")
    return out


def level_of(buckets: np.ndarray, levels: Mapping[str, Sequence[int]], n_buckets: int = 20) -> np.ndarray:
    """The level name of each bucket (object array).

    >>> level_of(np.array([19, 18, 12, 11, 0]), NEMOTRON_LEVELS).tolist()
    ['high', 'medium_high', 'medium', 'medium_low', 'low']
    """
    table = np.empty(n_buckets, dtype=object)
    for name, (lo, hi) in validate_levels(levels, n_buckets).items():
        table[lo : hi + 1] = name
    return table[np.clip(np.asarray(buckets, dtype=np.int64), 0, n_buckets - 1)]


def repeat_of(level_names: np.ndarray, repeat: Mapping[str, float]) -> np.ndarray:
    """The action of each level as a repeat factor (0 = discard).

    >>> repeat_of(np.array(["high", "low"], dtype=object), {"high": 4.0, "low": 0.0}).tolist()
    [4.0, 0.0]
    """
    try:
        return np.array([float(repeat[str(n)]) for n in level_names], dtype=np.float64)
    except KeyError as exc:
        raise ValueError(f"level {exc.args[0]!r} has no repeat factor; give one for every level") from exc


def token_weights(n_tokens: np.ndarray) -> np.ndarray:
    """Weights for percentiles: each document's tokens (at least 1, so empty documents still count)."""
    w = np.asarray(n_tokens, dtype=np.float64)
    return np.where(np.isnan(w) | (w < 1), 1.0, w)


def combined_rank(scores: Mapping[str, np.ndarray], sketches: Mapping[str, QuantileSketch], how: str = "mean") -> np.ndarray:
    """Each document's token-weighted mid-rank (0–1) under every scorer, combined (``mean`` or ``max``).

    >>> sk = {"a": QuantileSketch.from_values(np.array([1.0, 2.0])), "b": QuantileSketch.from_values(np.array([5.0, 3.0]))}
    >>> combined_rank({"a": np.array([1.0, 2.0]), "b": np.array([5.0, 3.0])}, sk).tolist()
    [0.5, 0.5]
    """
    ranks = np.stack([sketches[k].cdf(scores[k]) for k in scores])
    # A scorer that does not apply to a document (NaN score, e.g. an English-only model on a Chinese
    # page) is left out of its combination; a document no scorer applies to ranks 0.
    missing = np.isnan(ranks)
    if how == "mean":
        n = (~missing).sum(axis=0)
        return np.where(n > 0, np.nan_to_num(ranks, nan=0.0).sum(axis=0) / np.maximum(n, 1), 0.0)
    if how == "max":
        return np.nan_to_num(ranks, nan=0.0).max(axis=0)
    raise ValueError(f"combine must be max or mean, not {how!r}")


@dataclasses.dataclass(frozen=True)
class Decision:
    """Per document: bucket per scorer, combined bucket, level, repeat factor, percentile."""

    buckets: dict[str, np.ndarray]
    bucket: np.ndarray
    level: np.ndarray
    repeat: np.ndarray
    percentile: np.ndarray


def decide(
    scores: Mapping[str, np.ndarray],
    thresholds: Mapping[str, np.ndarray],
    levels: Mapping[str, Sequence[int]] = NEMOTRON_LEVELS,
    repeat: Mapping[str, float] | None = None,
    combine: str = "max",
    sketches: Mapping[str, QuantileSketch] | None = None,
    combined_thresholds: np.ndarray | None = None,
) -> Decision:
    """Scores → buckets → level → repeat factor, the whole decision step for a batch of documents.

    ``combine``: ``max`` — the bucket is the max over scorers of each scorer's bucket (Nemotron-CC,
    GLM-4.5); ``mean`` — the mean over scorers of each score's token-weighted rank, bucketed at
    ``combined_thresholds`` (the token-weighted percentiles of that mean over the corpus, so every
    bucket again holds 5 % of the tokens). ``percentile`` (0–100) is the combined rank, a continuous
    form of the bucket (NaN without ``sketches``).

    >>> d = decide({"s": np.array([0.12, 0.87])}, {"s": np.linspace(0.05, 0.95, 19)},
    ...            repeat={"high": 4.0, "medium_high": 2.0, "medium": 1.0, "medium_low": 0.5, "low": 0.0})
    >>> d.bucket.tolist(), d.level.tolist(), d.repeat.tolist()
    ([2, 17], ['low', 'medium'], [0.0, 1.0])
    """
    n_buckets = len(next(iter(thresholds.values()))) + 1 if thresholds else 20
    per = {name: bucket_of(scores[name], thresholds[name]) for name in scores}
    n = len(next(iter(per.values()))) if per else 0
    pct = combined_rank(scores, sketches, combine) if sketches else np.full(n, np.nan)
    if combine == "max":
        bucket = max_bucket(per)
    elif combine == "mean":
        if combined_thresholds is None or not sketches:
            raise ValueError("combine: mean needs the scorers' sketches and the thresholds of their mean rank")
        bucket = bucket_of(pct, combined_thresholds)
    else:
        raise ValueError(f"combine must be max or mean, not {combine!r}")
    lvl = level_of(bucket, levels, n_buckets)
    rep = repeat_of(lvl, repeat) if repeat is not None else np.ones(len(bucket))
    return Decision(per, bucket, lvl, rep, pct * 100.0)


#: The group of documents whose language has too few documents for buckets of its own (the stage
#: buckets them against the whole corpus).
OTHER_LANGS = "*"


def language_groups(langs: Sequence[str | None] | np.ndarray, own: Iterable[str]) -> np.ndarray:
    """Each document's percentile group: its language if that language has its own buckets, else ``*``.

    >>> language_groups(["en", "zh", "fr", None], {"en", "zh"}).tolist()
    ['en', 'zh', '*', '*']
    """
    own = set(own)
    return np.array([lang if lang in own else OTHER_LANGS for lang in langs], dtype=object)


def own_languages(docs_per_lang: Mapping[str, int], min_docs: int) -> list[str]:
    """Languages with at least ``min_docs`` documents: each gets its own 20 buckets (sorted).

    >>> own_languages({"en": 500, "zh": 120, "fr": 3, "und": 400}, 100)
    ['en', 'zh']
    """
    return sorted(lang for lang, n in docs_per_lang.items() if n >= min_docs and lang not in ("und", OTHER_LANGS))


def decide_by_group(
    groups: np.ndarray,
    scores: Mapping[str, np.ndarray],
    thresholds: Mapping[str, Mapping[str, np.ndarray]],
    levels: Mapping[str, Sequence[int]] = NEMOTRON_LEVELS,
    repeat: Mapping[str, float] | None = None,
    combine: str = "max",
    sketches: Mapping[str, Mapping[str, QuantileSketch]] | None = None,
    combined_thresholds: Mapping[str, np.ndarray | None] | None = None,
) -> Decision:
    """:func:`decide` within each percentile group (language): thresholds, sketches and combined
    thresholds are keyed by group, so each language is bucketed against its own documents.

    >>> th = {"en": {"s": np.array([0.5])}, "zh": {"s": np.array([0.1])}}
    >>> d = decide_by_group(np.array(["en", "zh"]), {"s": np.array([0.3, 0.3])}, th, {"low": [0, 0], "high": [1, 1]})
    >>> d.level.tolist()
    ['low', 'high']
    """
    groups = np.asarray(groups, dtype=object)
    n = len(groups)
    names = list(scores)
    buckets = {k: np.zeros(n, dtype=np.int64) for k in names}
    bucket = np.zeros(n, dtype=np.int64)
    level = np.empty(n, dtype=object)
    rep = np.ones(n, dtype=np.float64)
    pct = np.full(n, np.nan)
    for g in sorted(set(groups.tolist())):
        idx = np.flatnonzero(groups == g)
        d = decide({k: np.asarray(scores[k])[idx] for k in names}, thresholds[g], levels, repeat, combine,
                   sketches[g] if sketches else None, combined_thresholds.get(g) if combined_thresholds else None)
        for k in names:
            buckets[k][idx] = d.buckets[k]
        bucket[idx], level[idx], rep[idx], pct[idx] = d.bucket, d.level, d.repeat, d.percentile
    return Decision(buckets, bucket, level, rep, pct)
