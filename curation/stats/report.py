"""A self-contained HTML report of a run: the notebook's views as tables and embedded PNG plots.

>>> # html = build_report(open_run("runs/sample"))
>>> # Path("report.html").write_text(html)   # one file, no external resources

Sections (``<section id=…>``): run, funnel, drops, examples, scores, categories, mixture, edu,
dedup, and compare when a second run is given. A section for a stage that did not run says why
(:func:`~curation.stats.run.missing_stage_note`). The HTML parts are written by :mod:`.html_section`,
which escapes all text from the data (previews are raw web text).
"""

from __future__ import annotations

import html
import json

import pandas as pd

from curation.stats import plots
from curation.stats.compare import compare_runs, config_changes, input_difference, reason_changes
from curation.stats.dedup import DEDUP_STAGES, cluster_size_distribution, dedup_summary, duplicate_clusters
from curation.stats.drops import reason_examples
from curation.stats.edu import calibration_summary, edu_calibration, edu_confusion, edu_stage_metrics, edu_threshold
from curation.stats.funnel import drop_reasons, funnel, funnel_by_lang
from curation.stats.html_section import CSS, Section
from curation.stats.mixture import (
    manifests,
    mixture_by_kind,
    mixture_composition,
    mixture_exclusions,
    mixture_languages,
    mixture_phases,
    mixture_replay,
    mixture_shortfalls,
    mixture_warnings,
    pretrain_epochs,
)
from curation.stats.run import Run, missing_stage_note, run_summary
from curation.stats.scores import (
    CATEGORIES,
    bucket_thresholds,
    category_note,
    category_tokens,
    category_totals,
    scored_none_note,
    scores,
    tier_cut_lines,
)

SECTION_IDS = ("run", "funnel", "drops", "examples", "scores", "categories", "mixture", "edu", "dedup")
#: Score views: stage → (column prefix, title).
SCORE_VIEWS: dict[str, tuple[str, str, tuple[str, ...] | None]] = {
    "web_quality": ("quality_score_", "web quality", None),
    "code_quality": ("code_score_", "code quality", None),
    "code_web": ("code_score_", "code-related web pages", ("web", "code_web")),  # recalled pages keep source web
    "edu_score": ("edu_score", "educational value", None),
}
#: The two token counts of a mixture, and where each applies (docs/stats.md, "Two token counts").
FIM_NOTE = ("per language: tokens of the documents as they were ranked, before FIM sentinels; groups, kinds and "
            "shards count after them (code is a little larger there)")

def build_report(run: Run, compare: Run | None = None, examples: int = 3) -> str:
    """The whole report as one HTML string (plots embedded as ``data:`` PNGs)."""
    sections = [
        run_section(run), funnel_section(run), drops_section(run), examples_section(run, examples),
        scores_section(run), categories_section(run), mixture_section(run), edu_section(run), dedup_section(run),
    ]
    if compare is not None:
        sections.append(compare_section(run, compare))
    nav = " ".join(f'<a href="#{s.id}">{html.escape(s.title)}</a>' for s in sections)
    body = "\n".join(s.render() for s in sections)
    title = f"curation run report: {html.escape(run.name)}"
    return (
        f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>{title}</title>'
        f"<style>{CSS}</style></head><body>\n<h1>{title}</h1>\n<nav>{nav}</nav>\n{body}\n</body></html>\n"
    )


def run_section(run: Run) -> Section:
    s = Section("run", "Run")
    rec = run.recorded
    s.text("Folder " + run_summary(run, with_state=False))
    if run.state is not None and run.state.status != "complete":
        why = f": {run.state.error}" if run.state.error else ""
        s.note(f"this run did not finish ({run.state.status}{why}): the report shows the stages it completed")
    if run.stale:
        s.note(f"left out, as stale (not this run's current output: another recipe's stage, or made from another "
               f"output of an earlier stage): {', '.join(run.stale)}")
    rows = [{"stage": st.name, "folder": st.folder.name, "version": st.stats.get("version"),
             "config hash": str(st.stats.get("config_hash", ""))[:12], "seconds": st.stats.get("seconds")} for st in run.stages]
    s.table(pd.DataFrame(rows), "stages")
    for st in run.stages:  # the resolved config each stage ran with (collapsed)
        config = json.dumps(st.stats.get("config", {}), indent=1, sort_keys=True, ensure_ascii=False, default=str)
        s.parts.append(f"<details><summary>{html.escape(st.name)} config</summary><pre>{html.escape(config)}</pre></details>")
    if rec.get("versions"):
        s.table(pd.DataFrame(sorted(rec["versions"].items()), columns=["package", "version"]), "versions")
    return s


