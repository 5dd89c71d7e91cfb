import math

import pytest

from curation.mixture import (
    Budget,
    GroupStat,
    PhaseSpec,
    lookup,
    plan_phase,
    plan_phases,
    pretrain_epochs,
)
from pipelines.stages.mixture import DEFAULT_PHASES, DEFAULT_REPEATS, MixtureConfig

STATS = {
    "web/high": GroupStat(1_000, 4.0, 10),
    "web/medium": GroupStat(5_000, 1.0, 50),
    "web/low": GroupStat(3_000, 0.0, 30),
    "code/high": GroupStat(2_000, 2.0, 20),
}


def spec(budget: Budget, **kw) -> PhaseSpec:
    return PhaseSpec("p", budget=budget, mix=kw.pop("mix", {"web": 1.0, "code": 0.5}), **kw)


def test_fraction_budget_gives_each_group_fraction_times_its_nominal_epochs():
    plan = plan_phase(spec(Budget(fraction=0.5)), STATS, caps={"*": 10.0})
    assert plan.group("web/high").epochs == pytest.approx(2.0)  # 0.5 × 1.0 × 4
    assert plan.group("web/medium").epochs == pytest.approx(0.5)
    assert plan.group("code/high").epochs == pytest.approx(0.5)  # 0.5 × 0.5 × 2
    assert plan.nominal_tokens == 4 * 1000 + 5000 + 1 * 2000
    assert plan.budget_tokens == 5500 and plan.budget_met
    # Weights are planned tokens over the phase's planned tokens.
    assert plan.group("web/high").weight == pytest.approx(2000 / 5500)
    assert sum(g.weight for g in plan.groups) == pytest.approx(1.0)


def test_zero_repeat_groups_get_zero_weight_and_no_tokens():
    plan = plan_phase(spec(Budget(fraction=1.0)), STATS, caps={})
    low = plan.group("web/low")
    assert (low.epochs, low.weight, low.planned_tokens) == (0.0, 0.0, 0)
    assert plan.unique_tokens == 8_000  # web/low is not available to the phase


def test_absolute_budget_scales_every_group_alike_and_is_met():
    plan = plan_phase(spec(Budget(tokens=22_000)), STATS, caps={})
    assert plan.scale == pytest.approx(2.0)
    assert plan.group("web/high").epochs == pytest.approx(8.0)
    assert plan.group("web/medium").epochs == pytest.approx(2.0)  # nominal 1 × 1
    assert plan.group("code/high").epochs == pytest.approx(2.0)  # nominal 0.5 × 2
    assert abs(plan.planned_tokens - 22_000) <= 0.01 * 22_000
    assert plan.shortfalls == []


def test_cap_clamps_epochs_and_names_the_short_group_with_its_tokens(caplog):
    plan = plan_phase(spec(Budget(tokens=22_000)), STATS, caps={"*": 3.0})
    high = plan.group("web/high")
    assert high.epochs == 3.0  # wanted 8
    assert plan.group("web/medium").epochs == pytest.approx(2.0)  # untouched: the mixture is not silently changed
    short = {s["group"]: s for s in plan.shortfalls}
    assert short["web/high"]["tokens"] == (8 - 3) * 1000
    assert short["web/high"]["reason"] == "epoch_cap" and short["web/high"]["wanted_epochs"] == pytest.approx(8.0)
    assert "code/high" not in short and "web/medium" not in short
    assert not plan.budget_met
    assert plan.planned_tokens + sum(s["tokens"] for s in plan.shortfalls) == 22_000
    assert "short of 5000 tokens in group web/high" in caplog.text


def test_redistribute_moves_the_deficit_to_groups_under_their_caps():
    plan = plan_phase(spec(Budget(tokens=22_000)), STATS, caps={"*": 3.0}, on_cap="redistribute")
    assert plan.group("web/high").epochs == 3.0
    med, code = plan.group("web/medium"), plan.group("code/high")
    assert med.epochs == pytest.approx(code.epochs)  # equal nominal epochs stay equal
    assert med.epochs * 5_000 + code.epochs * 2_000 == pytest.approx(22_000 - 3_000)
    assert plan.budget_met and plan.shortfalls == [] and plan.redistributed
    assert all(g.epochs <= 3.0 + 1e-12 for g in plan.groups)


def test_redistribute_reports_a_shortfall_when_every_group_is_capped():
    plan = plan_phase(spec(Budget(tokens=100_000)), STATS, caps={"*": 3.0}, on_cap="redistribute")
    assert all(g.epochs == 3.0 for g in plan.groups if g.nominal_epochs > 0)
    assert abs(sum(s["tokens"] for s in plan.shortfalls) - (100_000 - 3 * 8_000)) <= len(plan.shortfalls)  # per-group rounding


