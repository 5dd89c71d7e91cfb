"""What the views say about odd runs: a mixture that ships nothing, a run that stopped, a stage
folder, a stage that scored nothing; and how the report and plots show it (tier cuts, colours,
blank cells, short axis labels, no empty headings, different inputs)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from curation.stats import plots
from curation.stats import report as report_mod
from curation.stats import run as stats
from curation.stats.funnel import drop_reasons
from curation.stats.html_section import Section
from curation.stats.mixture import mixture_by_kind, mixture_composition, pretrain_epochs
from curation.stats.report import compare_section, examples_section, mixture_section, run_section, scores_section
from tests.curation.test_stats_fixture import build_run, shared_run, write_corpus


def _stage(folder: Path, name: str, marker: dict | None = None, **stats_fields: object) -> Path:
    """A finished stage folder: _SUCCESS, stats.json and empty docs/ and ledger/ parts."""
    folder.mkdir(parents=True)
    (folder / "_SUCCESS").write_text(json.dumps(marker or {}))
    (folder / "stats.json").write_text(json.dumps({"stage": name, "in": {"documents": 0, "tokens": 0}, **stats_fields}))
    for sub, cols in (("docs", ["doc_id", "source", "n_tokens"]), ("ledger", ["doc_id", "reason", "detail", "source", "n_tokens", "preview"])):
        (folder / sub).mkdir()
        pq.write_table(pa.table({c: pa.array([], pa.int64() if c == "n_tokens" else pa.string()) for c in cols}),
                       folder / sub / "part-00000.parquet")
    return folder


def _stopped_run(tmp_path: Path) -> stats.Run:
    """A run interrupted after ingest: run.progress.json records the recipe and the stages not done."""
    run_dir = tmp_path / "stopped"
    _stage(run_dir / "00_ingest", "ingest", {"config_hash": "h0", "input_fingerprint": "raw", "output_fingerprint": "o0"})
    progress = {"status": "interrupted", "error": "KeyboardInterrupt", "seconds": 3.5,
                "recipe": {"name": "glm45", "recipe_path": "pipelines/configs/glm45.yaml", "stages": {"semdedup": {"enabled": False}}},
                "stages": [{"folder": "00_ingest", "name": "ingest", "config_hash": "h0", "input_fingerprint": "raw"},
                           {"folder": "40_web_quality", "name": "web_quality", "config_hash": "h4"}]}
    (run_dir / "run.progress.json").write_text(json.dumps(progress))
    return stats.open_run(run_dir)


def test_a_mixture_that_ships_nothing_has_a_bool_shipped_column_and_views_that_work(tmp_path):
    folder = _stage(tmp_path / "mix", "mixture")
    (folder / "manifests").mkdir()
    (folder / "manifests" / "pretrain_phase1.json").write_text(json.dumps(
        {"phase": "pretrain_phase1", "stage": "pretrain", "groups": [], "excluded_groups": [], "budget": {"tokens": 0}}))
    run = stats.open_run(folder)
    comp = mixture_composition(run)
    assert comp.empty and comp["shipped"].dtype == bool
    shipped = comp[comp["shipped"]]  # a row mask, not a column selection: the notebook's cell
    assert list(shipped.columns) == list(comp.columns)
    assert mixture_by_kind(run).empty and pretrain_epochs(run).empty
    assert "did not run" in plots.plot_mixture(comp).axes[0].texts[0].get_text()


def test_a_stage_of_a_run_that_stopped_says_the_run_stopped_before_it(tmp_path):
    run = _stopped_run(tmp_path)
    note = stats.missing_stage_note(run, "web_quality")
    assert note.startswith("web_quality did not run in stopped: the run stopped (interrupted: KeyboardInterrupt) before web_quality")
    assert "enabled" not in note
    assert "disabled in the recipe (semdedup.enabled=false" in stats.missing_stage_note(run, "semdedup")


def test_the_run_section_of_a_stopped_run_shows_its_recorded_recipe_and_time(tmp_path):
    run = _stopped_run(tmp_path)
    page = run_section(run).render()
    assert "recipe glm45 (pipelines/configs/glm45.yaml) · 3.5 s before it stopped" in page
    assert "?" not in page
    assert "interrupted" in stats.run_summary(run)  # the notebook's first cell prints this line


def test_a_stage_folder_says_the_other_stages_are_not_in_it(tmp_path):
    run = stats.open_run(_stage(tmp_path / "mix", "mixture", seconds=2.0))
    note = stats.missing_stage_note(run, "web_quality")
    assert "one stage folder" in note and "enabled" not in note and "did not finish" not in note
    page = run_section(run).render()
    assert "not recorded" in page and "recipe ?" not in page and "? s" not in page


def test_a_stage_that_ran_on_none_of_its_sources_says_it_ran_and_scored_none(tmp_path):
    from curation.stats.scores import category_note

    run = stats.open_run(_stage(tmp_path / "wq", "web_quality", config={"sources": ["web"]},
                                by_source={"code": {"in": {"documents": 6}}}))
    note = category_note(run, "quality_level")
    assert "web_quality ran in wq (0 documents in) and scored none of them: no document of its sources (web) reached it" in note
    assert "scored none" in scores_section(run).render()


def test_a_stage_that_scored_none_says_dropped_only_when_it_dropped(tmp_path):
    from curation.stats.scores import scored_none_note

    web = {"in": {"documents": 385}, "dropped": {"documents": 0}}
    kept = stats.open_run(_stage(tmp_path / "cw", "code_web", config={"sources": ["web"]}, by_source={"web": web}))
    note = scored_none_note(kept, "code_web")
    assert note.endswith("it kept the 385 documents of its sources (web) it got, none with a score") and "dropped" not in note
    some = {"web": {"in": {"documents": 10}, "dropped": {"documents": 4}}}
    part = stats.open_run(_stage(tmp_path / "cq", "code_quality", config={"sources": ["web"]}, by_source=some))
    assert "of the 10 documents of its sources (web) it got, 4 were dropped" in scored_none_note(part, "code_quality")
    every = {"web": {"in": {"documents": 10}, "dropped": {"documents": 10}}}
    gone = stats.open_run(_stage(tmp_path / "all", "code_quality", config={"sources": ["web"]}, by_source=every))
    assert "the 10 documents of its sources (web) it got were dropped before scoring" in scored_none_note(gone, "code_quality")


def test_code_score_plots_draw_the_recorded_tier_cuts(tmp_path_factory, monkeypatch):
    from curation.stats.scores import tier_cut_lines

    run = stats.open_run(shared_run(tmp_path_factory))
    assert tier_cut_lines(run, "code_quality") == {"structural": [0.3, 0.7]}
    assert tier_cut_lines(run, "code_web") == {"structural": [0.2, 0.6]}
    drawn: dict[str, dict] = {}
    real = plots.plot_score_distributions

    def spy(scores, thresholds=None, bins=40, label="thresholds"):
        drawn[str(scores["scorer"].iloc[0])] = thresholds
        fig = real(scores, thresholds, bins, label)
        assert all(("dotted" in ax.get_title()) == bool(ax.lines) for ax in fig.axes if ax.get_title())
        return fig

    monkeypatch.setattr(report_mod.plots, "plot_score_distributions", spy)
    scores_section(run)
    assert drawn["structural"] == {"structural": [0.2, 0.6]}  # the last code stage drawn: code_web's cut
    untitled = real(pd.DataFrame({"scorer": "s", "score": [0.1, 0.9], "n_tokens": [1, 2], "kept": True}), {})
    assert "dotted" not in untitled.axes[0].get_title()


def test_no_two_groups_of_a_phase_share_a_colour():
    groups = [f"{k}/{lvl}" for k in ("web", "code", "code_web", "math_science") for lvl in ("high", "medium", "low", "all")]
    comp = pd.DataFrame({"phase": "p1", "group": groups, "shipped": True, "token_share": 1 / len(groups), "epochs": 1.0})
    fig = plots.plot_mixture(comp)
    colours = [tuple(p.get_facecolor()) for p in fig.axes[0].patches]
    assert len(colours) == len(groups) == len(set(colours))


def test_token_axes_use_short_labels(tmp_path_factory):
    run = stats.open_run(shared_run(tmp_path_factory))
    fig = plots.plot_drop_reasons(drop_reasons(run))
    assert fig.axes[1].xaxis.get_major_formatter()(125000, 0) == "125k"


def test_missing_values_are_blank_cells_not_none():
    s = Section("t", "t")
    s.table(pd.DataFrame({"group": ["a", "b"], "cap": pd.Series([None, None], dtype=object),
                          "off": pd.Series([None, 0.5], dtype=object), "note": pd.Series([None, "x"], dtype=object)}))
    assert "None" not in s.render() and "<td>0.5</td>" in s.render()


def test_examples_off_leaves_no_empty_headings(tmp_path_factory):
    run = stats.open_run(shared_run(tmp_path_factory))
    page = examples_section(run, 0).render()
    assert "<h3>" not in page and "--examples 0" in page


def test_the_mixture_tables_say_which_token_count_they_show(tmp_path_factory):
    page = mixture_section(stats.open_run(shared_run(tmp_path_factory))).render()
    assert "tokens per language (per language: tokens of the documents as they were ranked, before FIM sentinels" in page
    assert "groups (tokens after FIM sentinels)" in page


@pytest.mark.slow
def test_a_comparison_of_runs_over_different_inputs_says_so(tmp_path_factory, tmp_path):
    from curation.stats.compare import input_difference

    a = stats.open_run(shared_run(tmp_path_factory, "foundation", stages=()))
    b = stats.open_run(build_run(tmp_path / "other", raw=write_corpus(tmp_path / "raw-other", seed=8), stages=()))
    assert input_difference(a, a) is None
    assert "read different inputs" in compare_section(a, b).render()


def test_a_run_that_reused_stages_does_not_call_its_last_invocation_the_total(tmp_path):
    """run.json's seconds are the last invocation's: stages it found up to date ran before it."""
    run_dir = tmp_path / "resumed"
    _stage(run_dir / "00_ingest", "ingest", {"config_hash": "h0", "input_fingerprint": "raw", "output_fingerprint": "o0"}, seconds=80.0)
    _stage(run_dir / "10_exact_dedup", "exact_dedup", {"config_hash": "h1", "input_fingerprint": "o0", "output_fingerprint": "o1"},
           seconds=2.5)
    record = {"status": "complete", "seconds": 3.1, "recipe": {"name": "glm45", "recipe_path": "glm45.yaml"},
              "stages": [{"name": "ingest", "folder": "00_ingest", "skipped": True, "seconds": 80.0},
                         {"name": "exact_dedup", "folder": "10_exact_dedup", "skipped": False, "seconds": 2.5}]}
    (run_dir / "run.json").write_text(json.dumps(record))
    line = stats.run_summary(stats.open_run(run_dir))
    assert "in total" not in line
    assert "3.1 s in its last invocation, which reused 1 stage(s) up to date from earlier ones (they took 80.0 s when they ran)" in line