def funnel_section(run: Run) -> Section:
    s = Section("funnel", "Funnel")
    f = funnel(run)
    s.figure(plots.plot_funnel(f), "funnel: kept and dropped per stage")
    s.table(f, "per stage")
    by_source = funnel(run, by_source=True)
    s.figure(plots.plot_sources(by_source), "kept tokens per source")
    s.table(by_source, "per stage and source")
    by_lang = funnel_by_lang(run)
    if not by_lang.empty:
        s.table(by_lang, "per stage and natural language (lang)")
    return s


def drops_section(run: Run) -> Section:
    s = Section("drops", "Drop reasons")
    r = drop_reasons(run)
    s.figure(plots.plot_drop_reasons(r), "dropped documents and tokens per reason")
    s.table(r, "per stage and reason")
    s.table(drop_reasons(run, by_source=True), "per stage, source and reason")
    return s


def examples_section(run: Run, n: int) -> Section:
    s = Section("examples", "Examples of dropped documents")
    if n <= 0:
        s.text("Examples are off (--examples 0).")
        return s
    found = {key: ex for key, ex in reason_examples(run, n=n).items() if len(ex)}
    if not found:
        s.text("No document was dropped.")
    for (stage, reason), ex in found.items():
        s.parts.append(f"<h3>{html.escape(stage)}: {html.escape(reason)}</h3>")
        for row in ex.itertuples():
            kept = ""
            if isinstance(row.kept_id, str):
                kept = (f"<div>kept instead: <code>{html.escape(row.kept_id)}</code></div>"
                        f"<pre>{html.escape(_text(row.kept_preview) or '(not in the stage output)')}</pre>")
            s.parts.append(
                f'<div class="example"><div><code>{html.escape(str(row.doc_id))}</code> · {html.escape(str(row.source))} · '
                f"{row.n_tokens} tokens</div><pre>{html.escape(_text(row.preview))}</pre>"
                f"<div>detail: <code>{html.escape(json.dumps(row.detail, sort_keys=True, ensure_ascii=False))}</code></div>{kept}</div>"
            )
    return s


def scores_section(run: Run) -> Section:
    s = Section("scores", "Score distributions")
    for stage, (prefix, title, sources) in SCORE_VIEWS.items():
        s.parts.append(f"<h3>{html.escape(title)} ({stage})</h3>")
        note = missing_stage_note(run, stage)
        if note:
            s.note(note)
            continue
        sc = scores(run, stage, prefix, sources)
        if sc.empty:
            s.note(scored_none_note(run, stage))
            continue
        th, label = bucket_thresholds(run, stage), "bucket thresholds"
        if stage in ("code_quality", "code_web"):
            th, label = tier_cut_lines(run, stage, prefix), "tier cuts" + (" (pooled languages, *)" if stage == "code_quality" else "")
        if stage == "edu_score":
            th, label = {"edu_score": [edu_threshold(run)]}, "threshold"
        s.figure(plots.plot_score_distributions(sc, th, label=label), f"{title} score distributions")
        if th and stage == "web_quality":
            s.table(pd.DataFrame({k: pd.Series(v) for k, v in th.items()}).rename_axis("threshold").reset_index(), "bucket thresholds")
        cuts = run.stage(stage).extra.get("tier_cuts")
        if isinstance(cuts, dict):
            s.table(pd.DataFrame([{"language": k, "low cut": v[0], "high cut": v[1]} for k, v in cuts.items()]), "tier cuts")
    return s


def categories_section(run: Run) -> Section:
    s = Section("categories", "Quality levels, code tiers and edu bands (tokens)")
    for column in CATEGORIES:
        s.parts.append(f"<h3>{html.escape(column)}</h3>")
        frame = category_tokens(run, column)
        if frame.empty:
            s.note(category_note(run, column))
            continue
        s.figure(plots.plot_categories(frame, column), f"{column} tokens")
        s.table(category_totals(frame))
    return s


