"""``exact_dedup``: drop documents whose normalised text (NFKC, whitespace folded) repeats.

identify (hash → shuffle on hash → keeper per group) → remove (by doc_id, in place).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import dask.dataframe as dd
import pandas as pd

from curation.config import StageConfig, check_choice
from curation.dedup.exact import KEEP_RULES, exact_keys, pick_duplicates
from pipelines.removal import REMOVAL_META, keys_with_part, mark_removed, write_removals


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

    def build(self, docs: dd.DataFrame, cfg: ExactDedupConfig, ctx: Any) -> dd.DataFrame:
        def identify(out: Any) -> None:
            meta = pd.DataFrame({"hash": pd.Series(dtype=object), "doc_id": pd.Series(dtype=object), "length": pd.Series(dtype="int64")})
            keys = keys_with_part(docs, exact_keys, meta)
            removals = keys.shuffle(on="hash").map_partitions(pick_duplicates, cfg.keep, meta=REMOVAL_META)
            n = write_removals(removals, out, ctx.client, "exact_dedup: identify", ctx.quiet)
            ctx.extra_stats["duplicates"] = n

        folder = ctx.cached("removals", {"keep": cfg.keep, "version": self.version}, identify)
        return mark_removed(docs, folder)


STAGE = ExactDedupStage()
