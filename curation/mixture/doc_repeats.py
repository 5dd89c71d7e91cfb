"""Documents of one group with different repeat factors (``language_repeat``): each is shown in proportion to its factor.

A group's plan gives it epochs ``e`` over its unique tokens ``T``, with the token-weighted mean
``r̄`` of its documents' factors as its repeat (``GroupStat.repeat``), so its planned tokens
``e × T`` are ``(e / r̄) × Σ r_d × T_d``. The replay spreads them over the documents by their
factors: a document of factor ``r_d`` gets ``e × r_d / r̄`` expected epochs, so with
``language_repeat: {zh: 2.0}`` a Chinese page of a group gets twice the copies of an English page of
the same group, and the group still replays its plan (``Σ_d e × r_d / r̄ × T_d = e × T``).

The documents with one factor (one class per distinct factor in a group: a language's, or the
table's alone) are replayed as a sub-group of their own (:func:`~curation.mixture.replay.shard_copies`)
with their epochs in every step of the group's :class:`~curation.mixture.replay.CopyPlan`, so a
later pre-training phase replays the earlier phases' choices the same way, and the cap holds per
class: the per-document cap ``⌈E⌉`` and the cap's token room are the class's. Where ``e × r_d / r̄``
would pass the cap, the class is held at the cap and the other classes share what it leaves, in
proportion to their factors (water-filling: :func:`spread`), so the group replays its plan within
the cap. A shard spreads its group's epochs over its own documents (``r̄`` of the shard's tokens): each
shard replays its share of the plan, and the shards of a group together replay ``e × r_d / r̄``. Built
documents (repository documents, issue threads, long-context documents) take their group's epochs.

>>> plan = CopyPlan(steps=(("p1", 1.5),), cap=4.0)
>>> copies_by_repeat(["a", "b", "c", "d"], np.full(4, 10), np.array([2.0, 2.0, 1.0, 1.0]), plan, seed=0).tolist()
[2, 2, 1, 1]
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from curation.mixture.replay import CopyPlan, shard_copies

#: Factors are compared at this many decimals (a language's factor read back from token sums).
DECIMALS = 9


def spread(epochs: float, cap: float, repeats: np.ndarray, tokens: np.ndarray) -> np.ndarray:
    """Epochs of each class of a group at ``epochs``: in proportion to the class's factor (``repeats``),
    none above ``cap``, and ``Σ epochs_c × tokens_c = epochs × Σ tokens`` where the cap allows.

    >>> spread(1.5, 4.0, np.array([2.0, 1.0]), np.array([100, 100])).tolist()
    [2.0, 1.0]
    >>> spread(3.5, 4.0, np.array([2.0, 1.0]), np.array([100, 100])).tolist()  # the first class held at its cap
    [4.0, 3.0]
    """
    r, t = np.asarray(repeats, dtype=np.float64), np.asarray(tokens, dtype=np.float64)
    total = float(t.sum())
    if total <= 0 or epochs <= 0:
        return np.full(len(r), max(float(epochs), 0.0))
    out = np.zeros(len(r))
    held = np.zeros(len(r), dtype=bool)
    while True:
        free = ~held
        weight = float((r * t)[free].sum())
        kept = cap * float(t[held].sum()) if held.any() else 0.0  # (no cap: inf × 0)
        level = max(epochs * total - kept, 0.0) / weight if weight > 0 else 0.0
        over = free & (level * r > cap)
        if not over.any():
            out[free] = level * r[free]
            out[held] = cap
            return out
        held |= over


def class_plans(plan: CopyPlan, repeats: np.ndarray, tokens: np.ndarray) -> tuple[np.ndarray, list[CopyPlan]]:
    """The class of each document (its index among the distinct factors) and each class's :class:`CopyPlan`:
    in every step, the epochs :func:`spread` gives the class over the steps so far, less those of the steps before."""
    values, cls = np.unique(np.round(np.asarray(repeats, dtype=np.float64), DECIMALS), return_inverse=True)
    class_tokens = np.bincount(cls, weights=np.asarray(tokens, dtype=np.float64), minlength=len(values))
    steps: list[list[tuple[str, float]]] = [[] for _ in values]
    so_far, before = 0.0, np.zeros(len(values))
    for phase, epochs in plan.steps:
        so_far += epochs
        now = spread(so_far, plan.cap, values, class_tokens)
        for c in range(len(values)):
            steps[c].append((phase, max(float(now[c] - before[c]), 0.0)))
        before = now
    return cls, [CopyPlan(tuple(s), plan.cap) for s in steps]


def copies_by_repeat(doc_ids: Sequence[str], tokens: np.ndarray, repeats: np.ndarray | None, plan: CopyPlan, seed: int) -> np.ndarray:
    """Copies of each document of a shard in its own phase, each class of factor replayed on its own
    (one factor, or none given: :func:`~curation.mixture.replay.shard_copies` of the whole shard)."""
    tokens = np.asarray(tokens, dtype=np.int64)
    if repeats is None or len(np.unique(np.round(np.asarray(repeats, dtype=np.float64), DECIMALS))) <= 1:
        return shard_copies(doc_ids, tokens, plan, seed)
    cls, plans = class_plans(plan, repeats, tokens)
    out = np.zeros(len(doc_ids), dtype=np.int64)
    for c, sub in enumerate(plans):
        idx = np.flatnonzero(cls == c)
        out[idx] = shard_copies([doc_ids[i] for i in idx], tokens[idx], sub, seed)
    return out


def language_epochs(agg: pd.DataFrame, copies: Mapping[tuple[str, str], CopyPlan]) -> dict[str, dict[str, dict[str, float]]]:
    """phase → group → language → the epochs the replay gives the language's documents, for the groups
    whose languages have different factors (the accounting sums: a language's factor is its
    repeat-weighted tokens over its tokens); the other groups' languages take the group's epochs."""
    out: dict[str, dict[str, dict[str, float]]] = {}
    live = agg[agg["documents"] > 0]
    for (phase, group), rows in live.groupby(["phase", "group"], sort=True):
        plan = copies.get((str(phase), str(group)))
        tokens = rows["tokens"].to_numpy(dtype=np.float64)
        if plan is None or not plan.steps or (tokens <= 0).any():
            continue
        repeats = rows["repeat_tokens"].to_numpy(dtype=np.float64) / tokens
        if len(np.unique(np.round(repeats, DECIMALS))) <= 1:
            continue
        cls, plans = class_plans(plan, repeats, tokens)
        out.setdefault(str(phase), {})[str(group)] = {str(lang): plans[c].epochs for lang, c in zip(rows["lang"], cls, strict=True)}
    return out

