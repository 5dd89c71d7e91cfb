"""Token-weighted percentiles of a corpus' scores, from mergeable sketches (one per partition).

Per scorer, the thresholds are the token-weighted percentiles 5, 10, …, 95 of its scores over
the whole corpus: the first threshold is the score of the document holding the 5th percentile
of the corpus' *tokens*, and so on. The corpus is summarised by :class:`QuantileSketch` objects
(one per partition, merged in a tree); :mod:`curation.quality.bucketing` turns scores and
thresholds into buckets, levels and actions.

>>> s = QuantileSketch.from_values(np.array([1.0, 2.0, 3.0, 4.0]), np.array([1, 1, 1, 97]))
>>> [float(t) for t in s.thresholds([50.0])]   # 97 % of the tokens are in the document scoring 4
[4.0]
>>> s.thresholds(percentile_grid(4)).tolist()
[4.0, 4.0, 4.0]
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence

import numpy as np


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