def test_no_data_is_a_shortfall_of_the_whole_budget():
    plan = plan_phase(spec(Budget(tokens=500), mix={"reasoning": 1.0}), STATS, caps={})
    assert plan.planned_tokens == 0
    assert plan.shortfalls == [{"group": None, "reason": "no_data", "tokens": 500, "cap": None, "wanted_epochs": None}]


def test_pretraining_caps_hold_over_both_phases():
    p1 = PhaseSpec("p1", budget=Budget(tokens=6_000), mix={"web": 1.0})
    p2 = PhaseSpec("p2", budget=Budget(tokens=6_000), mix={"web": 1.0})
    stats = {"web/high": GroupStat(1_000, 1.0, 1)}
    plans = plan_phases([p1, p2], {"p1": stats, "p2": stats}, {"web/high": 8.0})
    assert plans["p1"].group("web/high").epochs == 6.0
    assert plans["p2"].group("web/high").epochs == 2.0  # 8 − 6 left
    assert plans["p2"].shortfalls[0]["tokens"] == 4_000
    assert pretrain_epochs(plans, [p1, p2]) == {"web/high": 8.0}


def test_midtraining_caps_are_per_phase():
    p1 = PhaseSpec("p1", budget=Budget(tokens=3_000), mix={"web": 1.0})
    m = PhaseSpec("m", stage="midtrain", budget=Budget(tokens=3_000), mix={"web": 1.0})
    stats = {"web/high": GroupStat(1_000, 1.0, 1)}
    plans = plan_phases([p1, m], {"p1": stats, "m": stats}, {"*": 4.0})
    assert plans["m"].group("web/high").epochs == 3.0


def test_lookup_prefers_exact_then_most_specific_glob():
    table = {"*": 1.0, "web/*": 2.0, "web/high": 3.0}
    assert lookup(table, "web/high", 0) == 3.0
    assert lookup(table, "web/low", 0) == 2.0
    assert lookup(table, "code/low", 0) == 1.0
    assert lookup({}, "code/low", 7.0) == 7.0


def test_budget_and_phase_parsing_say_what_is_wrong():
    assert Budget.parse({"tokens": "1e9"}, "x") == Budget(tokens=1_000_000_000)
    assert Budget.parse({"fraction": 0.5}, "x") == Budget(fraction=0.5)
    with pytest.raises(ValueError, match="budget must be"):
        Budget.parse({"tokens": 1, "fraction": 1}, "x")
    with pytest.raises(ValueError, match="unknown key 'packin'"):
        PhaseSpec.parse("p", {"packin": "none"})
    with pytest.raises(ValueError, match="packing must be one of"):
        PhaseSpec.parse("p", {"packing": "greedy"})


def test_default_recipe_top_web_level_reaches_3_2_epochs_and_low_levels_get_zero():
    """GLM-4.5: the top web level contributes over 3.2 epochs over pre-training; low / low tier are discarded."""
    cfg = MixtureConfig()
    specs = cfg.phase_specs()
    assert [s.name for s in specs] == list(DEFAULT_PHASES)
    groups = ["web/high", "web/medium_high", "web/medium", "web/medium_low", "web/low", "code/high", "code/medium",
              "code/low", "code_web/high", "code_web/low", "math_science/high", "web_edu/high"]
    stats = {g: GroupStat(10_000 * (i + 1), DEFAULT_REPEATS[g], 10) for i, g in enumerate(groups)}
    plans = plan_phases(specs, {s.name: stats for s in specs if s.stage == "pretrain"}, cfg.max_epochs)
    epochs = pretrain_epochs(plans, specs)
    assert epochs["web/high"] >= 3.2
    assert epochs["web/low"] == 0.0 and epochs["code/low"] == 0.0 and epochs["code_web/low"] == 0.0
    assert epochs["web/high"] > epochs["web/medium_high"] > epochs["web/medium"] > epochs["web/medium_low"] > 0
    for name in ("pretrain_phase1", "pretrain_phase2"):
        assert plans[name].shortfalls == [] and plans[name].budget_met
    # Phase 2 up-samples code and math & science relative to phase 1.
    share = {n: {g.group: g.weight for g in plans[n].groups} for n in ("pretrain_phase1", "pretrain_phase2")}
    for g in ("code/high", "code_web/high", "math_science/high"):
        assert share["pretrain_phase2"][g] > share["pretrain_phase1"][g]
    assert all(e <= lookup(cfg.max_epochs, g, math.inf) + 1e-9 for g, e in epochs.items())
