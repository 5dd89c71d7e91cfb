"""The code stages' score histograms come from the tasks that write the scores
(:func:`pipelines.stages.code_steps.scores_and_histogram`): no compute of their own and no second
read of the parts. A reused scores artifact is read back for them (:func:`tier_histogram`). Both
ways give the same histogram, cuts, figures and documents."""

from __future__ import annotations

import filecmp
import json

import pandas as pd
import pytest

import pipelines.progress as progress
from pipelines.kit import Artifact
from pipelines.stages.code_steps import Histogram, _hist_file
from pipelines.stages.code_web import HIST_COLUMNS, CodeWebConfig, _hist
from tests.helpers import docs_frame, make_stage_dir, run_one
from tests.pipelines.test_code_quality_stage import _rows as code_rows
from tests.pipelines.test_code_web_hist_columns import _scores
from tests.pipelines.test_code_web_stage import _rows as web_rows


@pytest.mark.parametrize("cfg", [CodeWebConfig(), CodeWebConfig(recall=("classifier",), tier_weights={"structural": 1.0, "content": 0.5})])
@pytest.mark.parametrize("n", [0, 1, 200])
def test_the_written_frame_and_the_part_read_back_give_one_histogram(tmp_path, cfg: CodeWebConfig, n: int) -> None:
    frame = _scores(n, 3 * n + 1)  # NaN scores, None strings, booleans, as score_frame writes them
    art = Artifact(tmp_path / "scores")
    path = art.write_part(0, frame)
    histogram = Histogram(_hist, (cfg,), HIST_COLUMNS, ("html_parsed",))
    hist, totals = histogram.of(frame)
    back, back_totals = _hist_file(str(path), histogram, [*HIST_COLUMNS, "html_parsed"])
    pd.testing.assert_frame_equal(hist, back)
    assert totals == back_totals == {"html_parsed": int(frame["html_parsed"].sum())}


def _labels(monkeypatch) -> list[str]:
    labels: list[str] = []
    real = progress.compute_with_progress

    def recorded(collection, client, label, *args, **kwargs):
        labels.append(label)
        return real(collection, client, label, *args, **kwargs)

    monkeypatch.setattr(progress, "compute_with_progress", recorded)
    return labels


@pytest.mark.parametrize(("stage", "rows", "overrides", "figures"), [
    ("code_web", web_rows, ["ingest.tokenizer=whitespace", "code_web.tier_low=0", "code_web.tier_min_files=1"],
     ("tier_cuts", "recalled_pages", "html_parsed_pages", "scored_pages")),
    ("code_quality", code_rows, ["code_quality.tier_min_files=5", "code_quality.tier_low=25"], ("tier_cuts", "tiers", "scored_files")),
])
def test_scored_now_and_reused_give_the_same_cuts_and_documents(tmp_path, monkeypatch, stage, rows, overrides, figures) -> None:
    inp = make_stage_dir(tmp_path / "in", docs_frame(rows()), nparts=2)
    labels = _labels(monkeypatch)
    fresh = run_one(stage, inp, tmp_path / "a", overrides)
    fresh_labels, labels[:] = list(labels), []
    reused = run_one(stage, inp, tmp_path / "b", overrides)  # the same scores step: the cache beside the outputs
    assert f"{stage}: score" in fresh_labels and f"{stage}: tier cuts" not in fresh_labels  # one compute fewer
    assert f"{stage}: score" not in labels and f"{stage}: tier cuts" in labels  # reused: read back
    for key in figures:
        assert json.dumps(fresh.stats["extra"][key], sort_keys=True) == json.dumps(reused.stats["extra"][key], sort_keys=True), key
    names = sorted(p.name for p in (tmp_path / "a" / "docs").glob("part-*.parquet"))
    assert names and names == sorted(p.name for p in (tmp_path / "b" / "docs").glob("part-*.parquet"))
    for name in names:
        assert filecmp.cmp(tmp_path / "a" / "docs" / name, tmp_path / "b" / "docs" / name, shallow=False), name


def _two_languages() -> pd.DataFrame:
    from tests.pipelines.test_web_quality_stage import corpus

    df = corpus(40)
    de = df[df["source"] == "web"].head(16).assign(lang="de")  # a second language with its own thresholds
    de["doc_id"] = [f"de{i:02d}" for i in range(len(de))]
    return pd.concat([df, de], ignore_index=True)


@pytest.mark.parametrize("combine", ["mean", "max"])
def test_web_quality_sketches_come_from_the_scoring_tasks(tmp_path, monkeypatch, combine: str) -> None:
    """web_quality's per-language sketches are taken from the frames its scoring tasks write and
    merged in that compute: no "sketches" compute when the scores are computed now; with one
    scorer's step reused and the other's computed, and with both reused, the same thresholds,
    figures and documents."""
    import shutil

    inp = make_stage_dir(tmp_path / "in", _two_languages(), nparts=3)
    overrides = ["web_quality.language_min_docs=10", f"web_quality.combine={combine}"]
    labels = _labels(monkeypatch)
    fresh = run_one("web_quality", inp, tmp_path / "a", overrides)
    assert "web_quality: sketches" not in labels and any(lab.startswith("web_quality: score") for lab in labels)
    assert {"en", "de"} <= set(fresh.stats["extra"]["language_groups"])  # both languages counted: their own groups
    labels[:] = []
    reused = run_one("web_quality", inp, tmp_path / "b", overrides)
    assert "web_quality: sketches" in labels  # read back
    cache = tmp_path / ".cache"
    linear = [p for p in cache.rglob("scores-linear-*") if p.is_dir()]
    assert linear
    for p in linear:
        shutil.rmtree(p)
    labels[:] = []
    mixed = run_one("web_quality", inp, tmp_path / "c", overrides)  # heuristics reused, linear computed now
    assert "web_quality: sketches" in labels and any(lab.startswith("web_quality: score") for lab in labels)
    for other in (reused, mixed):
        assert json.dumps(fresh.stats["extra"], sort_keys=True, default=str) == json.dumps(other.stats["extra"], sort_keys=True, default=str)
    for out in ("b", "c"):
        for part in sorted((tmp_path / "a" / "docs").glob("part-*.parquet")):
            assert filecmp.cmp(part, tmp_path / out / "docs" / part.name, shallow=False), (out, part.name)
