"""Mixture planning: phase budgets, per-group repeat factors and epoch caps → weights and epochs.

A *group* is ``<kind>/<sub>``: the source (``web_edu`` for web pages marked edu-rich) and its
quality level, code tier or edu band (``all`` when none). Each group makes ``T`` unique tokens
available and has a repeat factor ``r`` (from the scoring stages' ``*_repeat`` columns, or the
recipe). A phase's ``mix`` multiplies it per kind, so the group's *nominal* epochs in the phase
are ``mix[kind] × r``, and the phase's *nominal* size is ``N = Σ mix × r × T``. The budget is
absolute tokens ``B`` or ``fraction × N``; every group gets ``σ = B / N`` times its nominal
epochs, so the recipe's proportions hold whatever the budget. Epochs above a group's cap are
clamped and the missing tokens are reported as a *shortfall* of that group (or, with
``on_cap: redistribute``, moved to the groups under their caps, and recorded as such).
Pre-training caps hold over all pre-training phases together (planned in order).

>>> stats = {"web/high": GroupStat(1000, 4.0, 10), "web/medium": GroupStat(3000, 1.0, 30)}
>>> spec = PhaseSpec("p1", budget=Budget(fraction=1.0), mix={"web": 1.0})
>>> plan = plan_phase(spec, stats, caps={"web/high": 4.0, "web/medium": 4.0})
>>> [(g.group, g.epochs, round(g.weight, 3)) for g in plan.groups]
[('web/high', 4.0, 0.571), ('web/medium', 1.0, 0.429)]
>>> plan_phase(spec.with_budget(Budget(tokens=14000)), stats, caps={"*": 4.0}).shortfalls
[{'group': 'web/high', 'reason': 'epoch_cap', 'tokens': 4000, 'cap': 4.0, 'wanted_epochs': 8.0}]
"""

from __future__ import annotations

import dataclasses
import fnmatch
import logging
import math
import re
from collections.abc import Mapping
from typing import Any

log = logging.getLogger(__name__)

BUILDERS = ("documents", "repo_code", "long_context")
PACKINGS = ("none", "best_fit")
ON_CAP = ("shortfall", "redistribute")
BUDGET_TOLERANCE = 0.01


@dataclasses.dataclass(frozen=True)
class Budget:
    """Absolute ``tokens`` or a ``fraction`` of the phase's nominal tokens (exactly one)."""

    tokens: int | None = None
    fraction: float | None = None

    @classmethod
    def parse(cls, value: Any, where: str) -> Budget:
        if not isinstance(value, Mapping) or len(set(value) & {"tokens", "fraction"}) != 1 or set(value) - {"tokens", "fraction"}:
            raise ValueError(f"{where}.budget must be {{tokens: N}} or {{fraction: F}}, got {value!r}")
        if "tokens" in value:
            tokens = int(float(value["tokens"]))
            if tokens < 0:
                raise ValueError(f"{where}.budget.tokens must be ≥ 0")
            return cls(tokens=tokens)
        fraction = float(value["fraction"])
        if fraction < 0:
            raise ValueError(f"{where}.budget.fraction must be ≥ 0")
        return cls(fraction=fraction)

    def to_dict(self) -> dict[str, Any]:
        return {"tokens": self.tokens} if self.tokens is not None else {"fraction": self.fraction}


@dataclasses.dataclass(frozen=True)
class PhaseSpec:
    """One phase of the recipe."""

    name: str
    stage: str = "pretrain"  #: pretrain (caps hold over all pre-training phases) | midtrain
    builder: str = "documents"  #: documents | repo_code | long_context
    budget: Budget = Budget(fraction=1.0)
    seq_length: int = 4096
    packing: str = "none"
    truncation: str = "random"
    mix: Mapping[str, float] = dataclasses.field(default_factory=dict)
    fim: bool = False
    min_tokens: int = 0  #: long_context: documents at least this long
    max_doc_tokens: int = 32768  #: repo_code: documents cut at file/record boundaries below this
    full_scale_tokens: int | None = None  #: the report's budget, for reference

    def with_budget(self, budget: Budget) -> PhaseSpec:
        return dataclasses.replace(self, budget=budget)

    @classmethod
    def parse(cls, name: str, data: Mapping[str, Any]) -> PhaseSpec:
        where = f"mixture.phases.{name}"
        fields = {f.name for f in dataclasses.fields(cls)} - {"name"}
        unknown = sorted(set(data) - fields)
        if unknown:
            raise ValueError(f"unknown key {unknown[0]!r} in {where}; valid keys: {', '.join(sorted(fields))}")
        kw: dict[str, Any] = dict(data)
        kw["budget"] = Budget.parse(data.get("budget", {"fraction": 1.0}), where)
        kw["mix"] = {str(k): float(v) for k, v in (data.get("mix") or {}).items()}
        for key in ("seq_length", "min_tokens", "max_doc_tokens"):
            if key in kw:
                kw[key] = int(float(kw[key]))
        if kw.get("full_scale_tokens") is not None:
            kw["full_scale_tokens"] = int(float(kw["full_scale_tokens"]))
        if not re.fullmatch(r"[A-Za-z0-9_.-]+", name):
            raise ValueError(f"phase name {name!r}: use letters, digits, '_', '.', '-' (it names folders and files)")
        spec = cls(name=name, **kw)
        if spec.stage not in ("pretrain", "midtrain"):
            raise ValueError(f"{where}.stage must be pretrain or midtrain, not {spec.stage!r}")
        if spec.builder not in BUILDERS:
            raise ValueError(f"{where}.builder must be one of {BUILDERS}, not {spec.builder!r}")
        if spec.packing not in PACKINGS:
            raise ValueError(f"{where}.packing must be one of {PACKINGS}, not {spec.packing!r}")
        if spec.seq_length < 1:
            raise ValueError(f"{where}.seq_length must be ≥ 1")
        if any(v < 0 for v in spec.mix.values()):
            raise ValueError(f"{where}.mix values must be ≥ 0")
        return spec


