"""The mixture's accounting, planning helpers, per-document decision and manifest groups, on inline frames."""

import json

import pandas as pd
import pytest

from curation.mixture.accounting import (
    account,
    group_stats,
    language_table,
    live_groups,
    shard_counts,
    sum_accounts,
)
from curation.mixture.annotate import annotate
from curation.mixture.manifest import group_entries, phase_summary
from curation.mixture.phases import DEFAULT_PHASES, PhaseSpec, merged_phases
from curation.mixture.plan import GroupStat, plan_phases
from curation.mixture.policy import Policy
from curation.mixture.replay import copy_plans
from curation.mixture.scale import fit_scale, resolve_scale

POLICY = Policy(repeat={"web/high": 4.0, "web/medium": 1.0, "web/low": 0.0, "*": 1.0})
SPECS = [PhaseSpec("p1", tokens=1000, mix={"web": 1.0}), PhaseSpec("p2", tokens=500, mix={"web": 0.5, "agent": 1.0}, stage="midtrain")]


def corpus() -> pd.DataFrame:
    return pd.DataFrame({
        "doc_id": ["a", "b", "c", "d", "e"],
        "text": ["aaaa", "bb", "cccccc", "d", "ee"],
        "source": ["web", "web", "web", "agent", "reasoning"],
        "n_tokens": [40, 20, 60, 10, 5],
        "quality_level": ["high", "medium", "low", None, None],
        "lang": ["en", "zh", "en", "en", "en"],
    })


def test_partition_sums_add_up_to_the_whole_corpus_sums():
    df = corpus()
    whole = account(df, SPECS, POLICY)
    parts = sum_accounts(pd.concat([account(df.iloc[:2], SPECS, POLICY), account(df.iloc[2:], SPECS, POLICY)]))
    pd.testing.assert_frame_equal(whole.reset_index(drop=True), parts.reset_index(drop=True), check_dtype=False)
    p1 = whole[whole["phase"] == "p1"].set_index("group")
    assert p1.loc["web/high", "tokens"] == 40 and p1.loc["web/high", "repeat_tokens"] == 160.0
    assert p1.loc["web/low", "documents"] == 0 and p1.loc["web/low", "zero_tokens"] == 60  # excluded: counted apart


def test_group_stats_keep_the_size_of_zero_weight_groups_with_repeat_zero():
    stats = group_stats(account(corpus(), SPECS, POLICY))
    assert stats["p1"]["web/high"] == GroupStat(40, 4.0, 1, max_doc_tokens=40, max_doc="a")
    assert stats["p1"]["web/low"] == GroupStat(60, 0.0, 1)
    assert set(stats["p2"]) == {"web/high", "web/medium", "web/low", "agent/all"}


def test_live_groups_planned_epochs_and_shard_counts():
    agg = account(corpus(), SPECS, POLICY)
    plans = plan_phases(SPECS, group_stats(agg), {"*": 100.0}, scale=1.0)
    live = live_groups(plans)
    assert ("p1", "web/high") in live and ("p1", "web/low") not in live and ("p2", "agent/all") in live
    copies = copy_plans(plans, SPECS, {"*": 100.0})
    assert copies[("p1", "web/low")].epochs == 0.0
    assert copies[("p1", "web/high")].epochs == pytest.approx(4 * copies[("p1", "web/medium")].epochs)
    assert copies[("p2", "web/high")].steps == (("p2", copies[("p2", "web/high")].epochs),)  # mid-training: on its own
    counts = shard_counts(agg, live, target_chars=3)
    assert counts[("p1", "web/high")] == 2 and counts[("p1", "web/medium")] == 1  # 4 characters, 2 chars; at least one shard
    assert set(counts) == live


def test_language_table_lists_groups_with_a_repeat_factor():
    langs = language_table(account(corpus(), SPECS, POLICY))
    assert langs["p1"] == {"web/high": {"en": {"documents": 1, "tokens": 40}}, "web/medium": {"zh": {"documents": 1, "tokens": 20}}}


def test_resolve_scale_auto_fits_the_caps_and_a_number_is_taken_as_given():
    stats = group_stats(account(corpus(), SPECS, POLICY))
    assert resolve_scale(0.5, SPECS, stats, {"*": 4.0}) == 0.5
    auto = resolve_scale("auto", SPECS, stats, {"*": 4.0})
    assert auto == pytest.approx(fit_scale(SPECS, stats, {"*": 4.0}), rel=1e-8) and auto < fit_scale(SPECS, stats, {"*": 4.0})
    only_mid = {"p2": stats["p2"]}  # no data in the pre-training phase: the mid-training phases are fitted
    assert resolve_scale("auto", SPECS, only_mid, {"*": 4.0}) > 0


