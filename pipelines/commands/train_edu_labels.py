"""The labels ``train-classifier edu`` trains on: read from a file, checked (numbers on the rubric's
scale, with a spread) and the rows without a score said, under the command's logger."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pandas as pd

from curation.config import ConfigError
from curation.errors import brief
from curation.ingest.discover import InputError

log = logging.getLogger("pipelines.commands.train_edu")  # the lines of the command these functions serve


def check_spread(scores: pd.Series, source: Any) -> None:
    """ConfigError (exit 2) when the scores have no spread (all one value, or all within half a rubric
    point; the same rule ``edu_score`` distils by): a model fit to them learns nothing, and its card
    (F1 0, MAE 0, no Spearman) looked perfect."""
    from pipelines.stages.edu_score_distil import spread_problem

    problem = spread_problem(scores)
    if problem is not None:
        raise ConfigError(
            f"{source}: {problem}: labels with no spread train a model that says nothing; add documents "
            "scored lower and higher (the edu rubric's 0–5)"
        )


def read_labels(path: Path) -> pd.DataFrame:
    """A Parquet file or JSON lines (optionally .gz)."""
    if not path.exists():
        raise InputError(f"{path} does not exist; give a Parquet or JSON-lines file with text and score columns")
    if path.suffix == ".parquet" or path.is_dir():
        return pd.read_parquet(path)
    return pd.read_json(path, lines=True)


def say_dropped(frame: pd.DataFrame, scores: pd.Series, source: Any) -> None:
    """Warn of rows left out for having no score: failed annotations (by reason, from a ``failure``
    column) or empty cells."""
    missing = scores.isna().to_numpy()
    if not missing.any():
        return
    failure = frame["failure"][missing] if "failure" in frame.columns else pd.Series([None] * int(missing.sum()))
    reasons = failure.fillna("no score").astype(str).value_counts()
    why = ", ".join(f"{r}={n}" for r, n in reasons.items())
    kind = "failed annotations" if "failure" in frame.columns and failure.notna().any() else "empty or NaN scores"
    log.warning(
        "train-classifier edu: %d of %d row(s) of %s have no score and are left out (%s: %s); training on %d",
        int(missing.sum()),
        len(frame),
        source,
        kind,
        why,
        int((~missing).sum()),
    )


def check_scores(column: pd.Series, path: Path, name: str, scale: tuple[int, int]) -> pd.Series:
    """``column`` as floats on the rubric's ``scale`` (empty cells stay NaN and are dropped); InputError
    naming the file and the bad values otherwise: a head trained on 0–100 labels is clipped to 5 for
    every document, and a text score would fail deep inside the training."""
    scores = pd.to_numeric(column, errors="coerce").astype(float)
    text = column[scores.isna() & column.notna()]
    if len(text):
        raise InputError(
            f"{path}: {len(text)} value(s) of column {name!r} are not numbers (e.g. {brief([str(v) for v in text.unique()[:5]])}); "
            f"give scores as numbers on the edu rubric's scale {scale[0]}–{scale[1]}"
        )
    off = scores[(scores < scale[0]) | (scores > scale[1])]
    if len(off):
        raise InputError(
            f"{path}: {len(off)} score(s) of column {name!r} are outside the edu rubric's scale "
            f"{scale[0]}–{scale[1]} (e.g. {', '.join(f'{v:g}' for v in sorted(off.unique())[:5])}; they range {off.min():g}–{off.max():g}); "
            f"rescale them to {scale[0]}–{scale[1]} or pick the right column with --score-column"
        )
    return scores
