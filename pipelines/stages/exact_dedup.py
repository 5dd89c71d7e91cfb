"""``exact_dedup``: drop documents whose normalised text (NFKC, format characters dropped, whitespace folded) repeats.

A group stage: a hash of each document's normalised text → documents regrouped by hash → one
keeper per hash (``keep``), every other copy ledgered ``exact_duplicate`` with the keeper's id.
"""

from __future__ import annotations

import dataclasses

import pandas as pd

from curation.config import StageConfig, check_choice
from curation.dedup.exact import KEEP_RULES, exact_keys, pick_duplicates
from pipelines.kit import GroupStage


@dataclasses.dataclass(frozen=True)
class ExactDedupConfig(StageConfig):
    keep: str = "first"

    def validate(self) -> None:
        check_choice(self, "keep", KEEP_RULES)


class ExactDedupStage(GroupStage):
    name = "exact_dedup"
    version = "3"  # 2: format characters dropped from the key; 3: the copy normalisation changes least is kept
    config_cls = ExactDedupConfig
    key_meta = pd.DataFrame({"hash": pd.Series(dtype=object), "doc_id": pd.Series(dtype=object), "length": pd.Series(dtype="int64"),
                             "altered": pd.Series(dtype="int64")})
    on = "hash"
    figure = "duplicates"
    removal_keys = ("keep",)

    def keys(self, part: pd.DataFrame, cfg: ExactDedupConfig) -> pd.DataFrame:
        return exact_keys(part)

    def removals(self, group: pd.DataFrame, cfg: ExactDedupConfig) -> pd.DataFrame:
        return pick_duplicates(group, cfg.keep)


STAGE = ExactDedupStage()
