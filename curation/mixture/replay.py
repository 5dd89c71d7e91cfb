"""How many times each document of a shard is shown: the plan's epochs as whole copies, replayed exactly.

A group's epochs ``e`` in a phase become ``⌊e⌋`` copies of every document plus one more copy
for a subset of the documents that holds the nearest to ``(e − ⌊e⌋) × T`` tokens. The subset is a
hashed, token-weighted choice: documents are taken in the order of a seeded hash of their id while
they fit under the target (so the choice does not depend on how the input was partitioned), then
one more document if it brings the total nearer — never "at least one each" (a 0.01-epoch group of
one long document is shown 0 times, not once). In a group where some documents are long (each
over 0.5 % of the target) and others short, the long ones are chosen for their share first and
the short ones fill the rest in hash order, so each kind gets about its share of copies (in hash
order alone, the back-fill after the first long document that does not fit goes to the short
ones; choosing longest first shows only the long ones); the plain hash order is kept where it
lands nearer, then the longest-first order. Where every document is long and neither lands within
0.5 % of the target, the subset nearest it is found by a bounded subset-sum
(:mod:`curation.mixture.nearest_sum`). A document over the target's room, or of twice the target or
more, is never chosen. A shard holds 10⁴–10⁵ documents at full scale, so its replay is within a few
tokens of its share of the plan; on a tiny sample it is within one document.

Caps bound the replay, not only the plan. Pre-training caps hold over the pre-training phases
together, and a group's documents land in the same shard in every pre-training phase (the shard
hash leaves the phase out), so each phase's shard task replays the earlier phases' choices on the
same documents and keeps their sum within the cap: no group's replayed epochs exceed its cap. The
cap holds per document too: a later phase gives its extra copies to the documents the earlier
phases showed least first (a whole tier of them while it fits, then a subset of the next tier, chosen
as above), and never takes a document over ``⌈E⌉`` copies, ``E`` the epochs of the phases so far
(the cap, where it binds and is whole). Where the least shown documents are a few long ones, the
phase replays what they allow rather than show a document once more.

>>> plan = CopyPlan(steps=(("p1", 2.5),), cap=4.0)
>>> shard_copies(["a", "b", "c", "d"], np.array([10, 10, 10, 10]), plan, seed=0).tolist()
[3, 2, 2, 3]
>>> shard_copies(["a"], np.array([500]), CopyPlan(steps=(("p", 0.01),)), seed=0).tolist()  # nearer to 5 tokens: none
[0]
>>> two = CopyPlan(steps=(("p1", 2.5), ("p2", 1.5)), cap=4.0)  # phase 2 after phase 1's choice, within the cap
>>> c1 = shard_copies(["a", "b", "c"], np.array([10, 20, 30]), CopyPlan(steps=(("p1", 2.5),), cap=4.0), seed=0)
>>> c2 = shard_copies(["a", "b", "c"], np.array([10, 20, 30]), two, seed=0)
>>> int(((c1 + c2) * [10, 20, 30]).sum()) <= 4 * 60, int((c1 + c2).max()) <= 4
(True, True)
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence

import numpy as np

from curation.mixture.groups import stable_hash
from curation.mixture.nearest_sum import nearest_sum
from curation.mixture.phases import PhaseSpec
from curation.mixture.plan import PhasePlan, lookup


@dataclasses.dataclass(frozen=True)
class CopyPlan:
    """The epochs a group gets in each phase of its cap's scope, up to and including the shard's
    own phase (the last step), and the cap over that scope (``inf`` for none)."""

    steps: tuple[tuple[str, float], ...]
    cap: float = math.inf

    @property
    def epochs(self) -> float:
        """The epochs of the shard's own phase."""
        return self.steps[-1][1] if self.steps else 0.0


def copy_plans(
    plans: Mapping[str, PhasePlan], specs: Sequence[PhaseSpec], max_epochs: Mapping[str, float]
) -> dict[tuple[str, str], CopyPlan]:
    """(phase, group) → its :class:`CopyPlan`: pre-training phases carry the epochs of the
    pre-training phases before them (their caps are shared); mid-training phases stand alone."""
    out: dict[tuple[str, str], CopyPlan] = {}
    before: dict[str, list[tuple[str, float]]] = {}
    for spec in specs:
        plan = plans.get(spec.name)
        if plan is None:
            continue
        for g in plan.groups:
            cap = lookup(max_epochs, g.group, math.inf)
            if spec.stage == "pretrain":
                steps = before.setdefault(g.group, [])
                steps.append((spec.name, g.epochs))
                out[(spec.name, g.group)] = CopyPlan(tuple(steps), cap)
            else:
                out[(spec.name, g.group)] = CopyPlan(((spec.name, g.epochs),), cap)
    return out


