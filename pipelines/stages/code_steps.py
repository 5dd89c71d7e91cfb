"""The skeleton ``code_quality`` and ``code_web`` share, on the stage kit.

1. a cached sub-step ``scores`` (one ``part-NNNNN.parquet`` per input
   partition) from ``score(number, df, *args) -> frame``, a row-wise function run on row slices
   of each partition; it returns ``{count_key: rows}``.
2. the score histograms of every scores part (a :class:`Histogram`: ``hist(scores, *args)``),
   summed on the client into tier cuts by the stage, with totals of other columns of the scores
   (e.g. pages parsed). :func:`scores_and_histogram` does 1 and 2 in one compute: each part's
   histogram is taken from the frame its task writes. A reused ``scores`` artifact is read back
   for them (:func:`tier_histogram`: one read of each part, its histogram columns only).
3. the stage's ``decide`` (:class:`pipelines.kit.RowStage`): per input partition, from the
   scores of that partition (``scores.read_part(number)``, ``None`` for none) and the cuts.

Changing a decision parameter re-runs 2 and 3 only: the ``scores`` artifact is reused.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path
from typing import Any

import dask.dataframe as dd
import numpy as np
import pandas as pd

from curation.files import read_parquet
from curation.quality.code_tiers import score_histogram
from pipelines.kit import Artifact, StageContext


@dataclasses.dataclass(frozen=True)
class Histogram:
    """What the tier cuts read of each scores part: ``hist(part, *args)`` (rows: language, bin,
    count) and the totals of the numeric or boolean ``totals`` columns (e.g. pages parsed), with
    those ``tally(part, *args)`` counts (name → count, e.g. recalled pages without HTML);
    ``columns``: those ``hist`` and ``tally`` read (``None``: all)."""

    hist: Callable[..., pd.DataFrame]
    args: tuple[Any, ...] = ()
    columns: list[str] | None = None
    totals: tuple[str, ...] = ()
    tally: Callable[..., dict[str, int]] | None = None

    def of(self, part: pd.DataFrame) -> tuple[pd.DataFrame, dict[str, int]]:
        """The histogram and totals of one part."""
        counts = {c: int(part[c].to_numpy().sum()) for c in self.totals}
        return self.hist(part, *self.args), counts | (self.tally(part, *self.args) if self.tally is not None else {})

    def summed(self, parts: list[tuple[pd.DataFrame, dict[str, int]]]) -> tuple[pd.DataFrame, dict[str, int]]:
        """The parts' histograms concatenated in part order, and their totals summed."""
        hists = [h for h, _ in parts]
        frame = pd.concat(hists) if hists else score_histogram(np.array([]), np.array([]))
        names = dict.fromkeys([*self.totals, *(k for _, t in parts for k in t)])
        return frame, {c: int(sum(t.get(c, 0) for _, t in parts)) for c in names}


def scores_and_histogram(ctx: StageContext, docs: dd.DataFrame, params: dict[str, Any], count_key: str, sources: Any,
                         score: Callable[..., pd.DataFrame], *args: Any, histogram: Histogram,
                         columns: list[str] | None = None) -> tuple[Artifact, pd.DataFrame, dict[str, int]]:
    """The ``scores`` artifact: ``score(number, df, *args)`` of every partition (row-wise, so it
    runs on row slices of each partition: ``ctx.write_sliced_summaries``), cached by ``params``;
    ``score`` works on the documents of ``sources`` and reads ``columns`` (``None``: all). With
    it, the ``histogram`` of its parts and their totals.

    When the step runs now, each part's histogram is taken in the task that writes the part, from
    the frame it writes (the values the file holds: numbers and strings, which Parquet keeps as
    they are), so the parts are not read back and the cuts cost no compute of their own: one
    barrier fewer between the stage's steps. A reused artifact is read back
    (:func:`tier_histogram`)."""
    got: list[list[tuple[pd.DataFrame, dict[str, int]]]] = []  # the parts' histograms, when the step runs now

    def produce(folder: Path) -> dict[str, int]:
        rows, parts = ctx.write_sliced_summaries(docs, Artifact(folder), score, *args, label="score", summarise=histogram.of,
                                                 sources=sources, columns=columns)
        got.append(parts)
        return {count_key: rows}

    scores = ctx.step("scores", params, produce)
    if got:
        hist, totals = histogram.summed(got[0])
    else:  # reused: computed by an earlier run
        hist, totals = tier_histogram(ctx, scores, histogram.hist, *histogram.args, columns=histogram.columns,
                                      totals=histogram.totals, tally=histogram.tally)
    return scores, hist, totals


def tier_histogram(ctx: StageContext, scores: Artifact, hist: Callable[..., pd.DataFrame], *args: Any,
                   columns: list[str] | None = None, totals: tuple[str, ...] = (),
                   tally: Callable[..., dict[str, int]] | None = None) -> tuple[pd.DataFrame, dict[str, int]]:
    """``hist(part, *args)`` of every scores part, concatenated in part order (rows: language, bin,
    count), and the totals of the numeric or boolean ``totals`` columns over the parts (e.g. pages
    parsed); one task per part reads it once, ``columns`` and ``totals`` only (``columns=None``: all)."""
    from dask import delayed

    histogram = Histogram(hist, args, columns, totals, tally)
    read = None if columns is None else list(dict.fromkeys([*columns, *totals]))
    return histogram.summed(ctx.compute([delayed(_hist_file)(str(p), histogram, read) for p in scores.parts()], "tier cuts"))


def _hist_file(path: str, histogram: Histogram, read: list[str] | None) -> tuple[pd.DataFrame, dict[str, int]]:
    return histogram.of(read_parquet(path, read).to_pandas())


def cut_figures(cuts: dict[str, tuple[float, float]], keep: Callable[[str], bool] = lambda _k: True) -> dict[str, list[float]]:
    """Tier cuts as stats.json figures."""
    return {k: [float(v[0]), float(v[1])] for k, v in cuts.items() if keep(k)}
