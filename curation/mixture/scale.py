"""``scale: auto``: the one scale of every phase's paper budget that the data supplies within the
epoch caps (:mod:`curation.mixture.plan` plans the phases at it).

>>> from curation.mixture.plan import GroupStat
>>> stats = {"web/high": GroupStat(1000, 4.0, 10), "web/medium": GroupStat(3000, 1.0, 30)}
>>> fit_scale([PhaseSpec("p1", tokens=7000, mix={"web": 1.0})], {"p1": stats}, {"*": 4.0})
1.0
"""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping

from curation.mixture.phases import PhaseSpec
from curation.mixture.plan import GroupStat, kind_of, lookup

log = logging.getLogger(__name__)


def _nominal(spec: PhaseSpec, groups: Mapping[str, GroupStat]) -> float:
    return sum(float(spec.mix.get(kind_of(g), 0.0)) * st.repeat * st.tokens for g, st in groups.items())


def fit_scale(
    specs: list[PhaseSpec],
    stats: Mapping[str, Mapping[str, GroupStat]],
    max_epochs: Mapping[str, float],
    fit_stages: tuple[str, ...] = ("pretrain",),
) -> float:
    """The largest scale at which no group of the phases of ``fit_stages`` needs more epochs than its cap.

    At scale ``s`` a group gets ``s × tokens_p / N_p × mix × r`` epochs in phase ``p``; pre-training
    caps bound the sum over the pre-training phases, mid-training caps each phase. A pre-training
    phase with a budget override takes its epochs (``budget / N_p × mix × r``, whatever the scale)
    out of the caps the others share; other phases with an override, or without data, do not
    constrain it, nor does a group capped at 0 (it gets no epochs at any scale). 0.0 when nothing constrains it.
    """
    per_unit: dict[tuple[str, str], float] = {}  # (scope, group) → epochs at scale 1
    fixed: dict[tuple[str, str], float] = {}  # ("pretrain", group) → epochs the budget overrides take
    for spec in (s for s in specs if s.stage == "pretrain" and s.budget is not None):
        groups = stats.get(spec.name, {})
        nominal = _nominal(spec, groups)
        for g, st in groups.items() if nominal > 0 else ():
            e = spec.budget.tokens / nominal * float(spec.mix.get(kind_of(g), 0.0)) * st.repeat
            fixed[("pretrain", g)] = fixed.get(("pretrain", g), 0.0) + e
    for spec in specs:
        if spec.stage not in fit_stages or spec.budget is not None or not spec.tokens:
            continue
        groups = stats.get(spec.name, {})
        nominal = _nominal(spec, groups)
        if nominal <= 0:
            continue
        scope = "pretrain" if spec.stage == "pretrain" else spec.name
        for g, st in groups.items():
            e = spec.tokens / nominal * float(spec.mix.get(kind_of(g), 0.0)) * st.repeat
            if e > 0 and st.tokens > 0 and lookup(max_epochs, g, math.inf) > 0:  # a cap of 0: no epochs at any scale
                per_unit[(scope, g)] = per_unit.get((scope, g), 0.0) + e
    limits = [max(lookup(max_epochs, g, math.inf) - fixed.get((scope, g), 0.0), 0.0) / e for (scope, g), e in per_unit.items()]
    finite = [x for x in limits if math.isfinite(x)]
    return min(finite) if finite else 0.0


def resolve_scale(
    scale: float | str,
    specs: list[PhaseSpec],
    stats: Mapping[str, Mapping[str, GroupStat]],
    max_epochs: Mapping[str, float],
    fit_stages: tuple[str, ...] = ("pretrain",),
) -> float:
    """``scale`` as a number: ``auto`` fits the largest the data supplies within the caps (:func:`fit_scale`).

    With no data in the ``fit_stages`` phases (e.g. only reasoning traces) it fits the phases that have some.
    """
    if scale != "auto":
        return float(scale)
    fitted, used = fit_scale(specs, stats, max_epochs, fit_stages), fit_stages
    if fitted <= 0:  # no data in the fit_stages phases: fit every phase that has some
        used = ("pretrain", "midtrain")
        fitted = fit_scale(specs, stats, max_epochs, used)
    if fitted <= 0 and any(s.budget is not None for s in specs):
        log.warning("mixture: scale auto is 0: the phases' own budgets take whole caps (max_epochs), so the other "
                    "phases plan nothing; lower those budgets, raise the caps or give mixture.scale a number")
    log.info("mixture: scale auto = %.6g (the budgets of %s as large as the data allows under max_epochs)",
             fitted, _fitted_phases(specs, stats, used, fit_stages))
    return fitted * (1.0 - 1e-9)  # the binding group lands on its cap, not a rounding error above it


def _fitted_phases(specs: list[PhaseSpec], stats: Mapping[str, Mapping[str, GroupStat]], used: tuple[str, ...],
                   asked: tuple[str, ...]) -> str:
    """The phases whose budgets ``scale: auto`` was fitted to (of the ``used`` stages, with data and
    no budget of their own), by name, and why where the stages are not ``mixture.scale_fit``'s.

    >>> specs = [PhaseSpec("p1", tokens=10, mix={"web": 1.0}), PhaseSpec("m1", stage="midtrain", tokens=5, mix={"reasoning": 1.0})]
    >>> _fitted_phases(specs, {"m1": {"reasoning/all": GroupStat(100, 1.0, 2)}}, ("pretrain", "midtrain"), ("pretrain",))
    "phases m1 (mixture.scale_fit's pretrain phases alone fit no scale above 0)"
    """
    names = [s.name for s in specs if s.stage in used and s.budget is None and s.tokens and _nominal(s, stats.get(s.name, {})) > 0]
    said = f"phases {', '.join(names)}" if names else "no phase (none has data)"
    if used == asked:
        return said
    return f"{said} (mixture.scale_fit's {'/'.join(asked)} phases alone fit no scale above 0)"
