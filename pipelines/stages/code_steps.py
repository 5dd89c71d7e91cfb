"""The skeleton ``code_quality`` and ``code_web`` share, on the stage kit.

1. :func:`score_step`: a cached sub-step ``scores`` (one ``part-NNNNN.parquet`` per input
   partition) from ``score(number, df, *args) -> frame``, a row-wise function run on row slices
   of each partition; it returns ``{count_key: rows}``.
2. :func:`tier_histogram`: score histograms of every scores part (``hist(scores, *args)``),
   summed on the client into tier cuts by the stage, with totals of other columns of the scores
   (e.g. pages parsed) from the same read of each part.
3. the stage's ``decide`` (:class:`pipelines.kit.RowStage`): per input partition, from the
   scores of that partition (``scores.read_part(number)``, ``None`` for none) and the cuts.

Changing a decision parameter re-runs 2 and 3 only: the ``scores`` artifact is reused.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import dask.dataframe as dd
import numpy as np
import pandas as pd

from curation.files import read_parquet
from curation.quality.code_tiers import score_histogram
from pipelines.kit import Artifact, StageContext


def score_step(ctx: StageContext, docs: dd.DataFrame, params: dict[str, Any], count_key: str, sources: Any,
               score: Callable[..., pd.DataFrame], *args: Any, columns: list[str] | None = None) -> Artifact:
    """The ``scores`` artifact: ``score(number, df, *args)`` of every partition (row-wise, so it
    runs on row slices of each partition: ``ctx.write_sliced``), cached by ``params``; ``score``
    works on the documents of ``sources`` and reads ``columns`` (``None``: all)."""
    def produce(folder: Path) -> dict[str, int]:
        return {count_key: ctx.write_sliced(docs, Artifact(folder), score, *args, label="score", sources=sources, columns=columns)}

    return ctx.step("scores", params, produce)


def tier_histogram(ctx: StageContext, scores: Artifact, hist: Callable[..., pd.DataFrame], *args: Any,
                   columns: list[str] | None = None, totals: tuple[str, ...] = ()) -> tuple[pd.DataFrame, dict[str, int]]:
    """``hist(part, *args)`` of every scores part, concatenated in part order (rows: language, bin,
    count), and the totals of the numeric or boolean ``totals`` columns over the parts (e.g. pages
    parsed); one task per part reads it once, ``columns`` and ``totals`` only (``columns=None``: all)."""
    from dask import delayed

    read = None if columns is None else list(dict.fromkeys([*columns, *totals]))
    parts = ctx.compute([delayed(_hist_file)(str(p), hist, read, totals, *args) for p in scores.parts()], "tier cuts")
    hists = [h for h, _ in parts]
    frame = pd.concat(hists) if hists else score_histogram(np.array([]), np.array([]))
    return frame, {c: int(sum(t[c] for _, t in parts)) for c in totals}


def _hist_file(path: str, hist: Callable[..., pd.DataFrame], read: list[str] | None, totals: tuple[str, ...],
               *args: Any) -> tuple[pd.DataFrame, dict[str, int]]:
    part = read_parquet(path, read).to_pandas()
    return hist(part, *args), {c: int(part[c].to_numpy().sum()) for c in totals}


def cut_figures(cuts: dict[str, tuple[float, float]], keep: Callable[[str], bool] = lambda _k: True) -> dict[str, list[float]]:
    """Tier cuts as stats.json figures."""
    return {k: [float(v[0]), float(v[1])] for k, v in cuts.items() if keep(k)}
