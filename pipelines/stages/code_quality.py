"""``code_quality``: StarCoder rules, language-specific quality scores, then tiers high / medium / low.

score (language + rule signals + scorer outputs per file, cached by scorer parameters) →
decide (rules from thresholds; per-language tier cuts from score histograms). Rule failures go
to the ledger (the StarCoder rules remove); the tier is an annotation: the low tier stays, and
the mixture policy decides what each tier is worth (``code/low`` excluded with ledger reason
``code_low_tier``). Changing a threshold or a tier percentile re-runs only the decision step:
the ``scores`` artifact is reused (the skeleton is :mod:`pipelines.stages.code_steps`, the logic
:mod:`curation.quality.code_files`).

The rule thresholds are the sub-config ``rules`` (:class:`~curation.quality.code_rules.RuleThresholds`),
the tier policy ``tiers`` (:class:`~curation.quality.code_tiers.TierPolicy`); flat keys set
them too (``code_quality.max_lines=…``, ``code_quality.tier_high=…``), and the config hash is
computed from that flat view.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import logging
from collections.abc import Callable
from typing import Any

import dask.dataframe as dd
import numpy as np
import pandas as pd

from classifiers.code_quality import get_scorer
from classifiers.scorer import Batch, Scorer
from curation.config import ConfigError, StageConfig, check_choice, check_range, nested
from curation.quality.code_files import annotate_files, file_histogram, score_frame, tier_counts
from curation.quality.code_language import UNPOOLED_GROUPS, tier_group
from curation.quality.code_rules import RuleThresholds
from curation.quality.code_tiers import TierPolicy, thresholds
from curation.quality.tier_shares import tier_shares
from pipelines.kit import Plan, RowStage, StageContext, StageFigures
from pipelines.kit.preflight import check_model
from pipelines.stages.code_steps import Histogram, cut_figures, scores_and_histogram

log = logging.getLogger(__name__)

DEFAULT_DATA_FILES: dict[str, dict[str, float]] = {
    "JSON": {"min_chars": 50, "max_chars": 5000, "min_alpha_fraction": 0.5},
    "YAML": {"min_chars": 50, "max_chars": 5000, "max_mean_line_length": 100, "max_line_length": 1000},
    "TOML": {"min_chars": 50, "max_chars": 5000},
    "CSV": {"max_chars": 5000, "max_lines": 100},
    "TSV": {"max_chars": 5000, "max_lines": 100},
}

#: Data formats tiered medium: the structural score of a JSON, YAML or TOML file follows its length (nesting
#: depth, repeated keys), not its quality (benchmarks/code_quality/RESULTS.md); no score reaches 11.
DEFAULT_TIER_OVERRIDES: dict[str, dict[str, Any]] = {
    lang: {"mode": "absolute", "low": 0, "high": 11} for lang in ("JSON", "YAML", "TOML")
}


@dataclasses.dataclass(frozen=True)
class CodeQualityConfig(StageConfig):
    sources: tuple[str, ...] = ("code",)
    language_from: str = "missing"  # missing: detect only where the input has none | always
    header_lines: int = 10
    long_line: int = 300
    rules: RuleThresholds = nested(lambda: RuleThresholds(data_files=copy.deepcopy(DEFAULT_DATA_FILES)))
    scorers: tuple[str, ...] = ("structural",)
    learned_model: str | None = None
    score_max_chars: int = 200_000
    tiers: TierPolicy = nested(lambda: TierPolicy(overrides=copy.deepcopy(DEFAULT_TIER_OVERRIDES)), "tier_")

    def validate(self) -> None:
        check_choice(self, "language_from", ("missing", "always"))
        for key in ("header_lines", "long_line", "score_max_chars"):
            check_range(self, key, 1, None)
        for name in self.scorers:
            if name not in ("structural", "learned"):
                raise ConfigError(f"CodeQualityConfig.scorers: unknown scorer {name!r}; choose structural and/or learned")
        if not self.scorers:
            raise ConfigError("CodeQualityConfig.scorers is empty; list at least one of structural, learned")
        if not any(float(self.tiers.weights.get(n, 0.0)) > 0 for n in self.scorers):  # every file would score NaN: tier medium
            raise ConfigError(f"code_quality.tier_weights gives none of the scorers ({', '.join(self.scorers)}) a weight above 0, "
                              "so no file would get a score or a tier: give one a weight (e.g. tier_weights={structural: 1.0})")

    def score_params(self) -> dict[str, Any]:
        """What the cached scores depend on (and nothing that only a decision uses)."""
        scorers = {name: get_scorer(name, self.learned_model) for name in self.scorers}
        learned = scorers.get("learned")
        if learned is not None and not learned.available():  # type: ignore[attr-defined]
            raise ConfigError(
                f"code_quality.scorers has 'learned' but {learned.model_dir} holds no trained model; "  # type: ignore[attr-defined]
                "train one with `curate train-classifier code-quality` and set code_quality.learned_model, "
                "or use scorers=[structural]"
            )
        versions = {name: scorer.version for name, scorer in scorers.items()}
        return {"sources": list(self.sources), "language_from": self.language_from, "header_lines": self.header_lines,
                "long_line": self.long_line, "scorers": versions, "score_max_chars": self.score_max_chars}


#: The columns the scores read (curation.quality.code_files.score_frame).
SCORE_READS = ["doc_id", "source", "text", "path", "language"]


def _score(_number: int, df: pd.DataFrame, cfg: CodeQualityConfig) -> pd.DataFrame:
    scorers = {name: _on_batches(get_scorer(name, cfg.learned_model)) for name in cfg.scorers}
    return score_frame(df, scorers, sources=cfg.sources, language_from=cfg.language_from, header_lines=cfg.header_lines,
                       long_line=cfg.long_line, max_chars=cfg.score_max_chars)


def _on_batches(scorer: Scorer) -> Callable[..., np.ndarray]:
    """A code scorer as the function ``score_frame`` calls: texts, languages, paths, cut → scores."""
    return lambda texts, languages, paths, cut: scorer.score(Batch(texts, languages, paths, cut=cut))


class CodeQualityStage(RowStage):
    name = "code_quality"
    version = "6"  # 3: cut files read as a prefix, .pyi documentation floor, files without code 0; 4: generated markers only in header comments, a tie at a tier cut is medium, JSON/YAML/TOML medium; 5: structural_v5; 6: structural_v6
    config_cls = CodeQualityConfig
    requires = ("doc_id", "text", "source", "path", "language")
    produces: dict[str, Any] = {"code_score_structural": "float64", "code_tier": object}

    def preflight(self, cfg: CodeQualityConfig) -> None:
        cfg.score_params()  # a learned scorer without a trained model is a ConfigError here
        if "learned" in cfg.scorers:
            check_model("code_quality.learned_model", cfg.learned_model, "hashed_linear", "regression",
                        how="train one with `curate train-classifier code-quality`")

    def config_notes(self, cfg: CodeQualityConfig) -> list[str]:
        if cfg.learned_model and "learned" not in cfg.scorers:
            return [f"code_quality.learned_model = {cfg.learned_model} is not used: code_quality.scorers "
                    f"{list(cfg.scorers)} has no learned (add it: scorers=[structural,learned])"]
        return []

    def model_paths(self, cfg: CodeQualityConfig) -> dict[str, str]:
        return {"learned_model": cfg.learned_model} if cfg.learned_model and "learned" in cfg.scorers else {}

    def prepare(self, docs: dd.DataFrame, cfg: CodeQualityConfig, ctx: StageContext) -> Plan:
        scores, hist, _ = scores_and_histogram(ctx, docs, {"version": self.version, **cfg.score_params()}, "scored_files", cfg.sources,
                                               _score, cfg, columns=SCORE_READS,
                                               histogram=Histogram(file_histogram, (cfg.rules, cfg.tiers.weights)))
        default, overrides = cfg.tiers.rules()
        cuts = thresholds(hist, default, overrides, cfg.tiers.min_files, tier_group, UNPOOLED_GROUPS)
        tiers = tier_counts(hist, cuts)
        log.info("code_quality: tier cuts %s", json.dumps(cut_figures(cuts)))
        shares, notes = tier_shares(hist, cuts, default, overrides, cfg.tiers.min_files)
        for note in notes:
            log.warning("code_quality: %s", note)
        figures = StageFigures({"tier_cuts": cut_figures(cuts), "tiers": tiers, "tier_shares": shares},
                               marks={f"tier {t}": sum(v[t] for v in tiers.values()) for t in ("high", "low")})
        return Plan((scores, cuts), figures, {f"code_score_{n}": "float64" for n in cfg.scorers} | {"code_tier": object})

    def decide(self, number: int, df: pd.DataFrame, state: Any, cfg: CodeQualityConfig) -> pd.DataFrame:
        scores, cuts = state
        return annotate_files(df, scores.read_part(number), list(cfg.scorers), cfg.rules, cfg.tiers, cuts)


STAGE = CodeQualityStage()