@dataclasses.dataclass(frozen=True)
class GroupStat:
    """What the planner needs of a group: unique tokens, repeat factor, documents."""

    tokens: int
    repeat: float
    documents: int = 0


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

    @property
    def budget_met(self) -> bool:
        return abs(self.planned_tokens - self.budget_tokens) <= BUDGET_TOLERANCE * max(self.budget_tokens, 1)

    def group(self, name: str) -> GroupPlan:
        return next(g for g in self.groups if g.group == name)


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
) -> PhasePlan:
    """Epochs and weights of ``spec``'s groups from their stats, within ``caps`` (epochs left)."""
    if on_cap not in ON_CAP:
        raise ValueError(f"on_cap must be one of {ON_CAP}, not {on_cap!r}")
    groups: list[GroupPlan] = []
    for name in sorted(stats):
        st = stats[name]
        mix = float(spec.mix.get(kind_of(name), 0.0))
        cap = lookup(caps, name, math.inf)
        groups.append(GroupPlan(name, kind_of(name), int(st.tokens), int(st.documents), float(st.repeat), mix, mix * float(st.repeat), max(cap, 0.0)))
    nominal = sum(g.nominal_epochs * g.tokens for g in groups)
    unique = sum(g.tokens for g in groups if g.nominal_epochs > 0)
    budget = spec.budget.tokens if spec.budget.tokens is not None else int(round((spec.budget.fraction or 0.0) * nominal))
    if nominal <= 0:
        scale = 0.0
    elif spec.budget.fraction is not None:
        scale = spec.budget.fraction  # exact: the rounded budget would shift epochs on small inputs
    else:
        scale = budget / nominal
    wanted = {g.group: scale * g.nominal_epochs for g in groups}
    for g in groups:
        g.epochs = min(wanted[g.group], g.cap)
    redistributed = False
    if on_cap == "redistribute":
        redistributed = _redistribute(groups, budget)
    shortfalls: list[dict[str, Any]] = []
    all_capped = all(g.epochs >= g.cap for g in groups if g.nominal_epochs > 0)
    for g in groups:
        want = wanted[g.group]
        if want > g.epochs + 1e-12 and (on_cap == "shortfall" or all_capped):
            g.shortfall_tokens = int(round((want - g.epochs) * g.tokens))
            if g.shortfall_tokens > 0:
                shortfalls.append({"group": g.group, "reason": "epoch_cap", "tokens": g.shortfall_tokens, "cap": g.cap, "wanted_epochs": round(want, 6)})
    if budget > 0 and nominal == 0:
        shortfalls.append({"group": None, "reason": "no_data", "tokens": budget, "cap": None, "wanted_epochs": None})
    for g in groups:
        g.planned_tokens = int(round(g.epochs * g.tokens))
    planned = sum(g.planned_tokens for g in groups)
    for g in groups:
        g.weight = g.planned_tokens / planned if planned else 0.0
    plan = PhasePlan(spec.name, budget, int(round(nominal)), unique, planned, scale, groups, shortfalls, redistributed)
    for s in shortfalls:
        log.warning("mixture: phase %s is short of %d tokens in group %s (%s)", spec.name, s["tokens"], s["group"], s["reason"])
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
) -> dict[str, PhasePlan]:
    """Plan every phase; pre-training caps are shared (phase 2 gets what phase 1 left)."""
    used: dict[str, float] = {}
    plans: dict[str, PhasePlan] = {}
    for spec in specs:
        groups = stats.get(spec.name, {})
        if spec.stage == "pretrain":
            caps = {g: max(lookup(max_epochs, g, math.inf) - used.get(g, 0.0), 0.0) for g in groups}
        else:
            caps = {g: lookup(max_epochs, g, math.inf) for g in groups}
        plan = plan_phase(spec, groups, caps, on_cap)
        if spec.stage == "pretrain":
            for g in plan.groups:
                used[g.group] = used.get(g.group, 0.0) + g.epochs
        plans[spec.name] = plan
    return plans


def pretrain_epochs(plans: Mapping[str, PhasePlan], specs: list[PhaseSpec]) -> dict[str, float]:
    """Epochs per group summed over the pre-training phases."""
    out: dict[str, float] = {}
    for spec in specs:
        if spec.stage == "pretrain" and spec.name in plans:
            for g in plans[spec.name].groups:
                out[g.group] = out.get(g.group, 0.0) + g.epochs
    return out
