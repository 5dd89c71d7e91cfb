"""Checks of a mixture plan that the console and the manifests report: outcomes, not configuration.

- **top level epochs**: GLM-4.5 has the top web level contribute over 3.2 epochs over pre-training.
  The plan computes those epochs from the budgets (15T : 7T × scale), the repeat factors and the
  caps; where the data cannot give them while keeping the phases' proportions, say so.
- **concentration**: a group of few documents that takes a large share of a phase (two pages
  holding most of phase 1's tokens), or one document of a large group that does (a 12 MB page of
  repeated text), is a mixture nobody meant; warn, or fail when configured.
- **replay**: a group whose shards replay more than 2 % off its planned tokens and more than one
  of its documents (whole copies of few or long documents cannot reach a fractional epoch).
- **earlier caps**: a later pre-training phase short of its budget because the earlier ones used
  some groups' whole caps (their epochs over pre-training are shared): those groups get none here.

>>> from curation.mixture.phases import PhaseSpec
>>> from curation.mixture.plan import GroupPlan, PhasePlan
>>> g = [GroupPlan("web/high", "web", 900, 2, 4.0, 1.0, 4.0, 4.0, epochs=2.0, planned_tokens=1800, weight=0.9),
...      GroupPlan("web/medium", "web", 200, 20, 1.0, 1.0, 1.0, 4.0, epochs=1.0, planned_tokens=200, weight=0.1)]
>>> plans = {"p1": PhasePlan("p1", 2000, 2000, 1100, 2000, 1.0, g, [])}
>>> [w["check"] for w in check_plans(plans, [PhaseSpec("p1", tokens=2000)])]
['top_level_epochs', 'concentration']
"""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping
from typing import Any

from curation.mixture.phases import PhaseSpec
from curation.mixture.plan import PhasePlan, lookup, pretrain_epochs

log = logging.getLogger(__name__)


class ConcentrationError(RuntimeError):
    """A group of few documents takes more of a phase than ``concentration_max_share`` allows."""


def top_level_epochs(plans: Mapping[str, PhasePlan], specs: list[PhaseSpec], group: str = "web/high") -> float:
    """Epochs of ``group`` summed over the pre-training phases of the plan."""
    return float(pretrain_epochs(plans, specs).get(group, 0.0))


