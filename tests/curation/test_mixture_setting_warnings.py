"""Warnings that name the user's own setting when it, not the data, is the cause."""

from __future__ import annotations

import logging

from curation.mixture.checks import check_plans, check_used_caps
from curation.mixture.phases import Budget, PhaseSpec, merged_phases
from curation.mixture.plan import GroupPlan, GroupStat, PhasePlan, plan_phases
from curation.mixture.replay_check import check_replay


def test_a_long_context_phase_without_pretraining_phases_says_the_recipe_left_its_long_documents_out(caplog) -> None:
    """Long documents are drawn from the kinds a pre-training phase mixes: with both pre-training
    phases left out none forms, though the data has them; "add data" would not help."""
    specs = merged_phases({"pretrain_phase1": None, "pretrain_phase2": None})
    assert not any(s.stage == "pretrain" for s in specs)
    with caplog.at_level(logging.WARNING, logger="curation.mixture.plan"):
        plan_phases(specs, {s.name: {} for s in specs}, {}, scale=1e-6)
    (said,) = [r.getMessage() for r in caplog.records if "midtrain_long_context_128k" in r.getMessage()]
    assert "no pre-training phase of this recipe mixes any" in said and "add data" not in said


def _web(epochs: float, cap: float) -> list[GroupPlan]:
    return [
        GroupPlan(
            "web/high", "web", 900, 20, 4.0, 1.0, 4.0, cap, epochs=epochs, planned_tokens=int(900 * epochs), weight=1.0
        )
    ]


def test_top_level_epochs_short_under_a_numeric_scale_name_the_scale_not_the_data() -> None:
    """scale=1e-9: web/high gets 0.01 epochs, far under its cap of 4: the data could give more."""
    plans = {"pretrain_phase1": PhasePlan("pretrain_phase1", 9, 9, 900, 9, 1e-9, _web(0.01, 4.0), [])}
    specs = [PhaseSpec("pretrain_phase1", tokens=9_000_000_000, mix={"web": 1.0})]
    (w,) = [w for w in check_plans(plans, specs, scale=1e-9) if w["check"] == "top_level_epochs"]
    assert (
        "raise mixture.scale (it is 1e-09) or set it to auto" in w["message"] and "cannot give more" not in w["message"]
    )
    (w,) = [
        w for w in check_plans(plans, specs) if w["check"] == "top_level_epochs"
    ]  # auto: the caps bind, the data is short
    assert "the data cannot give more" in w["message"]


def test_a_phase_two_emptied_by_scale_fit_names_scale_fit_not_a_scale_already_auto() -> None:
    p1 = PhasePlan("pretrain_phase1", 3600, 3600, 900, 3600, 1.0, _web(4.0, 4.0), [])
    p2 = PhasePlan("pretrain_phase2", 2000, 0, 0, 0, 1.0, _web(0.0, 0.0), [])
    specs = [
        PhaseSpec("pretrain_phase1", tokens=15, mix={"web": 1.0}),
        PhaseSpec("pretrain_phase2", tokens=7, mix={"web": 1.0}),
    ]
    plans = {"pretrain_phase1": p1, "pretrain_phase2": p2}
    (w,) = check_used_caps(plans, specs, {}, "auto", ("midtrain",))
    assert "mixture.scale_fit is ['midtrain']" in w["message"] and "lower mixture.scale" not in w["message"]
    own = [specs[0].with_budget(Budget(3600)), specs[1]]
    (w,) = check_used_caps(plans, own, {}, "auto", ("pretrain",))
    assert "lower phases.pretrain_phase1.budget" in w["message"]


def test_a_pretraining_phase_with_its_own_budget_is_advised_that_budget_not_the_scale() -> None:
    off = {
        "name": "web/high",
        "planned_tokens": 10_000,
        "replay_tokens": 5_000,
        "unique_tokens": 8_000,
        "unique_documents": 40,
    }
    (w,) = check_replay("pretrain_phase1", [off], 10_000, own_budget=True)
    assert w["message"].endswith("add data or raise phases.pretrain_phase1.budget")


def test_a_phase_without_data_at_scale_0_says_the_scale_made_its_budget_0(caplog) -> None:
    """scale=0 (or max_epochs {'*': 0} under auto): the reasoning phase's budget is 0 because of the
    setting; "the earlier stages' ledgers say where the documents went" sent the user looking for documents
    that never were."""
    specs = merged_phases(None)
    stats = {s.name: {"web/high": GroupStat(900, 4.0, 20)} for s in specs if s.stage == "pretrain"}
    with caplog.at_level(logging.WARNING, logger="curation.mixture.plan"):
        plan_phases(specs, stats, {}, scale=0.0)
    (said,) = [r.getMessage() for r in caplog.records if "midtrain_reasoning_32k" in r.getMessage()]
    assert "its budget is 0 because mixture.scale is 0" in said and "ledgers say where" not in said