def shard_copies(doc_ids: Sequence[str], tokens: np.ndarray, plan: CopyPlan, seed: int) -> np.ndarray:
    """Copies of each document in the shard's own phase (the plan's last step)."""
    tokens = np.asarray(tokens, dtype=np.int64)
    total = int(tokens.sum())
    room = plan.cap * total if math.isfinite(plan.cap) else math.inf
    copies = np.zeros(len(doc_ids), dtype=np.int64)
    shown = np.zeros(len(doc_ids), dtype=np.int64)  # copies of each document in the steps before
    so_far = 0.0
    for phase, epochs in plan.steps:
        shown += copies
        so_far += epochs
        copies = phase_copies(doc_ids, tokens, epochs, room, seed, phase, shown, math.ceil(so_far - 1e-9))
        room -= int((copies * tokens).sum())
    return copies


def phase_copies(
    doc_ids: Sequence[str],
    tokens: np.ndarray,
    epochs: float,
    room: float,
    seed: int,
    phase: str,
    shown: np.ndarray | None = None,
    most: float = math.inf,
) -> np.ndarray:
    """Copies for ``epochs`` of the shard's tokens, at most ``room`` tokens in all. ``shown``: each
    document's copies in the earlier phases of the cap's scope; the extra copies go to the least shown
    first, a whole tier of them while it fits, and none takes a document's copies over ``most``.

    >>> phase_copies(["a", "b", "c", "d"], np.full(4, 10), 1.5, 60.0, 0, "p2", np.array([3, 2, 2, 3]), 4).tolist()
    [1, 2, 2, 1]
    """
    n = len(doc_ids)
    total = int(tokens.sum())
    if not n or epochs <= 0:
        return np.zeros(n, dtype=np.int64)
    if total == 0:
        return np.full(n, int(math.floor(epochs + 1e-9)), dtype=np.int64)
    target = min(epochs * total, max(room, 0.0))
    whole = int(math.floor(target / total + 1e-9))
    copies = np.full(n, whole, dtype=np.int64)
    rest, upper = target - whole * total, max(room, 0.0) - whole * total
    shown = np.zeros(n, dtype=np.int64) if shown is None else shown
    for level in np.unique(shown):  # the least shown first
        if rest <= 0.5 or level + whole + 1 > most:
            break
        tier = np.flatnonzero(shown == level)
        held = int(tokens[tier].sum())
        if held <= min(rest + 0.5, upper) and len(tier) < n:  # the whole tier: the least shown catch up
            copies[tier] += 1
            rest, upper = rest - held, upper - held
            continue
        copies[tier[extra_copies([doc_ids[i] for i in tier], tokens[tier], rest, upper, seed, phase)]] += 1
        break
    return copies


def extra_copies(
    doc_ids: Sequence[str], tokens: np.ndarray, rest: float, upper: float, seed: int, phase: str
) -> np.ndarray:
    """Mask of the documents that get one more copy: a subset holding the nearest to ``rest`` tokens,
    at most ``upper`` (``rest`` is below the documents' total)."""
    n = len(doc_ids)
    order = np.argsort(stable_hash([f"{seed}|{phase}|copies|{d}" for d in doc_ids]), kind="stable")
    # a document over ``upper`` cannot be chosen, and one of 2 × ``rest`` or more lands no nearer than
    # none: they leave the candidates before the count that picks the exact search
    order = order[(tokens[order] <= upper) & (tokens[order] < 2 * rest)]
    mask = np.zeros(n, dtype=bool)
    if len(order) <= EXACT_UP_TO:  # a handful of documents: the best subset, not a greedy one
        mask[order[best_subset(tokens[order], rest, upper)]] = True
        return mask
    total = int(tokens[order].sum())
    long = tokens[order] > CLOSE_ENOUGH * rest

    def longest_first() -> np.ndarray:
        longest = order[np.argsort(-tokens[order], kind="stable")]
        return longest[extra_choice(tokens[longest], rest, upper)]

    # the choices in turn, the first within CLOSE_ENOUGH kept, else the nearest: long documents among
    # short ones each kind for its share (in hash order alone the back-fill after the first long document
    # that does not fit goes to the short ones); the hash order; the longest first, which reaches a
    # fraction the hash order misses; where every document is long, the nearest subset-sum (both greedy
    # orders can leave a gap smaller than any document: one 35,376-token document of 345 for 36,189)
    tries = (
        [lambda: order[long_first(tokens[order], rest, upper, rest / total)]] if long.any() and not long.all() else []
    )
    tries += [lambda: order[extra_choice(tokens[order], rest, upper)], longest_first]
    tries += [lambda: order[nearest_sum(tokens[order], rest, upper)]] if long.all() else []
    chosen, miss = None, math.inf
    for choose in tries:
        pick = choose()
        if (off := abs(int(tokens[pick].sum()) - rest)) < miss:
            chosen, miss = pick, off
        if miss <= CLOSE_ENOUGH * rest:
            break
    mask[chosen] = True
    return mask