def check_plans(
    plans: Mapping[str, PhasePlan],
    specs: list[PhaseSpec],
    *,
    top_group: str = "web/high",
    min_top_epochs: float = 3.2,
    max_share: float = 0.25,
    max_documents: int = 10,
    on_concentration: str = "warn",
    replayed: Mapping[tuple[str, str], int] | None = None,
    patterns: Mapping[str, Any] | None = None,
    cap_patterns: Mapping[str, Any] | None = None,
) -> list[dict[str, Any]]:
    """Warnings about the plan (also logged); raises :class:`ConcentrationError` when asked to fail.

    ``replayed``: (phase, group) → tokens its shards replay; a group that replays none takes no share
    of its phase, so it is not a concentration (the replay check says it falls short).
    ``patterns``: the recipe's own repeat keys; one without a glob that names no group of the data
    while its kind has groups there is a typo, warned about (``web/hihg``); ``cap_patterns``: the
    recipe's ``max_epochs`` keys, the same way."""
    present = {g.group for p in plans.values() for g in p.groups}
    warnings = unknown_groups(present, patterns or {}, cap_patterns or {}, top_group)
    has_top = any(g.group == top_group and g.tokens > 0 for p in plans.values() for g in p.groups)
    if has_top and min_top_epochs > 0:
        epochs = top_level_epochs(plans, specs, top_group)
        if epochs < min_top_epochs:
            warnings.append({
                "check": "top_level_epochs", "phase": None, "group": top_group, "value": round(epochs, 6),
                "limit": min_top_epochs,
                "message": (f"{top_group} gets {epochs:.2f} epochs over pre-training, below the {min_top_epochs} GLM-4.5 asks for, "
                            "with the phases kept at their token proportions: raise its repeat factor or its cap, lower the "
                            "other groups' repeats or shift web to phase 1's mix, or accept it (the data cannot give more)"),
            })
    for name, plan in plans.items():
        for g in plan.groups:
            if replayed is not None and replayed.get((name, g.group), 1) == 0:
                continue
            if 0 < g.documents <= max_documents and g.weight > max_share:
                warnings.append({
                    "check": "concentration", "phase": name, "group": g.group, "value": round(g.weight, 6), "limit": max_share,
                    "documents": g.documents,
                    "message": (f"phase {name}: {g.documents} document(s) of {g.group} take {g.weight:.1%} of its tokens "
                                f"(more than {max_share:.0%} for ≤ {max_documents} documents): lower that group's repeat or cap, "
                                "or add data"),
                })
            top = g.max_doc_tokens * g.epochs / plan.planned_tokens if plan.planned_tokens else 0.0
            if g.documents > max_documents and top > max_share:  # one document of a large group (a small one is said above)
                warnings.append({
                    "check": "concentration", "phase": name, "group": g.group, "value": round(top, 6), "limit": max_share,
                    "documents": 1,
                    "message": (f"phase {name}: one document of {g.group}, {g.max_doc!r} ({g.max_doc_tokens:,} tokens × "
                                f"{g.epochs:.2f} epochs), takes {top:.1%} of its tokens (more than {max_share:.0%}): cut or drop it "
                                "(ingest.max_chars), or add data"),
                })
    warnings += check_zero_caps(plans, cap_patterns or {}) + check_used_caps(plans, specs, cap_patterns or {})
    for w in warnings:
        log.warning("mixture: %s", w["message"])
    if on_concentration == "fail":
        bad = [w for w in warnings if w["check"] == "concentration"]
        if bad:
            raise ConcentrationError("; ".join(w["message"] for w in bad) + " (mixture.on_concentration: fail)")
    return warnings


def check_zero_caps(plans: Mapping[str, PhasePlan], caps: Mapping[str, Any]) -> list[dict[str, Any]]:
    """A warning naming the groups of the phases' mixes that ``max_epochs`` caps at 0 epochs: none of their
    documents enters a phase (ledger ``epoch_cap``); ``repeat`` 0 is the setting that excludes a group.

    >>> from curation.mixture.plan import GroupPlan, PhasePlan
    >>> g = [GroupPlan("web/high", "web", 900, 2, 4.0, 1.0, 4.0, 0.0, epochs=0.0, planned_tokens=0, weight=0.0)]
    >>> [w["groups"] for w in check_zero_caps({"p1": PhasePlan("p1", 2000, 0, 0, 0, 1.0, g, [])}, {"*": 0})]
    [['web/high']]
    """
    zero = sorted({g.group for p in plans.values() for g in p.groups
                   if g.nominal_epochs > 0 and g.tokens > 0 and lookup(caps, g.group, math.inf) <= 0})
    if not zero:
        return []
    listed = _first_five(zero)
    return [{"check": "zero_cap", "phase": None, "value": 0, "limit": None, "groups": zero,
             "message": (f"mixture.max_epochs caps {len(zero)} group(s) of the phases' mixes at 0 epochs ({listed}): none of "
                         "their documents enters a phase (ledger reason epoch_cap); give them a cap above 0, or repeat 0 "
                         "where they are meant to be left out")}]


def check_used_caps(plans: Mapping[str, PhasePlan], specs: list[PhaseSpec], caps: Mapping[str, Any] | None = None) -> list[dict[str, Any]]:
    """A warning for each pre-training phase short of its budget in which groups of its mix get no
    epochs because the earlier pre-training phases used their whole caps (a cap of 0 is
    :func:`check_zero_caps`'s)."""
    out = []
    for spec in specs:
        plan = plans.get(spec.name)
        if spec.stage != "pretrain" or plan is None or plan.budget_met:
            continue
        spent = [g.group for g in plan.groups if g.capped_out and lookup(caps or {}, g.group, math.inf) > 0]
        if not spent:
            continue
        listed = _first_five(spent)
        out.append({
            "check": "earlier_caps", "phase": spec.name, "value": plan.planned_tokens, "limit": plan.budget_tokens, "groups": spent,
            "message": (f"phase {spec.name} plans {plan.planned_tokens:,} of its {plan.budget_tokens:,} tokens"
                        f"{' (empty)' if plan.planned_tokens == 0 else ''}: the earlier pre-training phases used the whole "
                        f"max_epochs cap of {len(spent)} group(s) of its mix ({listed}), which get no epochs here: "
                        "lower mixture.scale (or set it to auto) or raise max_epochs"),
        })
    return out


