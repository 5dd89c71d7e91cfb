"""The setting that meets a phase's plan for a group its epoch cap holds back: ``mixture.max_epochs``
with the group's own key (an exact key wins over a pattern, and the table is merged by group over the
recipe's, so the other caps stay) at the epochs the group wants, rounded up to two significant digits.

>>> cap_advice("long_docs/all", 0.06667, 0.0)
'raise its cap to meet the plan: mixture.max_epochs={long_docs/all: 0.067} (it wants 0.0667 epochs)'
>>> cap_advice("web/high", 1.5, 6.5)
'raise its cap to meet the plan: mixture.max_epochs={web/high: 8} (it wants 8 epochs over the pre-training phases so far)'
"""

from __future__ import annotations

import math


def round_up(value: float, digits: int = 2) -> float:
    """``value`` rounded up to ``digits`` significant digits (float error aside: 8.0 stays 8.0).

    >>> round_up(0.06667), round_up(8.0), round_up(3.141)
    (0.067, 8.0, 3.2)
    """
    if value <= 0:
        return 0.0
    shift = digits - 1 - math.floor(math.log10(value))
    return math.ceil(round(value * 10**shift, 9)) / 10**shift


def cap_advice(group: str, wanted: float, earlier: float) -> str:
    """What to set so that ``group`` gets the ``wanted`` epochs of this phase, after the ``earlier``
    epochs the pre-training phases before it want (0 for a mid-training phase, whose cap is its own)."""
    total = wanted + earlier
    over = " over the pre-training phases so far" if earlier > 0 else ""
    return (
        f"raise its cap to meet the plan: mixture.max_epochs={{{group}: {round_up(total):g}}} "
        f"(it wants {total:.3g} epochs{over})"
    )
