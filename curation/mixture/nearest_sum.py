"""The subset of many long documents whose tokens sum nearest a target: a bounded subset-sum.

When every document of a group is long next to the tokens its extra copies should hold (each over
0.5 % of them), the hashed greedy choice of :mod:`curation.mixture.replay` can miss by most of a
document: it takes the first document in hash order that fits, and what is left of the target is
then smaller than any document. A subset-sum over the sums the documents can reach, up to
``min(upper, 2 × target)`` (a larger sum is no nearer than none), finds the nearest subset
instead. The documents are added in the order given (the replay's hash order), and each sum keeps
the first document that reached it, so among subsets of the same sum the one ending earliest in
that order is chosen; among sums equally near, the lower one. The sums are counted in whole tokens
up to :data:`CELLS` of them; above it in steps of ``⌈bound / CELLS⌉`` tokens, each document's
size rounded up to a step so the chosen subset never passes ``upper``, and within a step per
document of the nearest (a few hundred documents of at least 0.5 % of the target: under 0.2 %
of it).

>>> nearest_sum(np.array([35376, 17348, 50095, 18813, 16586]), 36189, 10**9).tolist()  # 17,348 + 18,813 = 36,161
[False, True, False, True, False]
>>> nearest_sum(np.array([500, 700]), 100, 10**9).tolist()  # none: 0 is nearer than 500
[False, False]
"""

from __future__ import annotations

import numpy as np

#: The most sums the subset-sum counts one by one (about 1 MB of state): ~50 ms for 345 documents.
CELLS = 1 << 18


def nearest_sum(tokens: np.ndarray, target: float, upper: float) -> np.ndarray:
    """Mask of the subset of ``tokens`` (in the order given) whose sum is nearest ``target``
    without passing ``upper``."""
    tokens = np.asarray(tokens, dtype=np.int64)
    chosen = np.zeros(len(tokens), dtype=bool)
    bound = int(min(upper, 2 * target))
    if bound <= 0:
        return chosen
    step = -(-bound // CELLS)
    size = -(-tokens // step)  # rounded up: the subset's tokens stay within its cells × step
    cells = bound // step
    reach = np.zeros(cells + 1, dtype=bool)
    reach[0] = True
    first = np.full(cells + 1, -1, dtype=np.int64)  # the document that first reached each sum
    top = 0  # the highest sum reached so far
    for i, s in enumerate(size.tolist()):
        if s <= 0 or s > cells:
            continue
        hi = min(top + s, cells)
        new = np.flatnonzero(reach[: hi - s + 1] & ~reach[s : hi + 1]) + s
        first[new] = i
        reach[new] = True
        top = max(top, int(new[-1])) if len(new) else top
    sums = np.flatnonzero(reach)
    at = int(sums[np.argmin(np.abs(sums * step - target))])  # the first (lowest) among equally near
    while at > 0:
        i = int(first[at])
        chosen[i] = True
        at -= int(size[i])
    return chosen
