"""``repeated_lines``: drop a page when over half of its lines repeat an earlier line.

The Gopher signal ``dup_line_frac`` (:func:`classifiers.heuristics_repetition.dup_line_frac`, also
a ``web_quality`` signal column) as a rule of its own. Off in the shipped recipe.
"""

from __future__ import annotations

import dataclasses

import pandas as pd

from classifiers.heuristics_repetition import dup_line_frac
from curation.config import StageConfig, check_range
from curation.schema import DropReason
from pipelines.kit import RowFilter


@dataclasses.dataclass(frozen=True)
class RepeatedLinesConfig(StageConfig):
    enabled: bool = False
    sources: tuple[str, ...] = ("web",)
    max_dup_line_frac: float = 0.5

    def validate(self) -> None:
        check_range(self, "max_dup_line_frac", 0.0, 1.0)


class RepeatedLinesStage(RowFilter):
    name = "repeated_lines"
    config_cls = RepeatedLinesConfig
    requires = ("doc_id", "text", "source")
    produces = {"dup_line_frac": "float64"}
    reason = DropReason.REPEATED_LINES
    score_columns = ("text",)
    decision_keys = ("max_dup_line_frac",)

    def score(self, rows: pd.DataFrame, cfg: RepeatedLinesConfig) -> pd.DataFrame:
        return pd.DataFrame({"dup_line_frac": [dup_line_frac(t) for t in rows["text"]]}, index=rows.index)

    def drops(self, scores: pd.DataFrame, cfg: RepeatedLinesConfig) -> pd.Series:
        return scores["dup_line_frac"] > cfg.max_dup_line_frac


STAGE = RepeatedLinesStage()
