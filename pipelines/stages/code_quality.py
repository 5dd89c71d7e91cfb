"""``code_quality``: StarCoder rules, language-specific quality scores, then tiers high / medium / low.

score (language + rule signals + scorer outputs per file, cached by scorer parameters) →
decide (rules from thresholds; per-language tier cuts from score histograms). Rule failures go
to the ledger (the StarCoder rules remove); the tier is an annotation: the low tier stays, and
the mixture policy decides what each tier is worth (``code/low`` excluded with ledger reason
``code_low_tier``). Changing a threshold or a tier percentile re-runs only the decision step:
the ``scores`` artifact is reused.
"""

from __future__ import annotations

import dataclasses
import json
import logging
from pathlib import Path
from typing import Any

import dask.dataframe as dd
import numpy as np
import pandas as pd

from classifiers.code_quality import get_scorer
from classifiers.scorer import Batch
from curation.config import ConfigError, StageConfig, check_choice, check_range
from curation.quality.code_language import UNPOOLED_GROUPS, detect_language, tier_group
from curation.quality.code_rules import RuleThresholds, decide_rule, rule_signals
from curation.quality.code_tiers import assign_tiers, combined_score, score_histogram, thresholds, tier_rules
from curation.schema import DROP_DETAIL, DROP_REASON, annotated_meta, mark_kept
from pipelines.io import write_frame
from pipelines.progress import compute_with_progress

log = logging.getLogger(__name__)

DEFAULT_DATA_FILES: dict[str, dict[str, float]] = {
    "JSON": {"min_chars": 50, "max_chars": 5000, "min_alpha_fraction": 0.5},
    "YAML": {"min_chars": 50, "max_chars": 5000, "max_mean_line_length": 100, "max_line_length": 1000},
    "TOML": {"min_chars": 50, "max_chars": 5000},
    "CSV": {"max_chars": 5000, "max_lines": 100},
    "TSV": {"max_chars": 5000, "max_lines": 100},
}


@dataclasses.dataclass(frozen=True)
class CodeQualityConfig(StageConfig):
    sources: tuple[str, ...] = ("code",)
    language_from: str = "missing"  # missing: detect only where the input has none | always
    header_lines: int = 10
    long_line: int = 300
    max_line_length: int = 1000
    mean_line_length: float = 100.0
    min_alnum_fraction: float = 0.25
    min_alpha_fraction: float = 0.25
    max_lines: int = 100_000
    encoded_max_chars: int = 1024
    encoded_max_fraction: float = 0.5
    minified_long_line_fraction: float = 0.5
    html_min_text_fraction: float = 0.2
    html_min_text_chars: int = 100
    drop_xml: bool = True
    alpha_exempt: tuple[str, ...] = ("Assembly", "WebAssembly")
    data_files: dict[str, dict[str, float]] = dataclasses.field(default_factory=lambda: dict(DEFAULT_DATA_FILES))
    scorers: tuple[str, ...] = ("structural",)
    learned_model: str | None = None
    score_max_chars: int = 200_000
    tier_mode: str = "percentile"
    tier_high: float = 80.0
    tier_low: float = 10.0
    tier_min_files: int = 50
    tier_weights: dict[str, float] = dataclasses.field(default_factory=lambda: {"structural": 1.0, "learned": 1.0})
    tier_overrides: dict[str, dict[str, Any]] = dataclasses.field(default_factory=dict)

    def validate(self) -> None:
        check_choice(self, "language_from", ("missing", "always"))
        check_choice(self, "tier_mode", ("percentile", "absolute"))
        for key in ("min_alnum_fraction", "min_alpha_fraction", "encoded_max_fraction", "minified_long_line_fraction",
                    "html_min_text_fraction"):
            check_range(self, key, 0.0, 1.0)
        for key in ("header_lines", "long_line", "max_line_length", "max_lines", "tier_min_files", "score_max_chars"):
            check_range(self, key, 1, None)
        if self.tier_mode == "percentile":
            check_range(self, "tier_high", 0.0, 100.0)
            check_range(self, "tier_low", 0.0, 100.0)
        if self.tier_low > self.tier_high:
            raise ConfigError(f"CodeQualityConfig.tier_low ({self.tier_low}) must not exceed tier_high ({self.tier_high})")
        for name in self.scorers:
            if name not in ("structural", "learned"):
                raise ConfigError(f"CodeQualityConfig.scorers: unknown scorer {name!r}; choose structural and/or learned")
        if not self.scorers:
            raise ConfigError("CodeQualityConfig.scorers is empty; list at least one of structural, learned")
        try:
            tier_rules(self.tier_mode, self.tier_high, self.tier_low, self.tier_overrides)
        except (ValueError, TypeError, KeyError) as exc:
            raise ConfigError(f"CodeQualityConfig.tier_overrides: {exc}") from exc

    def thresholds(self) -> RuleThresholds:
        """The library's rule thresholds from this config's flat keys of the same names."""
        values = {f.name: getattr(self, f.name) for f in dataclasses.fields(RuleThresholds)}
        return RuleThresholds(**{**values, "alpha_exempt": tuple(self.alpha_exempt), "data_files": dict(self.data_files)})

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