def mixture_section(run: Run) -> Section:
    s = Section("mixture", "Mixture composition per phase")
    phases = mixture_phases(run)
    if phases.empty:
        s.note(missing_stage_note(run, "mixture") or f"the mixture stage of {run.name} wrote no manifests")
        return s
    s.text("Scoring stages annotate; the mixture policy alone decides each document's group (precedence: code page "
           "recalled by code_web → code_web/<tier>; edu band high → web_edu/<band>; otherwise its web level), the "
           "exclusions (web/low, code/low, code_web/low) and every repeat factor (mixture.repeat). Each phase's budget "
           "is its token count in the recipe (GLM-4.5's: 15T, 7T, 500B, 500B, 100B) × one scale, unless the phase gives "
           "its own (docs/mixture.md); this run's budgets: "
           + ", ".join(f"{name} {m['budget']['tokens']:,}" for name, m in sorted(manifests(run).items(), key=lambda kv: kv[1]["stage"] != "pretrain"))
           + ".")
    s.table(phases, "phases")
    s.table(mixture_replay(run), "plan against replay: planned and replayed tokens per group (off = replayed / planned − 1)")
    warnings = mixture_warnings(run)
    if not warnings.empty:
        s.table(warnings, "warnings: checks of the plan")
    s.table(mixture_exclusions(run), "excluded by the mixture policy (reason, group, rule)")
    s.table(mixture_languages(run), f"tokens per language ({FIM_NOTE})")
    comp = mixture_composition(run)
    s.figure(plots.plot_mixture(comp), "mixture composition")
    s.table(mixture_by_kind(run), "by kind (source)")
    s.table(comp, "groups (tokens after FIM sentinels)")
    epochs = pretrain_epochs(run)
    s.figure(plots.plot_pretrain_epochs(epochs), "epochs over pre-training")
    s.table(epochs, "epochs over pre-training")
    s.table(mixture_shortfalls(run), "shortfalls")
    return s


def edu_section(run: Run) -> Section:
    s = Section("edu", "Edu classifier calibration")
    note = missing_stage_note(run, "edu_score")
    if note:
        s.note(note)
        return s
    cal = edu_calibration(run)
    if cal.empty:
        s.note("the edu_score stage stored no annotations with predictions in this run")
    else:
        threshold = edu_threshold(run)
        s.figure(plots.plot_edu_calibration(cal, threshold), "annotated vs predicted edu score")
        s.text("Every annotated document with the score the stage gave it; when the scorer was distilled from these "
               "annotations this is in-sample (the stage's held-out metrics follow).")
        s.table(pd.DataFrame([calibration_summary(cal, threshold)]), "agreement on the annotated documents")
    s.table(edu_stage_metrics(run), "recorded by the stage (annotation, distillation with held-out metrics, scorer)")
    confusion = edu_confusion(run)
    if not confusion.empty:
        s.table(confusion.reset_index(), "held-out confusion (rows: annotated, columns: predicted, rounded)")
    return s


def dedup_section(run: Run) -> Section:
    s = Section("dedup", "Duplicate clusters")
    summary = dedup_summary(run)
    if summary.empty:
        s.note(f"none of {', '.join(DEDUP_STAGES)} ran in {run.name}")
        return s
    dists = {st: cluster_size_distribution(duplicate_clusters(run, st)) for st in summary["stage"]}
    s.figure(plots.plot_cluster_sizes(dists), "duplicate cluster sizes")
    s.table(summary, "per stage")
    for st, dist in dists.items():
        s.table(dist, f"{st}: clusters per size")
    return s


def compare_section(a: Run, b: Run) -> Section:
    s = Section("compare", f"Compare {a.name} with {b.name}")
    differ = input_difference(a, b)
    if differ:
        s.note(differ)
    s.table(config_changes(a, b), "config changes")
    cmp = compare_runs(a, b)
    s.figure(plots.plot_compare(cmp, a.name, b.name), "kept per stage in both runs")
    s.table(cmp, "kept per stage")
    s.table(reason_changes(a, b), "drop reasons that changed")
    return s


def _text(value: object) -> str:
    return value if isinstance(value, str) else ""
