"""Plots draw exactly the numbers of the ledgers, docs, artifacts and manifests (bars read back)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from curation.stats import plots
from curation.stats import run as stats
from curation.stats.dedup import cluster_size_distribution, duplicate_clusters
from curation.stats.edu import edu_calibration
from curation.stats.funnel import drop_reasons, funnel
from curation.stats.mixture import mixture_composition, pretrain_epochs
from curation.stats.scores import bucket_thresholds, category_tokens, scores
from tests.curation.test_stats_fixture import shared_run
from tests.helpers import read_parts

pytestmark = pytest.mark.slow  # builds a synthetic run through the runner (once per session)


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> stats.Run:
    return stats.open_run(shared_run(tmp_path_factory))


def _heights(container) -> list[float]:
    return [p.get_height() for p in container.patches]


def _widths(container) -> list[float]:
    return [p.get_width() for p in container.patches]


def _files(run: stats.Run, stage: str, kind: str) -> pd.DataFrame:
    return read_parts(run.stage(stage).folder / kind)


def test_funnel_bars_are_docs_and_ledger_rows(run):
    fig = plots.plot_funnel(funnel(run))
    docs_ax, tokens_ax = fig.axes
    kept, dropped = docs_ax.containers
    assert _heights(kept) == [len(_files(run, s.name, "docs")) for s in run.stages]
    assert _heights(dropped) == [len(_files(run, s.name, "ledger")) for s in run.stages]
    assert _heights(tokens_ax.containers[1]) == [_files(run, s.name, "ledger")["n_tokens"].sum() for s in run.stages]
    assert [t.get_text() for t in docs_ax.get_xticklabels()] == [s.name for s in run.stages]


def test_drop_reason_bars_are_ledger_counts(run):
    reasons = drop_reasons(run)
    fig = plots.plot_drop_reasons(reasons)
    ledgers = pd.concat([_files(run, s.name, "ledger") for s in run.stages])
    expected = ledgers.groupby(["stage", "reason"]).size()
    labels = [t.get_text() for t in fig.axes[0].get_yticklabels()]
    got = dict(zip(labels, _widths(fig.axes[0].containers[0]), strict=True))
    assert got == {f"{s}: {r}": n for (s, r), n in expected.items()}


def test_sources_lines_are_kept_tokens_per_source(run):
    fig = plots.plot_sources(funnel(run, by_source=True))
    web = next(line for line in fig.axes[0].lines if line.get_label() == "web")
    assert list(web.get_ydata()) == [_files(run, s.name, "docs").query("source == 'web'")["n_tokens"].sum() for s in run.stages]


def test_score_histograms_hold_every_scored_token_and_the_thresholds(run):
    s = scores(run)
    th = bucket_thresholds(run)
    fig = plots.plot_score_distributions(s, th)
    docs = _files(run, "web_quality", "docs")
    ledger = _files(run, "web_quality", "ledger")
    web_tokens = docs.loc[docs["source"] == "web", "n_tokens"].sum()
    for ax, name in zip(fig.axes, ["heuristics", "linear"], strict=False):
        kept, dropped = ax.containers
        assert sum(_heights(kept)) == web_tokens
        assert sum(_heights(dropped)) == ledger["n_tokens"].sum()
        lines = sorted(line.get_xdata()[0] for line in ax.lines)
        assert lines == sorted(th[name])


def test_category_bars_are_tokens_per_value(run):
    frame = category_tokens(run, "quality_level")
    fig = plots.plot_categories(frame, "quality_level")
    ax = fig.axes[0]
    labels = [t.get_text() for t in ax.get_xticklabels()]
    totals = np.sum([_heights(c) for c in ax.containers], axis=0)
    docs = _files(run, "web_quality", "docs")
    expected = docs.groupby("quality_level")["n_tokens"].sum().to_dict()
    expected["low"] = _files(run, "web_quality", "ledger")["n_tokens"].sum()
    assert dict(zip(labels, totals, strict=True)) == expected
    hatched = [p.get_hatch() for c in ax.containers for p, lab in zip(c.patches, labels, strict=True) if lab == "low"]
    assert hatched and all(h == "//" for h in hatched)


def test_mixture_bars_are_manifest_fields(run):
    manifests = {p.stem: json.loads(p.read_text()) for p in sorted((run.path / "80_mixture" / "manifests").glob("*.json"))}
    comp = mixture_composition(run)
    fig = plots.plot_mixture(comp)
    share_ax, epochs_ax = fig.axes[:2]
    phases = [t.get_text() for t in share_ax.get_yticklabels()]
    shipped = {p: m for p, m in manifests.items() if m["groups"]}
    assert phases == list(shipped)
    for container in share_ax.containers:
        group = container.get_label()
        for phase, width in zip(phases, _widths(container), strict=True):
            groups = {g["name"]: g for g in shipped[phase]["groups"]}
            planned = sum(g["planned_tokens"] for g in groups.values())
            want = groups[group]["planned_tokens"] / planned if group in groups else 0.0
            assert width == pytest.approx(want), (phase, group)
    for container in epochs_ax.containers:
        phase = container.get_label()
        groups = {g["name"]: g["epochs"] for g in shipped[phase]["groups"]}
        labels = sorted(comp.loc[comp["shipped"], "group"].unique())
        assert _widths(container) == [groups.get(g, 0.0) for g in labels]
    epochs = pretrain_epochs(run)
    fig = plots.plot_pretrain_epochs(epochs)
    want = {g["name"]: 0.0 for m in manifests.values() for g in m["groups"] if m["stage"] == "pretrain"}
    for m in manifests.values():
        for g in m["groups"]:
            if m["stage"] == "pretrain":
                want[g["name"]] += g["epochs"]
    labels = [t.get_text() for t in fig.axes[0].get_yticklabels()]
    assert dict(zip(labels, _widths(fig.axes[0].containers[0]), strict=True)) == pytest.approx(want)


def test_cluster_size_bars_are_ledger_groups(run):
    dists = {s: cluster_size_distribution(duplicate_clusters(run, s)) for s in ("exact_dedup", "minhash_dedup")}
    fig = plots.plot_cluster_sizes(dists)
    for ax, stage in zip(fig.axes, dists, strict=True):
        ledger = _files(run, stage, "ledger")
        sizes = pd.Series([json.loads(d)["duplicate_of"] for d in ledger["detail"]]).value_counts() + 1
        expected = sizes.value_counts().sort_index()
        assert [t.get_text() for t in ax.get_xticklabels()] == [str(s) for s in expected.index]
        assert _heights(ax.containers[0]) == expected.tolist()


def test_edu_calibration_points_are_annotations_and_scores(run):
    cal = edu_calibration(run)
    fig = plots.plot_edu_calibration(cal, 3.0)
    points = fig.axes[0].collections[0].get_offsets()
    ann = pd.read_parquet(run.stage("edu_score").folder / "artifacts" / "annotations" / "annotations.parquet")
    ann = ann.dropna(subset=["score"]).set_index("doc_id")["score"]
    docs = _files(run, "edu_score", "docs").set_index("doc_id")["edu_score"]
    expected = sorted((ann[i], docs[i]) for i in ann.index)
    assert sorted(map(tuple, np.asarray(points))) == expected


def test_png_and_empty_figures(run):
    png = plots.figure_png(plots.plot_funnel(funnel(run)))
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    empty = plots.plot_mixture(mixture_composition(run).iloc[0:0])
    assert "did not run" in empty.axes[0].texts[0].get_text()
    assert plots.figure_png(empty)[:4] == b"\x89PNG"


def test_plots_work_under_the_agg_backend(tmp_path: Path, run):
    import subprocess
    import sys

    code = (
        "import matplotlib; matplotlib.use('Agg'); from curation.stats import plots, run as stats; "
        "from curation.stats.funnel import funnel; "
        f"r = stats.open_run({str(run.path)!r}); plots.plot_funnel(funnel(r)).savefig({str(tmp_path / 'f.png')!r})"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)
    assert (tmp_path / "f.png").stat().st_size > 1000
