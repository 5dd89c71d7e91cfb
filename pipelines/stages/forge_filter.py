"""``forge_filter``: drop bot-authored, empty and auto-generated issues, pull requests and commits.

GLM-4.5 trains on model-filtered issues, PRs and commits. Rules and a transparent score
(:mod:`curation.quality.forge`) judge each ``issues_prs_commits`` record before the mixture
builds repository contexts from them; each dropped record is a ledger row with its own reason
(``bot_author``, ``auto_generated``, ``empty_thread`` or ``low_forge_score``) and the evidence; a
``low_forge_score`` row also gives the score's features and each one's term (``forge_features``,
``forge_terms``).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import pandas as pd

from curation.config import ConfigError, StageConfig, check_range
from curation.mixture.repo_threads import parse_meta
from curation.quality.forge import BOT_AUTHORS, forge_features, forge_flags, forge_score, forge_terms
from curation.schema import DROP_DETAIL, DROP_REASON, DropReason, detail_json
from pipelines.kit import RowFilter


@dataclasses.dataclass(frozen=True)
class ForgeFilterConfig(StageConfig):
    enabled: bool = True
    sources: tuple[str, ...] = ("issues_prs_commits",)
    bot_authors: tuple[str, ...] = BOT_AUTHORS
    min_words: int = 3
    min_score: float = 0.5

    def validate(self) -> None:
        check_range(self, "min_words", 0)
        check_range(self, "min_score", 0.0, 1.0)
        if any(not isinstance(b, str) or not b for b in self.bot_authors):
            raise ConfigError("ForgeFilterConfig.bot_authors must be a list of account names, e.g. [dependabot, renovate]")


class ForgeFilterStage(RowFilter):
    name = "forge_filter"
    config_cls = ForgeFilterConfig
    requires = ("doc_id", "text", "source", "meta")
    produces = {"forge_score": "float64", "forge_rule": object, "forge_evidence": object}
    reason = DropReason.LOW_FORGE_SCORE
    version = "2"  # 2: leftover template lines count against a thread only while its people wrote under 20 words; score drops ledger their features
    decision_keys = ("min_score",)

    def score(self, rows: pd.DataFrame, cfg: ForgeFilterConfig) -> pd.DataFrame:
        bots = tuple(b.lower() for b in cfg.bot_authors)
        scores, rules, evidence = [], [], []
        for text, meta in zip(rows["text"].astype(object).fillna(""), rows["meta"], strict=True):
            m = parse_meta(meta)
            rule, why = forge_flags(m, text, bots, cfg.min_words)
            scores.append(round(forge_score(forge_features(m, text)), 4))
            rules.append(rule)
            evidence.append(why)
        return pd.DataFrame({"forge_score": scores, "forge_rule": pd.Series(rules, dtype=object).to_numpy(),
                             "forge_evidence": pd.Series(evidence, dtype=object).to_numpy()}, index=rows.index)

    def drops(self, scores: pd.DataFrame, cfg: ForgeFilterConfig) -> pd.Series:
        return scores["forge_rule"].notna() | (scores["forge_score"] < cfg.min_score)

    def decide(self, number: int, df: pd.DataFrame, state: Any, cfg: ForgeFilterConfig) -> pd.DataFrame:
        df = super().decide(number, df, state, cfg)
        hit = df[DROP_REASON].notna().to_numpy()
        rules = [r if isinstance(r, str) else None for r in df.loc[hit, "forge_rule"]]
        evidence = [e if isinstance(e, str) else None for e in df.loc[hit, "forge_evidence"]]
        df.loc[hit, DROP_REASON] = np.asarray([DropReason(r or self.reason).value for r in rules], dtype=object)
        details = []
        for s, r, e, text, meta in zip(df.loc[hit, "forge_score"], rules, evidence, df.loc[hit, "text"], df.loc[hit, "meta"], strict=True):
            why = {} if r else _why(text, meta)  # a score drop: the features and their terms say why
            details.append(detail_json(forge_score=float(s), forge_rule=r, forge_evidence=e, **why))
        df.loc[hit, DROP_DETAIL] = np.asarray(details, dtype=object)
        return df


def _why(text: Any, meta: Any) -> dict[str, dict[str, float]]:
    """``forge_features`` (name → value) and ``forge_terms`` (bias and weight · value), rounded."""
    features = forge_features(parse_meta(meta), text if isinstance(text, str) else "")
    return {"forge_features": {k: round(v, 4) for k, v in features.items()},
            "forge_terms": {k: round(v, 4) for k, v in forge_terms(features).items()}}

STAGE = ForgeFilterStage()
