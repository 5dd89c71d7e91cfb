"""The replay check of a phase's manifest groups: a group whose shards replay more than 2 % off its
planned tokens and more than one of its documents (whole copies of few or long documents cannot reach
a fractional epoch), and what to change for it.

>>> g = [{"name": "a/b", "planned_tokens": 100, "replay_tokens": 50}]
>>> [w["check"] for w in check_replay("p", g, 1000)]
['replay']
"""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping
from typing import Any

from curation.mixture.checks import _first_five

log = logging.getLogger(__name__)


def check_replay(
    phase: str,
    groups: list[Mapping[str, Any]],
    planned: int,
    tolerance: float = 0.02,
    stage: str = "pretrain",
    sizes: Mapping[str, tuple[int, int]] | None = None,
    budget: int | None = None,
    own_budget: bool = False,
) -> list[dict[str, Any]]:
    """Warnings for the groups of ``phase`` (manifest entries) whose replay is off the plan by more than
    ``tolerance`` of it and by more than one of the group's documents (their mean size) or ``tolerance``
    of the phase, the smaller: whole copies are within about a document of any plan, so a group of a few
    tokens a little off is no finding, while one whose documents are long against the phase is.

    ``sizes`` is group → (documents, tokens) of the group in the plan, every document whether its shards
    show it or not (materialized shards hold only the shown ones); without it, the entry's unique figures.
    ``budget`` is the phase's budget (default ``planned``); ``own_budget``: the recipe gives the phase
    a budget of its own (``phases.<phase>.budget``), which ``mixture.scale`` does not move.

    The advice names the knob that works for the phase's ``stage``: a pre-training phase's budget
    follows ``mixture.scale``; a mid-training phase has its own (``phases.<phase>.budget``, which leaves
    the pre-training plan as it is), and the warning gives a budget at least the current one at which
    one document of mean size of each short group is within ``tolerance`` of its plan; for a group that
    replays more than its plan, the budget at which its plan is what it replays.

    >>> g = [{"name": "a/b", "planned_tokens": 100, "replay_tokens": 50}, {"name": "c/d", "planned_tokens": 900, "replay_tokens": 900}]
    >>> [w["check"] for w in check_replay("p", g, 1000)]
    ['replay']
    >>> check_replay("p", [{"name": "a/all", "planned_tokens": 1, "replay_tokens": 2, "unique_tokens": 4, "unique_documents": 2}], 1000)
    []
    """

    def mean_doc(g: Mapping[str, Any]) -> float:
        docs, tokens = (sizes or {}).get(g["name"], (g.get("unique_documents", 0), g.get("unique_tokens", 0)))
        return tokens / docs if docs else 0.0

    off = [
        g
        for g in groups
        if abs(g["replay_tokens"] - g["planned_tokens"])
        > max(tolerance * g["planned_tokens"], min(mean_doc(g), tolerance * planned))
    ]
    if not off:
        return []
    replay = sum(g["replay_tokens"] for g in groups)
    off.sort(key=lambda g: -abs(g["replay_tokens"] - g["planned_tokens"]))
    listed = _first_five(
        [f"{g['name']} planned {g['planned_tokens']:,}, replayed {g['replay_tokens']:,}" for g in off], "; "
    )
    advice = _replay_advice(
        phase, off, planned, stage, mean_doc, tolerance, planned if budget is None else budget, own_budget
    )
    w = {
        "check": "replay",
        "phase": phase,
        "value": round(replay / planned, 6) if planned else 0.0,
        "limit": tolerance,
        "groups": [
            {"group": g["name"], "planned_tokens": g["planned_tokens"], "replay_tokens": g["replay_tokens"]}
            for g in off
        ],
        "message": (
            f"phase {phase}: {len(off)} group(s) replay more than {tolerance:.0%} off their plan ({listed}); "
            f"the phase replays {replay:,} of {planned:,} planned tokens: whole copies of these groups' documents "
            f"cannot reach a fractional epoch (too few or too long documents): {advice}"
        ),
    }
    log.warning("mixture: %s", w["message"])
    return [w]


def _replay_advice(
    phase: str,
    off: list[Mapping[str, Any]],
    planned: int,
    stage: str,
    mean_doc: Any,
    tolerance: float,
    budget: int,
    own_budget: bool = False,
) -> str:
    """What to change for a phase whose groups replay off their plan (:func:`check_replay`): for a
    mid-training phase, a budget of its own at least ``budget`` (a group's plan grows with the budget)."""
    if stage != "midtrain":
        return f"add data or raise {f'phases.{phase}.budget' if own_budget else 'mixture.scale'}"
    short = [
        budget * mean_doc(g) / (tolerance * g["planned_tokens"])
        for g in off
        if g["planned_tokens"] and g["replay_tokens"] < g["planned_tokens"] and mean_doc(g)
    ]
    over = [
        budget * g["replay_tokens"] / g["planned_tokens"]
        for g in off
        if g["planned_tokens"] and g["replay_tokens"] > g["planned_tokens"]
    ]
    setting = f"phases.{phase}.budget"
    tail = " (mixture.scale also scales the pre-training phases)"
    if short:
        tokens = max(budget, math.ceil(max(short) / 1000) * 1000)
        return (
            f"raise this mid-training phase's own budget to {setting}={{tokens: {tokens}}} (at which one document of "
            f"mean size of each group short of its plan is within {tolerance:.0%} of that plan), or add data{tail}"
        )
    if over:
        tokens = max(budget, math.ceil(max(over) / 1000) * 1000)
        return (
            f"the documents' whole copies give more than the plan: raise this mid-training phase's own budget to "
            f"{setting}={{tokens: {tokens}}} (at which the plan is what they replay), or accept it{tail}"
        )
    return f"add data of these groups or set this mid-training phase's own budget ({setting}){tail}"
