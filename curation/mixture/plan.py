"""Mixture planning: phase budgets in the paper's tokens × one scale, repeat factors and caps → weights and epochs.

A *group* is ``<kind>/<sub>`` (see :mod:`curation.mixture.groups` for the policy that puts each
document in exactly one). Each group makes ``T`` unique tokens available and has a repeat factor
``r`` from the mixture's one repeat table. A phase's ``mix`` multiplies it per kind, so the group's
*nominal* epochs in the phase are ``mix[kind] × r``, and the phase's *nominal* size is
``N = Σ mix × r × T``. A phase's budget is its GLM-4.5 token count (15T, 7T, 500B, 500B, 100B)
times one ``scale`` shared by all phases, so the phases keep the paper's proportions whatever the
data; ``scale: auto`` is the largest scale at which no group of the fitted phases needs more
epochs than its cap (:mod:`curation.mixture.scale`). Inside a phase every group gets ``σ = B / N`` times its nominal epochs.
Epochs above a group's cap are clamped and the missing tokens are reported as a *shortfall* of
that group (or, with ``on_cap: redistribute``, moved to the groups under their caps).
Pre-training caps hold over all pre-training phases together (planned in order).

>>> stats = {"web/high": GroupStat(1000, 4.0, 10), "web/medium": GroupStat(3000, 1.0, 30)}
>>> spec = PhaseSpec("p1", tokens=7000, mix={"web": 1.0})
>>> plan = plan_phase(spec, stats, caps={"web/high": 4.0, "web/medium": 4.0})
>>> [(g.group, g.epochs, round(g.weight, 3)) for g in plan.groups]
[('web/high', 4.0, 0.571), ('web/medium', 1.0, 0.429)]
>>> plan_phase(spec, stats, caps={"*": 4.0}, scale=2.0).shortfalls
[{'group': 'web/high', 'reason': 'epoch_cap', 'tokens': 4000, 'cap': 4.0, 'wanted_epochs': 8.0}]
"""

from __future__ import annotations

import dataclasses
import fnmatch
import logging
import math
from collections.abc import Mapping
from typing import Any

from curation.mixture.cap_advice import cap_advice
from curation.mixture.phases import PhaseSpec

log = logging.getLogger(__name__)

ON_CAP = ("shortfall", "redistribute")
BUDGET_TOLERANCE = 0.01


@dataclasses.dataclass(frozen=True)
class GroupStat:
    """What the planner needs of a group: unique tokens, repeat factor, documents."""

    tokens: int
    repeat: float
    documents: int = 0
    max_doc_tokens: int = 0  #: the group's largest document (one document's share of a phase is checked)
    max_doc: str = ""  #: its id


@dataclasses.dataclass
class GroupPlan:
    group: str
    kind: str
    tokens: int  #: unique tokens available
    documents: int
    repeat: float
    mix: float
    nominal_epochs: float  #: mix × repeat
    cap: float
    epochs: float = 0.0
    planned_tokens: int = 0
    weight: float = 0.0
    shortfall_tokens: int = 0
    max_doc_tokens: int = 0  #: the group's largest document
    max_doc: str = ""  #: its id

    @property
    def capped_out(self) -> bool:
        """In the phase's mix, with data, and no cap left: the earlier phases (or a cap of 0) took it all."""
        return self.nominal_epochs > 0 and self.tokens > 0 and self.cap <= 1e-9

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@dataclasses.dataclass
class PhasePlan:
    name: str
    budget_tokens: int
    nominal_tokens: int
    unique_tokens: int
    planned_tokens: int
    scale: float
    groups: list[GroupPlan]
    shortfalls: list[dict[str, Any]]
    redistributed: bool = False
    recipe_scale: float = 1.0  #: the scale shared by all phases (budget = recipe_scale × the phase's tokens)

    @property
    def budget_met(self) -> bool:
        """Planned within tolerance of the budget, and the phase has data of its mix (a budget of 0 is not met
        when it is 0 because nothing of the phase's kinds reached the mixture)."""
        if any(s["reason"] == "no_data" for s in self.shortfalls):
            return False
        return abs(self.planned_tokens - self.budget_tokens) <= BUDGET_TOLERANCE * max(self.budget_tokens, 1)

    def group(self, name: str) -> GroupPlan:
        return next(g for g in self.groups if g.group == name)


