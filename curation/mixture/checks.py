"""Checks of a mixture plan that the console and the manifests report: outcomes, not configuration.

- **top level epochs**: GLM-4.5 has the top web level contribute over 3.2 epochs over pre-training.
  The plan computes those epochs from the budgets (15T : 7T × scale), the repeat factors and the
  caps; where the data cannot give them while keeping the phases' proportions, say so.
- **concentration**: a group of few documents that takes a large share of a phase (two pages
  holding most of phase 1's tokens), or one document of a large group that does (a 12 MB page of
  repeated text), is a mixture nobody meant; warn, or fail when configured.
- **replay**: a group whose shards replay more than 2 % off its planned tokens and more than one
  of its documents (whole copies of few or long documents cannot reach a fractional epoch):
  :mod:`curation.mixture.replay_check`.
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
from curation.mixture.plan import GroupPlan, PhasePlan, lookup, pretrain_epochs

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
    scale: Any = "auto",
    scale_fit: tuple[str, ...] = ("pretrain",),
) -> list[dict[str, Any]]:
    """Warnings about the plan (also logged); raises :class:`ConcentrationError` when asked to fail.

    ``replayed``: (phase, group) → tokens its shards replay; a group that replays none takes no share
    of its phase, so it is not a concentration (the replay check says it falls short).
    ``patterns``: the recipe's own repeat keys; one without a glob that names no group of the data
    while its kind has groups there is a typo, warned about (``web/hihg``); ``cap_patterns``: the
    recipe's ``max_epochs`` keys, the same way; ``scale`` and ``scale_fit``: the recipe's settings, named
    where they, not the data, are the cause."""
    present = {g.group for p in plans.values() for g in p.groups}
    stages = {s.name: s.stage for s in specs}
    warnings = unknown_groups(present, patterns or {}, cap_patterns or {}, top_group)
    has_top = any(g.group == top_group and g.tokens > 0 for p in plans.values() for g in p.groups)
    if has_top and min_top_epochs > 0:
        epochs = top_level_epochs(plans, specs, top_group)
        if epochs < min_top_epochs:
            warnings.append({
                "check": "top_level_epochs", "phase": None, "group": top_group, "value": round(epochs, 6),
                "limit": min_top_epochs,
                "message": (f"{top_group} gets {epochs:.2f} epochs over pre-training, below the {min_top_epochs} GLM-4.5 asks for, "
                            f"with the phases kept at their token proportions: {_top_advice(plans, specs, top_group, scale)}"),
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
                                f"{g.epochs:.2f} epochs), takes {top:.1%} of its tokens (more than {max_share:.0%}): "
                                f"{_one_document_advice(name, g, stages.get(name, 'pretrain'))}"),
                })
    warnings += check_zero_caps(plans, cap_patterns or {}) + check_used_caps(plans, specs, cap_patterns or {}, scale, scale_fit)
    for w in warnings:
        log.warning("mixture: %s", w["message"])
    if on_concentration == "fail":
        bad = [w for w in warnings if w["check"] == "concentration"]
        if bad:
            raise ConcentrationError("; ".join(w["message"] for w in bad) + " (mixture.on_concentration: fail)")
    return warnings


def _one_document_advice(phase: str, g: GroupPlan, stage: str) -> str:
    """What lowers one document's share of a phase. ``ingest.max_chars`` drops a longer document whole
    (nothing cuts one); a mid-training phase wants long documents, so it is pointed at its group's cap,
    and at its own budget where that group is at its cap (the other groups then take the rest)."""
    if stage == "pretrain":
        return (f"drop it (ingest.max_chars drops every document longer than that), lower {g.group}'s repeat or cap "
                f"(mixture.max_epochs.{g.group}), or add data")
    advice = f"lower {g.group}'s cap (mixture.max_epochs.{g.group}) or repeat, so the other groups take more of the phase"
    if g.epochs >= g.cap * (1 - 1e-6):
        advice += f"; {g.group} is at its cap, so raising the phase's budget (phases.{phase}.budget) gives the rest to the others"
    return advice + "; or add data, or accept it (long documents are what a mid-training phase is for)"


def _top_advice(plans: Mapping[str, PhasePlan], specs: list[PhaseSpec], top_group: str, scale: Any) -> str:
    """The top group short of its epochs: below its cap in every pre-training phase, the budgets limit it
    (a numeric ``mixture.scale`` or a phase's own budget), not the data."""
    pre = [s for s in specs if s.stage == "pretrain" and s.name in plans]
    tops = [g for s in pre for g in plans[s.name].groups if g.group == top_group and g.tokens > 0]
    if tops and all(g.epochs < g.cap * (1 - 1e-6) for g in tops):
        own = [f"phases.{s.name}.budget" for s in pre if s.budget is not None]
        if own:
            return f"the budgets limit it, not the data: raise {', '.join(own)}"
        if scale != "auto":
            return f"the budgets limit it, not the data: raise mixture.scale (it is {scale}) or set it to auto"
    return ("raise its repeat factor or its cap, lower the other groups' repeats or shift web to phase 1's mix, or accept it "
            "(the data cannot give more)")


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


def check_used_caps(plans: Mapping[str, PhasePlan], specs: list[PhaseSpec], caps: Mapping[str, Any] | None = None,
                    scale: Any = "auto", scale_fit: tuple[str, ...] = ("pretrain",)) -> list[dict[str, Any]]:
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
                        f"{_used_caps_advice(specs, spec, scale, scale_fit)} or raise max_epochs"),
        })
    return out


def _used_caps_advice(specs: list[PhaseSpec], spec: PhaseSpec, scale: Any, scale_fit: tuple[str, ...]) -> str:
    """The setting that made the earlier pre-training phases take the caps."""
    earlier = [s for s in specs[: specs.index(spec)] if s.stage == "pretrain"]
    own = [f"phases.{s.name}.budget" for s in earlier if s.budget is not None]
    if own:
        return f"lower {', '.join(own)}"
    if scale == "auto" and "pretrain" not in scale_fit:
        return (f"mixture.scale_fit is {list(scale_fit)}, so scale auto is not fitted to the pre-training caps: add pretrain "
                "to mixture.scale_fit")
    return "lower mixture.scale (or set it to auto)"


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