# -- scoring (the expensive, cached sub-step) ----------------------------------------------

def score_frame(df: pd.DataFrame, cfg: CodeQualityConfig) -> pd.DataFrame:
    """One row per in-scope file: doc_id, language, ``sig_*`` rule signals, ``code_score_*``."""
    scope = df[df["source"].isin(cfg.sources)]
    texts = [t if isinstance(t, str) else "" for t in scope["text"]]
    paths = [p if isinstance(p, str) else None for p in scope["path"]]
    given = scope["language"].tolist() if "language" in scope.columns else [None] * len(scope)
    langs = [
        g if (cfg.language_from == "missing" and isinstance(g, str) and g) else (detect_language(p, t) or (g or None))
        for g, p, t in zip(given, paths, texts, strict=True)
    ]
    sigs = [rule_signals(t, p, lang, cfg.header_lines, cfg.long_line) for t, p, lang in zip(texts, paths, langs, strict=True)]
    out = pd.DataFrame({"doc_id": scope["doc_id"].astype(object).to_numpy(), "language": pd.Series(langs, dtype=object)})
    sig_frame = pd.DataFrame(sigs)
    for col in sig_frame.columns:
        out[f"sig_{col}"] = sig_frame[col].to_numpy()
    clipped = [t[: cfg.score_max_chars] for t in texts]
    for name in cfg.scorers:
        out[f"code_score_{name}"] = get_scorer(name, cfg.learned_model).score(Batch(clipped, langs, paths)) if len(out) else []
    return out


def _score_part(df: pd.DataFrame, folder: str, cfg: CodeQualityConfig, partition_info: dict | None = None) -> pd.Series:
    number = (partition_info or {}).get("number", 0)
    scores = score_frame(df, cfg)
    write_frame(scores, Path(folder) / f"part-{number:05d}.parquet")
    return pd.Series([len(scores)], dtype="int64")


# -- deciding (cheap, from the artifact) ---------------------------------------------------

def decide_frame(scores: pd.DataFrame, cfg: CodeQualityConfig) -> pd.DataFrame:
    """Per scored file: rule reason + detail, combined score (NaN when a rule fails)."""
    th = cfg.thresholds()
    sig_cols = [c for c in scores.columns if c.startswith("sig_")]
    sigs = scores[sig_cols].rename(columns=lambda c: c[4:]).to_dict("records")
    decided = [decide_rule(s, th, lang) for s, lang in zip(sigs, scores["language"], strict=True)]
    out = pd.DataFrame({"doc_id": scores["doc_id"].to_numpy(), "language": scores["language"].to_numpy()})
    out["rule_reason"] = [r for r, _ in decided]
    out["rule_detail"] = [d for _, d in decided]
    combined = combined_score(scores, cfg.tier_weights)
    combined[out["rule_reason"].notna().to_numpy()] = np.nan
    out["combined"] = combined
    return out


def _hist_part(path: str, cfg: CodeQualityConfig) -> pd.DataFrame:
    d = decide_frame(pd.read_parquet(path), cfg)
    langs = d["language"].fillna("unknown").to_numpy()
    return score_histogram(langs, d["combined"].to_numpy(), tier_group)