#: a group wanted within this fraction of its cap is at its cap: ``scale: auto`` pins the capped group's
#: epochs to the cap up to float error (it was a shortfall of 1 token, "raise its cap", in a met phase)
_SLACK = 1e-5


def kind_of(group: str) -> str:
    return group.split("/", 1)[0]


def lookup(table: Mapping[str, float], group: str, default: float) -> float:
    """The value for ``group`` in a pattern table: exact key, else the longest matching glob, else ``default``.

    >>> lookup({"*": 4.0, "web/*": 5.0, "web/high": 6.0}, "web/medium", 1.0)
    5.0
    """
    if group in table:
        return float(table[group])
    hits = [k for k in table if any(c in k for c in "*?[") and fnmatch.fnmatchcase(group, k)]
    if not hits:
        return default
    return float(table[max(hits, key=lambda k: (len(k.replace("*", "")), k))])


def plan_phase(
    spec: PhaseSpec,
    stats: Mapping[str, GroupStat],
    caps: Mapping[str, float],
    on_cap: str = "shortfall",
    scale: float = 1.0,
    why_empty: str = "",
    earlier: Mapping[str, float] | None = None,
) -> PhasePlan:
    """Epochs and weights of ``spec``'s groups from their stats at ``scale``, within ``caps`` (epochs left);
    ``why_empty``: what the recipe does that leaves the phase without documents, said if it has none;
    ``earlier``: the epochs of each group the pre-training phases before it want, for the cap a shortfall names."""
    if on_cap not in ON_CAP:
        raise ValueError(f"on_cap must be one of {ON_CAP}, not {on_cap!r}")
    groups: list[GroupPlan] = []
    for name in sorted(stats):
        st = stats[name]
        mix = float(spec.mix.get(kind_of(name), 0.0))
        cap = lookup(caps, name, math.inf)
        groups.append(GroupPlan(name, kind_of(name), int(st.tokens), int(st.documents), float(st.repeat), mix, mix * float(st.repeat),
                                max(cap, 0.0), max_doc_tokens=int(st.max_doc_tokens), max_doc=st.max_doc))
    nominal = sum(g.nominal_epochs * g.tokens for g in groups)
    unique = sum(g.tokens for g in groups if g.nominal_epochs > 0)
    budget = spec.budget_tokens(scale)
    sigma = budget / nominal if nominal > 0 else 0.0
    wanted = {g.group: sigma * g.nominal_epochs for g in groups}
    for g in groups:
        g.epochs = min(wanted[g.group], g.cap)
    redistributed = False
    if on_cap == "redistribute":
        redistributed = _redistribute(groups, budget)
    shortfalls: list[dict[str, Any]] = []
    all_capped = all(g.epochs >= g.cap for g in groups if g.nominal_epochs > 0)
    for g in groups:
        want = wanted[g.group]
        if want > g.epochs * (1 + _SLACK) + 1e-12 and (on_cap == "shortfall" or all_capped):  # not the auto scale's float slack
            g.shortfall_tokens = int(round((want - g.epochs) * g.tokens))
            if g.shortfall_tokens > 0:
                shortfalls.append({"group": g.group, "reason": "epoch_cap", "tokens": g.shortfall_tokens, "cap": g.cap, "wanted_epochs": round(want, 6)})
    asked = spec.budget.tokens if spec.budget is not None else (spec.tokens or 0)
    if nominal == 0 and (budget > 0 or asked > 0):  # budget 0 too: a mixture of no data at all has scale 0
        shortfalls.append({"group": None, "reason": "no_data", "tokens": budget, "cap": None, "wanted_epochs": None})
    for g in groups:
        g.planned_tokens = int(round(g.epochs * g.tokens))
    planned = sum(g.planned_tokens for g in groups)
    for g in groups:
        g.weight = g.planned_tokens / planned if planned else 0.0
    plan = PhasePlan(spec.name, budget, int(round(nominal)), unique, planned, sigma, groups, shortfalls, redistributed, scale)
    held = ", ".join(f"{g.group}: {g.documents} documents" for g in groups if g.documents and g.mix > 0 and g.repeat <= 0)
    for s in shortfalls:
        if s["group"] is None:
            if held:  # its kinds have documents, all in groups it gives no epochs (a repeat of 0)
                log.warning("mixture: phase %s replays none of its %d tokens: the documents of its mix (%s) are all in groups "
                            "it gives no epochs (%s); the manifest's excluded_groups say why", spec.name, s["tokens"],
                            ", ".join(sorted(spec.mix)), held)
            elif s["tokens"] and why_empty:
                log.warning("mixture: phase %s replays none of its %d tokens: %s", spec.name, s["tokens"], why_empty)
            elif s["tokens"]:
                log.warning("mixture: phase %s has no document of its mix (%s) and replays none of its %d tokens: add data of "
                            "these kinds or leave the phase out of the recipe", spec.name, ", ".join(sorted(spec.mix)) or "empty", s["tokens"])
            elif why_empty:  # budget 0 at scale 0 while other phases' kinds have data: the setting, not the data
                log.warning("mixture: phase %s replays nothing: %s", spec.name, why_empty)
            else:
                log.warning("mixture: phase %s replays nothing: no document of its mix (%s) reached the mixture, so its budget "
                            "(mixture.scale × the data) is 0; the earlier stages' ledgers say where the documents went "
                            "(curate stats RUN)", spec.name, ", ".join(sorted(spec.mix)) or "empty")
        else:
            advice = cap_advice(s["group"], s["wanted_epochs"], (earlier or {}).get(s["group"], 0.0))
            log.warning("mixture: phase %s is short of %d tokens in group %s (%s): %s", spec.name, s["tokens"], s["group"], s["reason"], advice)
    return plan


