"""What the mixture's messages advise is what the settings do: one document's share of a phase
points pre-training at ``ingest.max_chars`` (which drops a document, never cuts one) and
mid-training at its group's cap and the phase's budget; the ``scale: auto`` log names the phases it
was fitted to, the mid-training ones where the pre-training phases have no data."""

from __future__ import annotations

import logging

from curation.mixture.checks import check_plans
from curation.mixture.phases import PhaseSpec
from curation.mixture.plan import GroupPlan, GroupStat, PhasePlan
from curation.mixture.scale import resolve_scale


def _one_large_document(phase: str, group: str, cap: float) -> dict[str, PhasePlan]:
    big = GroupPlan(
        group,
        group.split("/")[0],
        10_000,
        20,
        1.0,
        1.0,
        1.0,
        cap,
        epochs=2.0,
        planned_tokens=20_000,
        weight=0.8,
        max_doc_tokens=6_000,
        max_doc="huge",
    )
    rest = GroupPlan("other/all", "other", 5_000, 50, 1.0, 1.0, 1.0, 4.0, epochs=1.0, planned_tokens=5_000, weight=0.2)
    return {phase: PhasePlan(phase, 25_000, 25_000, 15_000, 25_000, 1.0, [big, rest], [])}


def _concentration(plans: dict[str, PhasePlan], spec: PhaseSpec) -> str:
    [w] = [w for w in check_plans(plans, [spec], min_top_epochs=0) if w["check"] == "concentration"]
    return w["message"]


def test_one_document_of_a_pretraining_phase_is_dropped_not_cut():
    said = _concentration(_one_large_document("p1", "web/all", 4.0), PhaseSpec("p1", tokens=25_000, mix={"web": 1.0}))
    assert "'huge' (6,000 tokens × 2.00 epochs), takes 48.0% of its tokens" in said
    assert "cut" not in said and "ingest.max_chars drops every document longer than that" in said
    assert "mixture.max_epochs.web/all" in said


def test_one_document_of_a_midtraining_phase_points_at_the_cap_and_at_its_cap_the_budget():
    spec = PhaseSpec("m1", stage="midtrain", tokens=25_000, mix={"long_docs": 1.0})
    under = _concentration(_one_large_document("m1", "long_docs/all", 4.0), spec)
    assert (
        "ingest.max_chars" not in under
        and "lower long_docs/all's cap (mixture.max_epochs.long_docs/all) or repeat" in under
    )
    assert "budget" not in under  # under its cap, a larger budget gives every group the same share
    at_cap = _concentration(_one_large_document("m1", "long_docs/all", 2.0), spec)
    assert (
        "long_docs/all is at its cap, so raising the phase's budget (phases.m1.budget) gives the rest to the others"
        in at_cap
    )


def test_the_auto_scale_log_names_the_phases_it_fitted(caplog):
    specs = [
        PhaseSpec("p1", tokens=1000, mix={"web": 1.0}),
        PhaseSpec("m1", stage="midtrain", tokens=100, mix={"reasoning": 1.0}),
    ]
    with caplog.at_level(logging.INFO, logger="curation.mixture.scale"):
        assert resolve_scale("auto", specs, {"m1": {"reasoning/all": GroupStat(50, 1.0, 5)}}, {"*": 4.0}) > 0
    assert "the budgets of phases m1 (mixture.scale_fit's pretrain phases alone fit no scale above 0)" in caplog.text
    assert "pretrain phases' budgets" not in caplog.text
    caplog.clear()
    stats = {"p1": {"web/all": GroupStat(500, 1.0, 5)}, "m1": {"reasoning/all": GroupStat(50, 1.0, 5)}}
    with caplog.at_level(logging.INFO, logger="curation.mixture.scale"):
        resolve_scale("auto", specs, stats, {"*": 4.0})
    assert "the budgets of phases p1 as large as the data allows" in caplog.text