def _decide_part(df: pd.DataFrame, folder: str, cfg: CodeQualityConfig, cuts: dict[str, tuple[float, float]],
                 partition_info: dict | None = None) -> pd.DataFrame:
    number = (partition_info or {}).get("number", 0)
    df = df.copy()
    score_cols = [f"code_score_{n}" for n in cfg.scorers]
    for col in score_cols:
        df[col] = np.nan
    df["code_tier"] = pd.Series([None] * len(df), index=df.index, dtype=object)
    df = mark_kept(df)
    path = Path(folder) / f"part-{number:05d}.parquet"
    if not path.exists() or df.empty:
        return df
    scores = pd.read_parquet(path)
    if scores.empty:
        return df
    decided = decide_frame(scores, cfg).set_index("doc_id")
    scores = scores.set_index("doc_id")
    hit = df["doc_id"].isin(decided.index).to_numpy()
    ids = df.loc[hit, "doc_id"].to_numpy()
    d = decided.loc[ids]
    df["language"] = df["language"].astype(object)  # an all-null input column reads back as float
    df.loc[hit, "language"] = d["language"].to_numpy()
    for col in score_cols:
        df.loc[hit, col] = scores.loc[ids, col].to_numpy(dtype=np.float64)
    default, overrides = tier_rules(cfg.tier_mode, cfg.tier_high, cfg.tier_low, cfg.tier_overrides)
    langs = d["language"].fillna("unknown").to_numpy()
    tiers = assign_tiers(d["combined"].to_numpy(), langs, cuts, default, overrides)
    rule = d["rule_reason"].to_numpy()
    reasons: list[str | None] = []
    details: list[str | None] = []
    for i, r in enumerate(rule):
        if isinstance(r, str):
            reasons.append(r)
            details.append(d["rule_detail"].iloc[i])
            tiers[i] = None  # rule failures have no tier
        else:
            reasons.append(None)
            details.append(None)
    df.loc[hit, "code_tier"] = np.array(tiers, dtype=object)
    df.loc[hit, DROP_REASON] = np.array(reasons, dtype=object)
    df.loc[hit, DROP_DETAIL] = np.array(details, dtype=object)
    return df


def tier_counts(hist: pd.DataFrame, cuts: dict[str, tuple[float, float]]) -> dict[str, dict[str, int]]:
    """Files per language and tier (rule-passing files), read off the histograms."""
    out: dict[str, dict[str, int]] = {}
    if hist.empty:
        return out
    merged = hist.groupby(["language", "bin"], sort=True)["count"].sum().reset_index()
    for lang, g in merged.groupby("language", sort=True):
        if str(lang).startswith("group:"):
            continue
        low, high = cuts.get(str(lang), cuts.get("*", (float("-inf"), float("inf"))))
        score = g["bin"].to_numpy() / 100.0
        counts = g["count"].to_numpy()
        out[str(lang)] = {
            "high": int(counts[score >= high].sum()),
            "medium": int(counts[(score >= low) & (score < high)].sum()),
            "low": int(counts[score < low].sum()),
        }
    return out


def _decide_ordered(df: pd.DataFrame, folder: str, cfg: Any, cuts: dict[str, tuple[float, float]], columns: list[str],
                    partition_info: dict | None = None) -> pd.DataFrame:
    return _decide_part(df, folder, cfg, cuts, partition_info=partition_info)[columns]


class CodeQualityStage:
    name = "code_quality"
    version = "1"
    config_cls = CodeQualityConfig
    requires = ("doc_id", "text", "source", "path", "language")
    produces: dict[str, Any] = {"code_score_structural": "float64", "code_tier": object}

    def build(self, docs: dd.DataFrame, cfg: CodeQualityConfig, ctx: Any) -> dd.DataFrame:
        def produce(out: Path) -> None:
            graph = docs.map_partitions(_score_part, str(out), cfg, meta=pd.Series(dtype="int64"))
            counts = compute_with_progress(graph, ctx.client, "code_quality: score", ctx.quiet)
            ctx.extra_stats["scored_files"] = int(np.sum(counts))

        folder = ctx.cached("scores", {"version": self.version, **cfg.score_params()}, produce)
        files = sorted(str(p) for p in folder.glob("part-*.parquet"))
        hist_graph = dd.from_map(_hist_part, files, cfg=cfg, meta=score_histogram(np.array([]), np.array([])), enforce_metadata=False)
        hist = compute_with_progress(hist_graph, ctx.client, "code_quality: tier cuts", ctx.quiet)
        hist = hist if isinstance(hist, pd.DataFrame) else pd.concat(hist)
        default, overrides = tier_rules(cfg.tier_mode, cfg.tier_high, cfg.tier_low, cfg.tier_overrides)
        cuts = thresholds(hist, default, overrides, cfg.tier_min_files, tier_group, UNPOOLED_GROUPS)
        ctx.extra_stats["tier_cuts"] = {k: [float(v[0]), float(v[1])] for k, v in cuts.items()}
        ctx.extra_stats["tiers"] = tier_counts(hist, cuts)
        ctx.extra_stats["annotated"] = {f"tier {t}": sum(v[t] for v in ctx.extra_stats["tiers"].values()) for t in ("high", "low")}
        log.info("code_quality: tier cuts %s", json.dumps(ctx.extra_stats["tier_cuts"]))
        extra = {f"code_score_{n}": "float64" for n in cfg.scorers} | {"code_tier": object}
        meta = annotated_meta(docs._meta, extra)
        return docs.map_partitions(_decide_ordered, str(folder), cfg, cuts, list(meta.columns), meta=meta)


STAGE = CodeQualityStage()