def _redistribute(groups: list[GroupPlan], budget: int) -> bool:
    """Water-fill ``budget`` over the groups under their caps, keeping their relative epochs."""
    active = [g for g in groups if g.nominal_epochs > 0 and g.tokens > 0]
    if not any(g.epochs >= g.cap for g in active):
        return False
    capped: set[str] = set()
    while True:
        fixed = sum(g.cap * g.tokens for g in active if g.group in capped)
        free = [g for g in active if g.group not in capped]
        weight = sum(g.nominal_epochs * g.tokens for g in free)
        if not free or weight <= 0:
            for g in active:
                g.epochs = g.cap
            return True
        level = max(budget - fixed, 0) / weight
        over = [g for g in free if level * g.nominal_epochs > g.cap]
        if not over:
            for g in active:
                g.epochs = g.cap if g.group in capped else level * g.nominal_epochs
            return True
        capped.update(g.group for g in over)


def plan_phases(
    specs: list[PhaseSpec],
    stats: Mapping[str, Mapping[str, GroupStat]],
    max_epochs: Mapping[str, float],
    on_cap: str = "shortfall",
    scale: float = 1.0,
) -> dict[str, PhasePlan]:
    """Plan every phase at ``scale``; pre-training caps are shared (phase 2 gets what phase 1 left)."""
    used: dict[str, float] = {}
    wanted: dict[str, float] = {}  # what the pre-training phases so far want, caps aside
    plans: dict[str, PhasePlan] = {}
    for spec in specs:
        groups = stats.get(spec.name, {})
        if spec.stage == "pretrain":
            caps = {g: max(lookup(max_epochs, g, math.inf) - used.get(g, 0.0), 0.0) for g in groups}
        else:
            caps = {g: lookup(max_epochs, g, math.inf) for g in groups}
        earlier = dict(wanted) if spec.stage == "pretrain" else None
        plan = plan_phase(spec, groups, caps, on_cap, scale, _why_empty(spec, specs, scale, stats), earlier)
        if spec.stage == "pretrain":
            short = {s["group"]: s["wanted_epochs"] for s in plan.shortfalls if s["group"] is not None}
            for g in plan.groups:
                used[g.group] = used.get(g.group, 0.0) + g.epochs
                wanted[g.group] = wanted.get(g.group, 0.0) + short.get(g.group, g.epochs)
        plans[spec.name] = plan
    return plans


