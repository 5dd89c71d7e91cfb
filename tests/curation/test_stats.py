"""Run statistics: every view's numbers equal the ledgers, docs, artifacts and manifests they read.

The reference numbers are computed here straight from the files with pandas, not through
``curation.stats.run``.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from curation.stats import run as stats
from curation.stats.dedup import cluster_size_distribution, dedup_summary, duplicate_clusters
from curation.stats.drops import drop_examples, reason_examples
from curation.stats.edu import calibration_summary, edu_calibration, edu_confusion, edu_stage_metrics, edu_threshold
from curation.stats.funnel import drop_reasons, funnel, funnel_by_lang
from curation.stats.mixture import (
    mixture_by_kind,
    mixture_composition,
    mixture_phases,
    mixture_replay,
    mixture_shortfalls,
    pretrain_epochs,
)
from curation.stats.scores import bucket_thresholds, category_tokens, score_columns, score_histogram, scores
from tests.curation.test_stats_fixture import run_stages, shared_run
from tests.helpers import read_parts

pytestmark = pytest.mark.slow  # builds a synthetic run through the runner (~6 s, once per session)

STAGES = run_stages()


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return shared_run(tmp_path_factory)


@pytest.fixture(scope="module")
def run(run_dir: Path) -> stats.Run:
    return stats.open_run(run_dir)


def _folder(run_dir: Path, stage: str) -> Path:
    return next(p for p in run_dir.iterdir() if p.name[:2].isdigit() and p.name[3:] == stage)


def _ledger(run_dir: Path, stage: str) -> pd.DataFrame:
    return read_parts(_folder(run_dir, stage) / "ledger")


def _docs(run_dir: Path, stage: str) -> pd.DataFrame:
    return read_parts(_folder(run_dir, stage) / "docs")


def test_open_run_lists_finished_stages_in_order(run):
    assert [s.name for s in run.stages] == STAGES
    assert run.record["recipe"]["name"] == "stats-fixture"
    assert stats.missing_stage_note(run, "semdedup") == (
        "semdedup did not run in run: it is disabled in the recipe (semdedup.enabled=false; set semdedup.enabled=true to run it)")
    assert stats.missing_stage_note(run, "web_quality") is None


def test_open_run_says_what_is_wrong(tmp_path):
    with pytest.raises(FileNotFoundError, match="not a run folder"):
        stats.open_run(tmp_path / "nope")
    (tmp_path / "00_ingest").mkdir()
    with pytest.raises(FileNotFoundError, match="no finished stage folders"):
        stats.open_run(tmp_path)


def test_funnel_equals_docs_and_ledger_rows(run, run_dir):
    f = funnel(run).set_index("stage")
    previous = None
    for stage in STAGES:
        docs, ledger = _docs(run_dir, stage), _ledger(run_dir, stage)
        row = f.loc[stage]
        assert row["docs_kept"] == len(docs) and row["tokens_kept"] == docs["n_tokens"].sum()
        assert row["docs_dropped"] == len(ledger) and row["tokens_dropped"] == ledger["n_tokens"].sum()
        assert row["docs_in"] == len(docs) + len(ledger)
        if previous is not None:  # a stage's input is the previous stage's output
            assert row["docs_in"] == len(previous)
        previous = docs


def test_funnel_by_source_equals_rows_per_source(run, run_dir):
    f = funnel(run, by_source=True)
    for stage in STAGES:
        docs, ledger = _docs(run_dir, stage), _ledger(run_dir, stage)
        got = f[f["stage"] == stage].set_index("source")
        kept = docs.groupby("source")["n_tokens"].agg(["size", "sum"])
        dropped = ledger.assign(source=ledger["source"].fillna("unknown")).groupby("source")["n_tokens"].agg(["size", "sum"])
        for src in set(kept.index) | set(dropped.index):
            k = kept.loc[src] if src in kept.index else pd.Series({"size": 0, "sum": 0})
            d = dropped.loc[src] if src in dropped.index else pd.Series({"size": 0, "sum": 0})
            assert (got.at[src, "docs_kept"], got.at[src, "tokens_kept"]) == (k["size"], k["sum"]), (stage, src)
            assert (got.at[src, "docs_dropped"], got.at[src, "tokens_dropped"]) == (d["size"], d["sum"]), (stage, src)


def test_funnel_by_lang_equals_kept_rows_per_language_and_adds_up(run, run_dir):
    f = funnel_by_lang(run)
    whole = funnel(run).set_index("stage")
    for stage in STAGES:
        docs = _docs(run_dir, stage)
        got = f[f["stage"] == stage].set_index("lang")
        kept = docs.groupby(docs["lang"].fillna("und"))["n_tokens"].agg(["size", "sum"])
        for lang in kept.index:
            assert (got.at[lang, "docs_kept"], got.at[lang, "tokens_kept"]) == tuple(kept.loc[lang]), (stage, lang)
        assert got["docs_in"].sum() == whole.at[stage, "docs_in"] and got["tokens_in"].sum() == whole.at[stage, "tokens_in"]
        assert got["docs_dropped"].sum() == whole.at[stage, "docs_dropped"]


def test_drop_reasons_equal_ledger_counts_by_reason(run, run_dir):
    r = drop_reasons(run)
    expected = pd.concat([_ledger(run_dir, s) for s in STAGES]).groupby(["stage", "reason"])["n_tokens"].agg(["size", "sum"])
    got = r.set_index(["stage", "reason"])
    assert sorted(got.index) == sorted(expected.index)
    for key in expected.index:
        assert (got.at[key, "documents"], got.at[key, "tokens"]) == tuple(expected.loc[key]), key
    by_source = drop_reasons(run, by_source=True)
    assert by_source["documents"].sum() == r["documents"].sum()


def test_drop_examples_are_ledger_rows_with_the_kept_duplicate(run, run_dir):
    ex = drop_examples(run, "near_duplicate", n=4)
    ledger = _ledger(run_dir, "minhash_dedup").set_index("doc_id")
    assert len(ex) == 4 and set(ex["stage"]) == {"minhash_dedup"}
    docs = _docs(run_dir, "minhash_dedup").set_index("doc_id")
    for row in ex.itertuples():
        assert ledger.at[row.doc_id, "reason"] == "near_duplicate"
        assert row.preview == ledger.at[row.doc_id, "preview"]
        assert row.detail == json.loads(ledger.at[row.doc_id, "detail"])
        assert row.kept_id == row.detail["duplicate_of"]
        assert row.kept_preview == docs.at[row.kept_id, "text"][:300]
    again = drop_examples(run, "near_duplicate", n=4)
    assert again["doc_id"].tolist() == ex["doc_id"].tolist()  # deterministic sample
    assert len(drop_examples(run, "near_duplicate", n=100)) == len(ledger)
    low = drop_examples(run, "low_quality", n=10)
    assert low["kept_id"].isna().all() and low["kept_preview"].isna().all()
    assert drop_examples(run, "semantic_duplicate").empty


def test_reason_examples_cover_every_reason(run):
    found = reason_examples(run, n=2)
    assert sorted(found) == sorted(zip(drop_reasons(run)["stage"], drop_reasons(run)["reason"], strict=True))
    assert all(1 <= len(v) <= 2 for v in found.values())


def test_scores_equal_docs_columns_and_ledger_details(run, run_dir):
    s = scores(run)
    assert score_columns(run) == {"heuristics": "quality_score_heuristics", "linear": "quality_score_linear"}
    docs = _docs(run_dir, "web_quality").set_index("doc_id")
    ledger = _ledger(run_dir, "web_quality").set_index("doc_id")
    for name in ("heuristics", "linear"):
        sub = s[s["scorer"] == name].set_index("doc_id")
        kept = docs[docs["source"] == "web"]
        assert set(sub.index) == set(kept.index) | set(ledger.index)
        assert np.allclose(sub.loc[kept.index, "score"], kept[f"quality_score_{name}"])
        for doc_id, detail in ledger["detail"].items():
            assert sub.at[doc_id, "score"] == json.loads(detail)["scores"][name]
            assert not sub.at[doc_id, "kept"]
    th = bucket_thresholds(run)
    extra = json.loads((_folder(run_dir, "web_quality") / "stats.json").read_text())["extra"]["thresholds"]
    assert th == extra and all(len(v) == 19 for v in th.values())
    code = scores(run, "code_quality", "code_score_")
    assert set(code["scorer"]) == {"structural"} and len(code) == 12  # 6 kept + 6 low-tier in the ledger
    assert scores(run, "semdedup").empty


def test_score_histogram_weights_by_tokens(run):
    s = scores(run)
    h = score_histogram(s, "linear", bins=7)
    sub = s[s["scorer"] == "linear"]
    assert h["documents"].sum() == len(sub) and h["tokens"].sum() == sub["n_tokens"].sum()
    edges = np.array([0.0, 0.5, 1.0])
    h2 = score_histogram(s, "linear", bins=edges)
    assert h2["tokens"].tolist() == [sub.loc[sub["score"] < 0.5, "n_tokens"].sum(), sub.loc[sub["score"] >= 0.5, "n_tokens"].sum()]


def test_category_tokens_equal_docs_and_ledger(run, run_dir):
    for column, stage, short in (("quality_level", "web_quality", "level"), ("code_tier", "code_quality", "tier"), ("edu_band", "edu_score", "band")):
        got = category_tokens(run, column)
        got = got[got["stage"] == stage]
        docs, ledger = _docs(run_dir, stage), _ledger(run_dir, stage)
        kept = docs[docs[column].notna()].groupby(column)["n_tokens"].sum()
        for value, tokens in kept.items():
            assert got[(got["value"] == value) & got["kept"]]["tokens"].sum() == tokens, (column, value)
        dropped_values = [json.loads(d).get(short, r) for d, r in zip(ledger["detail"], ledger["reason"], strict=True)]
        dropped = ledger.assign(value=dropped_values).groupby("value")["n_tokens"].sum()
        for value, tokens in dropped.items():
            assert got[(got["value"] == value) & ~got["kept"]]["tokens"].sum() == tokens, (column, value)
        assert got["documents"].sum() == docs[column].notna().sum() + len(ledger)
    levels = category_tokens(run, "quality_level")["value"].tolist()
    assert levels.index("high") < levels.index("medium") < levels.index("low")  # shown best first


def test_code_web_tiers_count_only_the_pages_it_recalled(run, run_dir):
    docs, ledger = _docs(run_dir, "code_web"), _ledger(run_dir, "code_web")
    pages = docs[docs["source"] == "code_web"]
    assert len(pages) and len(ledger) and docs["code_tier"].notna().sum() > len(pages)  # code files carry their tiers through
    got = category_tokens(run, "code_tier")
    cw = got[got["stage"] == "code_web"]
    assert set(cw["source"]) == {"code_web"}
    assert cw.loc[cw["kept"], "documents"].sum() == len(pages) and cw.loc[~cw["kept"], "documents"].sum() == len(ledger)
    assert cw.loc[cw["kept"], "tokens"].sum() == pages["n_tokens"].sum()
    assert set(cw.loc[~cw["kept"], "value"]) == {"low"}
    assert list(dict.fromkeys(got["stage"])) == ["code_quality", "code_web"]
    s = scores(run, "code_web", "code_score_", sources=("code_web",))
    assert s.loc[s["kept"], "doc_id"].tolist() == pages["doc_id"].tolist()
    assert np.allclose(s.loc[s["kept"], "score"], pages["code_score_structural"])


def _manifests(run_dir: Path) -> dict[str, dict]:
    return {p.stem: json.loads(p.read_text()) for p in sorted((run_dir / "80_mixture" / "manifests").glob("*.json"))}


def test_mixture_views_equal_manifest_fields(run, run_dir):
    ms = _manifests(run_dir)
    phases = mixture_phases(run).set_index("phase")
    comp = mixture_composition(run)
    assert sorted(phases.index) == sorted(ms)
    for name, m in ms.items():
        assert phases.at[name, "tokens"] == m["totals"]["tokens"] and phases.at[name, "documents"] == m["totals"]["documents"]
        assert phases.at[name, "budget_tokens"] == m["budget"]["tokens"] and phases.at[name, "planned_tokens"] == m["budget"]["planned_tokens"]
        assert phases.at[name, "shortfall_tokens"] == sum(s["tokens"] for s in m["shortfalls"])
        rows = comp[(comp["phase"] == name) & comp["shipped"]].set_index("group")
        assert sorted(rows.index) == sorted(g["name"] for g in m["groups"])
        for g in m["groups"]:
            for key in ("documents", "tokens", "planned_tokens", "weight", "epochs", "cap", "repeat", "nominal_epochs"):
                assert rows.at[g["name"], key] == g[key], (name, g["name"], key)
            assert rows.at[g["name"], "tokens"] == sum(s["tokens"] for s in g["shards"])
        excluded = comp[(comp["phase"] == name) & ~comp["shipped"]]
        assert sorted(excluded["group"]) == sorted(g["name"] for g in m["excluded_groups"])
        if len(rows):
            assert rows["token_share"].sum() == pytest.approx(1.0)
    replay = mixture_replay(run)
    for name, m in ms.items():
        rows = replay[replay["phase"] == name].set_index("group")
        for g in m["groups"]:
            assert (rows.at[g["name"], "planned_tokens"], rows.at[g["name"], "replay_tokens"]) == (g["planned_tokens"], g["replay_tokens"])
        total = rows.loc["(phase)"]
        assert total["replay_tokens"] == m["budget"]["replay_tokens"] and total["planned_tokens"] == m["budget"]["planned_tokens"]
        assert total["planned_share"] == (1.0 if m["groups"] else 0.0)  # a phase with no data has no share to show
    kinds = mixture_by_kind(run).set_index(["phase", "kind"])
    for name, m in ms.items():
        for kind in {g["kind"] for g in m["groups"]}:
            groups = [g for g in m["groups"] if g["kind"] == kind]
            planned, tokens = sum(g["planned_tokens"] for g in groups), sum(g["tokens"] for g in groups)
            assert kinds.at[(name, kind), "planned_tokens"] == planned and kinds.at[(name, kind), "tokens"] == tokens
            assert kinds.at[(name, kind), "epochs"] == pytest.approx(planned / tokens)
    epochs = pretrain_epochs(run).set_index("group")
    for group in epochs.index:
        want = sum(g["epochs"] for m in ms.values() if m["stage"] == "pretrain" for g in m["groups"] if g["name"] == group)
        assert epochs.at[group, "total"] == pytest.approx(want)
    assert epochs["total"].max() >= 3.2  # the fixture's top level, as the recipe wants
    short = mixture_shortfalls(run)
    assert len(short) == sum(len(m["shortfalls"]) for m in ms.values())
    assert set(short["reason"]) == {"epoch_cap", "no_data"}


def test_duplicate_clusters_equal_ledger_details(run, run_dir):
    for stage in ("exact_dedup", "minhash_dedup"):
        ledger = _ledger(run_dir, stage)
        details = [json.loads(d) for d in ledger["detail"]]
        keepers = pd.Series([d["duplicate_of"] for d in details])
        clusters = duplicate_clusters(run, stage).set_index("keeper")
        assert sorted(clusters.index) == sorted(keepers.unique())
        for keeper, n in keepers.value_counts().items():
            assert clusters.at[keeper, "size"] == n + 1 and clusters.at[keeper, "removed"] == n
            reported = {d.get("group_size", d.get("cluster_size")) for d in details if d["duplicate_of"] == keeper}
            assert {clusters.at[keeper, "size_reported"]} == reported
        dist = cluster_size_distribution(clusters.reset_index())
        assert dist["documents"].sum() == len(ledger) + len(clusters)
    summary = dedup_summary(run).set_index("stage")
    assert summary.at["minhash_dedup", "removed"] == len(_ledger(run_dir, "minhash_dedup"))
    assert summary.at["minhash_dedup", "largest"] == 4
    assert duplicate_clusters(run, "semdedup").empty


def test_edu_calibration_equals_annotations_and_predictions(run, run_dir):
    cal = edu_calibration(run).set_index("doc_id")
    ann = pd.read_parquet(_folder(run_dir, "edu_score") / "artifacts" / "annotations" / "annotations.parquet").set_index("doc_id")
    docs = _docs(run_dir, "edu_score").set_index("doc_id")
    good = ann["score"].dropna()
    assert sorted(cal.index) == sorted(good.index)  # the failed annotation is left out
    assert (cal["annotated"] == good.loc[cal.index]).all()
    assert (cal["predicted"] == docs.loc[cal.index, "edu_score"]).all()
    s = calibration_summary(cal.reset_index(), edu_threshold(run))
    assert s["n"] == len(good) and s["tp"] + s["fp"] + s["fn"] + s["tn"] == len(good)
    assert s["mae"] == pytest.approx(float(np.mean(np.abs(cal["annotated"] - cal["predicted"]))))
    extra = json.loads((_folder(run_dir, "edu_score") / "stats.json").read_text())["extra"]
    recorded = edu_stage_metrics(run).set_index("key")["value"]
    assert recorded["distillation.metrics.heldout.mae"] == extra["distillation"]["metrics"]["heldout"]["mae"]
    assert recorded["annotation.failed"] == extra["annotation"]["failed"] == 1
    assert edu_confusion(run).values.tolist() == extra["distillation"]["metrics"]["heldout"]["confusion"]


def test_views_of_stages_that_did_not_run_are_empty(tmp_path_factory):
    run = stats.open_run(shared_run(tmp_path_factory, "foundation", stages=()))
    assert [s.name for s in run.stages] == ["ingest", "exact_dedup"]
    assert scores(run).empty and not bucket_thresholds(run)
    assert category_tokens(run, "quality_level").empty and category_tokens(run, "edu_band").empty
    assert mixture_phases(run).empty and mixture_composition(run).empty and pretrain_epochs(run).empty
    assert edu_calibration(run).empty and calibration_summary(edu_calibration(run)) == {"n": 0}
    assert edu_stage_metrics(run).empty and edu_confusion(run).empty
    assert dedup_summary(run)["stage"].tolist() == ["exact_dedup"]
    assert stats.missing_stage_note(run, "mixture") is not None


def test_stage_folders_left_over_from_an_older_run_are_left_out(run_dir, tmp_path):
    import shutil

    copy = tmp_path / "run"
    shutil.copytree(run_dir, copy)
    marker = copy / "50_code_quality" / "_SUCCESS"
    marker.write_text(json.dumps({**json.loads(marker.read_text()), "input_fingerprint": "an-older-web_quality-output"}))
    run = stats.open_run(copy)
    assert [s.name for s in run.stages] == ["ingest", "exact_dedup", "minhash_dedup", "web_quality"]
    assert run.stale == ["50_code_quality", "60_code_web", "70_edu_score", "80_mixture"]  # built on the stale one


def test_a_single_stage_folder_opens_as_a_one_stage_run(run_dir):
    one = stats.open_run(run_dir / "80_mixture")
    assert [s.name for s in one.stages] == ["mixture"] and one.record == {}
    assert funnel(one)["docs_dropped"].tolist() == [len(_ledger(run_dir, "mixture"))]
    assert sorted(mixture_phases(one)["phase"]) == sorted(_manifests(run_dir))