#: The hashed choice's distance to its target below which no other order is tried (a shard of a
#: real corpus holds ~10⁴ documents, and the hash order lands within a few tokens).
CLOSE_ENOUGH = 0.005
#: Up to this many documents in a shard, the extra copies go to the subset nearest the target
#: (all 2^n sums, in two halves of 2^(n/2)); above it the greedy choices are within a document.
EXACT_UP_TO = 20


def best_subset(tokens: np.ndarray, target: float, upper: float) -> np.ndarray:
    """Mask of the subset of ``tokens`` whose sum is nearest ``target`` without passing ``upper``
    (the first in the order given among equals).

    >>> best_subset(np.array([343, 390, 440, 44398, 53487]), 97527, 97885).tolist()
    [False, False, False, True, True]
    """
    n = len(tokens)
    half = n // 2

    def sums(part: np.ndarray) -> np.ndarray:
        bits = (np.arange(1 << len(part))[:, None] >> np.arange(len(part))) & 1
        return bits @ part.astype(np.int64)

    low, high = sums(tokens[:half]), sums(tokens[half:])
    total = low[:, None] + high[None, :]
    cost = np.where(total <= upper, np.abs(total - target), np.inf)
    i, j = np.unravel_index(int(np.argmin(cost)), cost.shape)
    if not np.isfinite(cost[i, j]):
        return np.zeros(n, dtype=bool)
    return np.concatenate([(i >> np.arange(half)) & 1, (j >> np.arange(n - half)) & 1]).astype(bool)


def long_first(tokens: np.ndarray, target: float, upper: float, fraction: float) -> np.ndarray:
    """Mask of the documents (in the order given) that get one more copy in a group of long and short
    documents: the long documents (each over :data:`CLOSE_ENOUGH` of ``target``, too
    coarse to land near it) are chosen for ``fraction`` of their tokens (the nearest subset of a
    few; of many, in the order given or, if that lands farther, longest first), then the short
    ones, in the order given, for what is left of ``target``. The short ones then get about their
    share of copies, where the longest-first order over the whole group shows only the long ones.

    >>> long_first(np.array([3, 900, 2, 4, 1000, 5, 3]), 1010, 2000, 0.5).tolist()  # 1000, then 3 + 2 + 4
    [True, False, True, True, True, False, False]
    """
    long = tokens > CLOSE_ENOUGH * target
    big, small = np.flatnonzero(long), np.flatnonzero(~long)
    orders = [big] if len(big) <= EXACT_UP_TO else [big, big[np.argsort(-tokens[big], kind="stable")]]
    best, miss = np.zeros(len(tokens), dtype=bool), math.inf
    for idx in orders:
        chosen = np.zeros(len(tokens), dtype=bool)
        pick = best_subset if len(idx) <= EXACT_UP_TO else extra_choice
        chosen[idx[pick(tokens[idx], fraction * int(tokens[idx].sum()), upper)]] = True
        got = int(tokens[chosen].sum())
        if len(small) and target > got:
            chosen[small[extra_choice(tokens[small], target - got, upper - got)]] = True
        if abs(int(tokens[chosen].sum()) - target) < miss:
            best, miss = chosen, abs(int(tokens[chosen].sum()) - target)
        if miss <= CLOSE_ENOUGH * target:
            break
    return best


def extra_choice(tokens: np.ndarray, target: float, upper: float) -> np.ndarray:
    """Mask of the documents (in the order given) that get one more copy: those that fit under
    ``target`` in order, then the one document that brings the sum nearest to ``target``
    without passing ``upper``, if it does.

    >>> extra_choice(np.array([5, 50, 3, 4]), 10, 100).tolist()  # 5 + 3 = 8, then 4 → 12 is no nearer
    [True, False, True, False]
    >>> extra_choice(np.array([5, 50, 3, 6]), 14, 100).tolist()  # 5 + 3 = 8, then 6 → 14
    [True, False, True, True]
    """
    chosen = np.zeros(len(tokens), dtype=bool)
    cum = np.cumsum(tokens)
    k = int(np.searchsorted(cum, target, side="right"))  # the first k fit
    chosen[:k] = True
    total = int(cum[k - 1]) if k else 0
    for i in range(k, len(tokens)):  # the gap left is below tokens[k]: only smaller documents can fill it
        t = int(tokens[i])
        if total + t <= target:
            chosen[i] = True
            total += t
            if total == target:
                break
    gap = target - total
    if gap > 0:
        free = np.flatnonzero(~chosen & (tokens <= upper - total) & (np.abs(tokens - gap) < gap))
        if len(free):
            chosen[free[np.argmin(np.abs(tokens[free] - gap))]] = True
    return chosen