def _why_empty(spec: PhaseSpec, specs: list[PhaseSpec], scale: float, stats: Mapping[str, Mapping[str, GroupStat]]) -> str:
    """What the recipe does that leaves ``spec`` without data, said if it has none: a budget of 0 at
    scale 0 while the mixture has documents (of other kinds); a long-context phase's long documents come
    from the kinds the pre-training phases mix (:func:`curation.mixture.groups.long_source_kinds`):
    with none of those, it has none."""
    if scale <= 0 and spec.budget is None and any(st.tokens > 0 for g in stats.values() for st in g.values()):
        return (f"no document of its mix ({', '.join(sorted(spec.mix)) or 'empty'}) is in this data, and its budget is 0 because "
                "mixture.scale is 0 (set so, or `auto` with max_epochs leaving no group an epoch): give mixture.scale a value "
                "above 0 or max_epochs caps above 0, or leave the phase out")
    pretrain = {k for s in specs if s.stage == "pretrain" and s.builder == "documents" for k, v in s.mix.items() if v > 0} - {"code"}
    if spec.mix.get("long_docs", 0) <= 0 or pretrain:
        return ""
    return ("its long documents (long_docs/all) are drawn from the kinds a pre-training phase mixes, and no pre-training phase "
            "of this recipe mixes any (left out, or mixing only code): keep a pre-training phase (phases.pretrain_phase1), "
            "or leave this phase out")


def with_built_tokens(plan: PhasePlan, tokens: Mapping[str, int]) -> PhasePlan:
    """``plan`` with the unique tokens of the groups built after planning (repository documents,
    issue threads: their headers and formatting are counted only once built) taken from their
    shards; their epochs stay those the shards were written with, planned tokens, weights and the
    phase's unique and nominal tokens follow (so they agree with the shards).

    >>> p = PhasePlan("p", 100, 100, 100, 100, 1.0, [GroupPlan("code/repo_level", "code", 50, 1, 1.0, 1.0, 1.0, 4.0, 2.0, 100, 1.0)], [])
    >>> with_built_tokens(p, {"code/repo_level": 60}).groups[0].planned_tokens
    120
    """
    for g in plan.groups:
        if g.group in tokens:
            g.tokens = int(tokens[g.group])
            g.planned_tokens = int(round(g.epochs * g.tokens))
    plan.planned_tokens = sum(g.planned_tokens for g in plan.groups)
    plan.unique_tokens = sum(g.tokens for g in plan.groups if g.nominal_epochs > 0)
    plan.nominal_tokens = int(round(sum(g.nominal_epochs * g.tokens for g in plan.groups)))
    for g in plan.groups:
        g.weight = g.planned_tokens / plan.planned_tokens if plan.planned_tokens else 0.0
    return plan


def pretrain_epochs(plans: Mapping[str, PhasePlan], specs: list[PhaseSpec]) -> dict[str, float]:
    """Epochs per group summed over the pre-training phases."""
    out: dict[str, float] = {}
    for spec in specs:
        if spec.stage == "pretrain" and spec.name in plans:
            for g in plans[spec.name].groups:
                out[g.group] = out.get(g.group, 0.0) + g.epochs
    return out