def _first_five(names: list[str], sep: str = ", ") -> str:
    """The first five of ``names`` and how many more.

    >>> _first_five(list("abcdefg"))
    'a, b, c, d, e and 2 more'
    """
    return sep.join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")


def unknown_groups(present: set[str], patterns: Mapping[str, Any], cap_patterns: Mapping[str, Any], top_group: str) -> list[dict[str, Any]]:
    """Warnings (not logged) for the keys of ``repeat`` (``patterns``, the recipe's own) and
    ``max_epochs`` (``cap_patterns``), and ``top_group``, that name no group of ``present`` while
    their kind has groups there; a glob names groups by design. The manifests say them of the plan's
    groups; a single ``curate mixture`` says them before any work of its input's
    (:mod:`pipelines.stages.mixture_input`).

    >>> [w["message"] for w in unknown_groups({"web/high", "web/low"}, {"web/hgh": 2.0, "code/*": 1.0}, {}, "web/high")]
    ["mixture.repeat has 'web/hgh', which names no group of this data; web's groups are web/high, web/low"]
    """
    warnings: list[dict[str, Any]] = []
    for key in sorted(k for k in patterns if not any(c in k for c in "*?[")):
        warnings += _unknown_group("repeat_key", "mixture.repeat", key, present)
    for key in sorted(k for k in cap_patterns if not any(c in k for c in "*?[")):
        warnings += _unknown_group("max_epochs_key", "mixture.max_epochs", key, present)
    return warnings + _unknown_group("top_group", "mixture.top_group", top_group, present)


def _unknown_group(check: str, setting: str, key: str, present: set[str]) -> list[dict[str, Any]]:
    """A warning when ``key`` names no group of this data while its kind has groups (a typo: ``web/hihg``)."""
    kind = key.split("/", 1)[0]
    groups = sorted(g for g in present if g.startswith(kind + "/"))
    if key in present or not groups:
        return []
    return [{"check": check, "phase": None, "group": key, "value": None, "limit": None,
             "message": f"{setting} has {key!r}, which names no group of this data; {kind}'s groups are {', '.join(groups)}"}]


def check_values(setting: str, values: Any, present: set[str], what: str) -> list[dict[str, Any]]:
    """Warnings (also logged) for the names in ``values`` that this data does not have while it has
    others: a band or a language the recipe names that no document carries is a typo, or no effect.

    >>> [w["message"] for w in check_values("mixture.web_edu_bands", ["hi"], {"high", "low"}, "edu band")]
    ["mixture.web_edu_bands has 'hi', which names no edu band of this data; its edu bands are high, low"]
    """
    out = [{"check": "unknown_value", "phase": None, "group": None, "value": str(v), "limit": None,
            "message": f"{setting} has {str(v)!r}, which names no {what} of this data; its {what}s are {', '.join(sorted(present))}"}
           for v in values if present and str(v) not in present]
    for w in out:
        log.warning("mixture: %s", w["message"])
    return out


def check_edu_bands(values: Any, present: set[str]) -> list[dict[str, Any]]:
    """Warnings for ``mixture.web_edu_bands`` against the bands the data carries. Data no stage scored
    for educational value is one group per kind (``…/all``): then the setting has no effect, which is
    what the warning says (not that its bands are misspelt).

    >>> [w["message"][:60] for w in check_edu_bands(["high"], {"all"})]
    ['mixture.web_edu_bands has no effect: no document carries an ']
    """
    if present and present <= {"all"} and values:
        w = {"check": "unknown_value", "phase": None, "group": None, "value": ", ".join(map(str, values)), "limit": None,
             "message": "mixture.web_edu_bands has no effect: no document carries an edu band (edu_score did not run, or "
                        "scored none), so web_edu and math_science are one group each (…/all)"}
        log.warning("mixture: %s", w["message"])
        return [w]
    return check_values("mixture.web_edu_bands", values, present, "edu band")