def test_merged_phases_override_by_key_and_drop_disabled_ones():
    specs = merged_phases({"pretrain_phase1": {"tokens": 10, "mix": {"web": 1.0}}, "pretrain_phase2": {"enabled": False}, "extra": {"stage": "midtrain", "tokens": 5, "mix": {"reasoning": 1.0}}})
    names = [s.name for s in specs]
    assert names == [n for n in DEFAULT_PHASES if n != "pretrain_phase2"] + ["extra"]
    first = specs[0]
    assert first.tokens == 10 and first.seq_length == DEFAULT_PHASES["pretrain_phase1"]["seq_length"]
    # a phase's mix is merged by kind, as every table of a recipe; a kind set to null leaves it
    assert dict(first.mix) == {**DEFAULT_PHASES["pretrain_phase1"]["mix"], "web": 1.0}
    only_web = {kind: None for kind in DEFAULT_PHASES["pretrain_phase1"]["mix"]} | {"web": 1.0}
    assert dict(merged_phases({"pretrain_phase1": {"mix": only_web}})[0].mix) == {"web": 1.0}


def test_annotate_keeps_documents_of_a_live_phase_and_says_why_the_others_are_out():
    df = corpus()
    out = annotate(df, SPECS, POLICY, live={("p1", "web/high"), ("p2", "web/high"), ("p2", "agent/all")})
    assert out["mixture_phases"].iloc[0] == "p1,p2" and out["mixture_phases"].iloc[3] == "p2"
    assert out["drop_reason"].tolist() == [None, "zero_weight", "low_quality", None, "no_phase"]
    assert json.loads(out["drop_detail"].iloc[1])["group"] == "web/medium"  # in a phase, but no epochs at this scale
    assert len(out) == len(df) and out["doc_id"].tolist() == df["doc_id"].tolist()


def test_group_entries_sum_shards_fim_and_packing_files():
    spec = PhaseSpec("p", tokens=100, mix={"web": 1.0}, seq_length=10, packing="best_fit")
    plan = plan_phases([spec], {"p": {"web/high": GroupStat(30, 1.0, 3)}}, {"*": 4.0}, scale=1.0)["p"]
    rec = {"phase": "p", "group": "web/high", "bytes": 1, "sha256": "x", "documents": 2, "tokens": 15, "unique_documents": 2,
           "unique_tokens": 15, "replay_documents": 2, "replay_tokens": 15, "packing_bytes": 1, "packing_sha256": "y",
           "sequences": 2, "packing_tokens": 15, "min_sequences": 2}
    records = pd.DataFrame([
        {**rec, "shard": 0, "path": "shards/p/web/high/part-00000.parquet", "fim": json.dumps({"psm": 1}), "packing_path": "packing/0"},
        {**rec, "shard": 1, "path": "shards/p/web/high/part-00001.parquet", "fim": json.dumps({"psm": 2, "spm": 1}), "packing_path": "packing/1"},
    ])
    entries, fim = group_entries(spec, plan, records)
    assert fim == {"psm": 3, "spm": 1}
    (entry,) = entries
    assert entry["tokens"] == 30 and len(entry["shards"]) == 2 and entry["fim"] == {"psm": 3, "spm": 1}
    assert entry["packing"]["sequences"] == 4 and entry["packing"]["fill_rate"] == 0.75
    manifest = {"totals": {"replay_tokens": 30, "tokens": 30, "shards": 2}, "languages": {}, "packing": {"fill_rate": 0.75},
                "budget": {"met": False}, "groups": entries}
    summary = phase_summary(plan, manifest)
    assert summary["shards"] == 2 and summary["groups"]["web/high"]["tokens"] == 30
    assert summary["groups"]["web/high"]["replay_tokens"] == 30 and summary["budget_met"] is False


def test_phase_keys_are_read_as_their_types():
    """fim "false" (a quoted YAML string) is false, not a true string; tokens may be written 1.5e13."""
    spec = PhaseSpec.parse("p", {"tokens": "1.5e13", "mix": {"web": "1"}, "fim": "false", "seq_length": 8192.0})
    assert spec.fim is False and spec.tokens == 15_000_000_000_000 and spec.mix == {"web": 1.0} and spec.seq_length == 8192
