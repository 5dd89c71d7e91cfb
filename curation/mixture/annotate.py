"""The mixture's decision per document: the phases it enters, or why it enters none (pure pandas, per partition).

A document is kept if the replay shows it at least once in at least one phase with epochs; its
``mixture_phases`` are the phases that show it. Otherwise it gets the policy's exclusion reason
(``low_quality``, ``code_low_tier``, ``code_web_low_tier``, ``zero_weight``) with the scores and
the rule that decided, ``epoch_cap`` when ``max_epochs`` caps its group at 0 epochs,
``zero_weight`` when no phase gives its group epochs at this scale, ``no_phase`` when no phase
mixes its kind, or ``not_drawn`` when its group has epochs in some phases but in each of them the
replay's fractional epochs draw other documents of the group (0 copies in every phase), with the
group's epochs in those phases.

>>> from curation.mixture.phases import PhaseSpec
>>> from curation.mixture.policy import Policy
>>> df = pd.DataFrame({"doc_id": ["a", "b"], "text": ["x", "y"], "source": ["web", "reasoning"], "n_tokens": [5, 7],
...                    "quality_level": ["high", None]})
>>> out = annotate(df, [PhaseSpec("p", tokens=10, mix={"web": 1.0})], Policy(), {("p", "web/high")})
>>> out["mixture_group"].tolist(), out["mixture_phases"].iloc[0], out["drop_reason"].tolist()
(['web/high', 'reasoning/all'], 'p', [None, 'no_phase'])
>>> out = annotate(df, [PhaseSpec("p", tokens=10, mix={"web": 1.0})], Policy(), {("p", "web/high")},
...                undrawn={("a", "p")}, epochs={("p", "web/high"): 0.4})
>>> out["drop_reason"].iloc[0], out["mixture_phases"].iloc[0], out["drop_detail"].iloc[0]
('not_drawn', None, '{"epochs": {"p": 0.4}, "group": "web/high", "rule": "web/high at 0.4 epochs in p: the replay draws other documents of the group"}')
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np
import pandas as pd

from curation.mixture.groups import memberships
from curation.mixture.phases import PhaseSpec
from curation.mixture.plan import lookup
from curation.mixture.policy import DETAIL_COLUMNS, Policy, doc_groups, exclusion
from curation.schema import DROP_DETAIL, DROP_REASON, DropReason, detail_json


def annotate(df: pd.DataFrame, specs: list[PhaseSpec], policy: Policy, live: set[tuple[str, str]],
             max_epochs: Mapping[str, float] | None = None, undrawn: set[tuple[str, str]] | None = None,
             epochs: Mapping[tuple[str, str], float] | None = None) -> pd.DataFrame:
    """``df`` with ``mixture_group``, ``mixture_phases`` (comma-separated, in phase order) and the drop columns.
    ``max_epochs``: the caps (a pattern table); a group capped at 0 is ``epoch_cap``, naming the cap.
    ``undrawn``: (doc_id, phase) pairs the replay shows 0 times; a document with no other phase is
    ``not_drawn``, its detail giving each such phase's epochs of its group (``epochs``: (phase, group) → epochs)."""
    df = df.copy()
    groups = doc_groups(df, policy)
    m = memberships(df, specs, groups)
    in_live = np.array([(p, g) in live for p, g in zip(m["phase"], m["group"], strict=True)], dtype=bool) & (m["repeat"] > 0).to_numpy()
    ids = df["doc_id"].astype(str).to_numpy(dtype=object)
    phases: dict[int, list[str]] = {}
    passed: dict[int, dict[str, tuple[str, float]]] = {}  # the phases whose replay shows it 0 times: phase → (group, epochs)
    for row, phase, grp in zip(m["row"][in_live], m["phase"][in_live], m["group"][in_live], strict=True):
        if undrawn and (ids[int(row)], phase) in undrawn:
            passed.setdefault(int(row), {})[phase] = (grp, round(float((epochs or {}).get((phase, grp), 0.0)), 6))
        else:
            phases.setdefault(int(row), []).append(phase)
    listed = {int(r) for r in m["row"]}
    mixed = {k for s in specs for k, v in s.mix.items() if v > 0}
    order = [s.name for s in specs]
    reasons: list[str | None] = []
    details: list[str | None] = []
    # the records exclusion() reads: the excluded rows' score columns only (converted as to_dict does)
    excluded = [i for i, rep in enumerate(groups["repeat"]) if i not in phases and rep <= 0]
    scored = [c for c in df.columns if c in DETAIL_COLUMNS or c.startswith(("quality_score_", "code_score_"))]
    records = dict(zip(excluded, df[scored].iloc[excluded].to_dict("records"), strict=True)) if excluded else {}
    for i, (grp, kind, rep, rule) in enumerate(zip(groups["group"], groups["kind"], groups["repeat"], groups["rule"], strict=True)):
        if i in phases:
            reasons.append(None)
            details.append(None)
        elif i in passed:
            reasons.append(DropReason.NOT_DRAWN.value)
            steps = sorted(passed[i].items(), key=lambda x: order.index(x[0]))
            said = ", ".join(f"{e:g} epochs in {p}" + (f" (as {g})" if g != grp else "") for p, (g, e) in steps)
            details.append(detail_json(group=grp, epochs={p: e for p, (_, e) in steps},
                                       rule=f"{grp} at {said}: the replay draws other documents of the group"))
        elif rep <= 0:  # the policy excludes it: the recipe's rule, with the scores that decided
            reason, detail = exclusion(records[i], grp, kind, rule, policy)
            reasons.append(reason)
            details.append(detail)
        elif (i in listed or kind in mixed) and (cap := lookup(max_epochs or {}, grp, math.inf)) <= 0:
            reasons.append(DropReason.EPOCH_CAP.value)
            details.append(detail_json(group=grp, repeat=float(rep), cap=cap, rule=f"max_epochs caps {grp} at {cap:g} epochs"))
        elif i in listed or kind in mixed:
            reasons.append(DropReason.ZERO_WEIGHT.value)
            details.append(detail_json(group=grp, repeat=float(rep), rule="no phase gives its group epochs at this scale"))
        else:
            reasons.append(DropReason.NO_PHASE.value)
            details.append(detail_json(group=grp, kind=kind, phases=[s.name for s in specs]))
    df["mixture_group"] = groups["group"].to_numpy()
    df["mixture_phases"] = [",".join(sorted(set(phases[i]), key=order.index)) if i in phases else None for i in range(len(df))]
    df[DROP_REASON] = pd.Series(reasons, index=df.index, dtype=object)
    df[DROP_DETAIL] = pd.Series(details, index=df.index, dtype=object)
    return df