def check_replay(phase: str, groups: list[Mapping[str, Any]], planned: int, tolerance: float = 0.02,
                 stage: str = "pretrain", sizes: Mapping[str, tuple[int, int]] | None = None,
                 budget: int | None = None) -> list[dict[str, Any]]:
    """Warnings for the groups of ``phase`` (manifest entries) whose replay is off the plan by more than
    ``tolerance`` of it and by more than one of the group's documents (their mean size) or ``tolerance``
    of the phase, the smaller: whole copies are within about a document of any plan, so a group of a few
    tokens a little off is no finding, while one whose documents are long against the phase is.

    ``sizes`` is group → (documents, tokens) of the group in the plan, every document whether its shards
    show it or not (materialized shards hold only the shown ones); without it, the entry's unique figures.
    ``budget`` is the phase's budget (default ``planned``).

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

    off = [g for g in groups
           if abs(g["replay_tokens"] - g["planned_tokens"]) > max(tolerance * g["planned_tokens"], min(mean_doc(g), tolerance * planned))]
    if not off:
        return []
    replay = sum(g["replay_tokens"] for g in groups)
    off.sort(key=lambda g: -abs(g["replay_tokens"] - g["planned_tokens"]))
    listed = _first_five([f"{g['name']} planned {g['planned_tokens']:,}, replayed {g['replay_tokens']:,}" for g in off], "; ")
    advice = _replay_advice(phase, off, planned, stage, mean_doc, tolerance, planned if budget is None else budget)
    w = {
        "check": "replay", "phase": phase, "value": round(replay / planned, 6) if planned else 0.0, "limit": tolerance,
        "groups": [{"group": g["name"], "planned_tokens": g["planned_tokens"], "replay_tokens": g["replay_tokens"]} for g in off],
        "message": (f"phase {phase}: {len(off)} group(s) replay more than {tolerance:.0%} off their plan ({listed}); "
                    f"the phase replays {replay:,} of {planned:,} planned tokens: whole copies of these groups' documents "
                    f"cannot reach a fractional epoch (too few or too long documents): {advice}"),
    }
    log.warning("mixture: %s", w["message"])
    return [w]


def _replay_advice(phase: str, off: list[Mapping[str, Any]], planned: int, stage: str, mean_doc: Any, tolerance: float,
                   budget: int) -> str:
    """What to change for a phase whose groups replay off their plan (:func:`check_replay`): for a
    mid-training phase, a budget of its own at least ``budget`` (a group's plan grows with the budget)."""
    if stage != "midtrain":
        return "add data or raise mixture.scale"
    short = [budget * mean_doc(g) / (tolerance * g["planned_tokens"]) for g in off
             if g["planned_tokens"] and g["replay_tokens"] < g["planned_tokens"] and mean_doc(g)]
    over = [budget * g["replay_tokens"] / g["planned_tokens"] for g in off
            if g["planned_tokens"] and g["replay_tokens"] > g["planned_tokens"]]
    setting = f"phases.{phase}.budget"
    tail = " (mixture.scale also scales the pre-training phases)"
    if short:
        tokens = max(budget, math.ceil(max(short) / 1000) * 1000)
        return (f"raise this mid-training phase's own budget to {setting}={{tokens: {tokens}}} (at which one document of "
                f"mean size of each group short of its plan is within {tolerance:.0%} of that plan), or add data{tail}")
    if over:
        tokens = max(budget, math.ceil(max(over) / 1000) * 1000)
        return (f"the documents' whole copies give more than the plan: raise this mid-training phase's own budget to "
                f"{setting}={{tokens: {tokens}}} (at which the plan is what they replay), or accept it{tail}")
    return f"add data of these groups or set this mid-training phase's own budget ({setting}){tail}"
