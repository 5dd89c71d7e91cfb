"""``exact_dedup``: drop documents whose normalised text (NFKC, whitespace folded) repeats.

identify (hash → shuffle on hash → keeper per group) → remove (by doc_id, in place).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import dask.dataframe as dd
import pandas as pd

from curation.config import StageConfig, check_choice
from curation.dedup.exact import KEEP_RULES, exact_keys, pick_duplicates
from pipelines.kit import StageContext
from pipelines.removal import REMOVAL_META, keys_with_part, mark_removed, write_removals

KEYS_META = pd.DataFrame({"hash": pd.Series(dtype=object), "doc_id": pd.Series(dtype=object), "length": pd.Series(dtype="int64")})


@dataclasses.dataclass(frozen=True)
class ExactDedupConfig(StageConfig):
    keep: str = "first"

    def validate(self) -> None:
        check_choice(self, "keep", KEEP_RULES)


class ExactDedupStage:
    name = "exact_dedup"
    version = "1"
    config_cls = ExactDedupConfig
    requires = ("doc_id", "text")
    produces: dict[str, Any] = {}

    def build(self, docs: dd.DataFrame, cfg: ExactDedupConfig, ctx: StageContext) -> dd.DataFrame:
        def identify(out: Path) -> dict[str, Any]:
            keys = keys_with_part(docs, exact_keys, KEYS_META)
            removals = ctx.shuffle(keys, "hash", "identify", costs=ctx.costs()).map_partitions(pick_duplicates, cfg.keep, meta=REMOVAL_META)
            return {"duplicates": write_removals(removals, out, ctx, "identify")}

        removals = ctx.step("removals", {"keep": cfg.keep, "version": self.version}, identify)
        return mark_removed(docs, removals.path)


STAGE = ExactDedupStage()
