"""Token-weighted percentile buckets, levels and actions (Nemotron-CC / GLM-4.5).

A document's bucket under one scorer is the number of thresholds (the corpus' token-weighted
percentiles 5, 10, …, 95 of that scorer, from :mod:`curation.quality.sketch`) at or below its
score (0–19); its bucket is the max over scorers; buckets map to levels and levels to actions (a
repeat factor, 0 = discard). All of it is pure numpy on small inputs.

>>> int(bucket_of(np.array([3.5]), np.array([4.0] * 19))[0])
0
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence

import numpy as np

from curation.quality.sketch import QuantileSketch, combined_rank

#: Nemotron-CC's mapping of the 20 buckets to 5 levels (Su et al. 2024; GLM-4.5 §2.2).
NEMOTRON_LEVELS: dict[str, tuple[int, int]] = {
    "high": (19, 19),
    "medium_high": (18, 18),
    "medium": (12, 17),
    "medium_low": (7, 11),
    "low": (0, 6),
}
LEVEL_ORDER: tuple[str, ...] = ("high", "medium_high", "medium", "medium_low", "low")


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


def scaled_levels(n_buckets: int) -> dict[str, list[int]]:
    """The Nemotron-CC levels for ``n_buckets`` buckets: the top bucket high, the next medium_high, the rest
    split at the same fractions as 7 and 12 of 20 (an example to start from; too few buckets: two levels).

    >>> scaled_levels(10)
    {'high': [9, 9], 'medium_high': [8, 8], 'medium': [6, 7], 'medium_low': [4, 5], 'low': [0, 3]}
    """
    if n_buckets < 5:
        return {"high": [n_buckets - 1, n_buckets - 1], "low": [0, n_buckets - 2]}
    top = n_buckets - 2  # buckets below medium_high
    medium = min(max(int(n_buckets * 12 / 20 + 0.5), 2), top - 1)
    medium_low = min(max(int(n_buckets * 7 / 20 + 0.5), 1), medium - 1)
    return {"high": [n_buckets - 1, n_buckets - 1], "medium_high": [top, top], "medium": [medium, top - 1],
            "medium_low": [medium_low, medium - 1], "low": [0, medium_low - 1]}


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
#: ranks them among themselves when they are enough together, else against the whole corpus).
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
