"""What a stage's ``prepare`` or ``identify`` hands on (:class:`Plan`), the figures it records
(:class:`StageFigures`), and how the default ``decide`` of a row stage joins its cached scores to
a partition (:func:`join_scores`); the shapes that use them: :mod:`pipelines.kit.shapes`."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import pandas as pd

from pipelines.kit.context import StageContext


@dataclasses.dataclass
class StageFigures:
    """A stage's figures: ``figures`` go to ``stats.json`` → ``extra``; ``marks`` (label →
    documents, e.g. ``{"tier high": 120}``) to ``extra.annotated``, the run summary's line for a
    stage that removes nothing."""

    figures: dict[str, Any] = dataclasses.field(default_factory=dict)
    marks: dict[str, int] = dataclasses.field(default_factory=dict)

    def __or__(self, other: StageFigures) -> StageFigures:
        return StageFigures({**self.figures, **other.figures}, {**self.marks, **other.marks})

    def record(self, ctx: StageContext) -> None:
        """Into the stats the runner writes (the kit calls it once per stage)."""
        ctx.extra_stats.update(self.figures)
        if self.marks:
            ctx.extra_stats["annotated"] = dict(self.marks)


@dataclasses.dataclass
class Plan:
    """What :meth:`RowStage.prepare` returns: ``state`` for :meth:`RowStage.decide` on every
    partition (artifacts, cuts), the stage's figures, and its produced columns where they depend
    on the config (``None``: the class's ``produces``)."""

    state: Any = None
    figures: StageFigures = dataclasses.field(default_factory=StageFigures)
    columns: dict[str, Any] | None = None


def join_scores(df: pd.DataFrame, scores: pd.DataFrame | None, columns: dict[str, Any]) -> pd.DataFrame:
    """``df`` with ``columns`` (name → dtype) from ``scores`` (``doc_id`` + those columns) by ``doc_id``.
    A column ``df`` has already (a stage that rewrites ``text`` and ``n_tokens`` of its sources)
    keeps its value on the rows that were not scored; a new one is missing there.

    >>> df = pd.DataFrame({"doc_id": ["a", "b"], "text": ["A", "B"]})
    >>> out = join_scores(df, pd.DataFrame({"doc_id": ["b"], "x": [0.5], "text": ["b"]}), {"x": "float64", "text": object})
    >>> out["x"].tolist(), out["text"].tolist()
    ([nan, 0.5], ['A', 'b'])
    """
    df = df.copy()
    by_id = scores.drop_duplicates("doc_id").set_index("doc_id") if scores is not None and len(scores) else None
    scored = df["doc_id"].isin(by_id.index).to_numpy() if by_id is not None else np.zeros(len(df), dtype=bool)
    for column, dtype in columns.items():
        values = by_id[column].reindex(df["doc_id"].to_numpy()) if by_id is not None else pd.Series([None] * len(df))
        values = pd.Series(values.to_numpy(), index=df.index)
        if column in df.columns:  # rewritten on the scored rows only
            values = values.where(scored, df[column])
        df[column] = values.astype(dtype)
    return df
