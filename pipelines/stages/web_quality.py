"""``web_quality``: scorer ensemble → token-weighted percentile buckets → levels (annotation only).

score (one ``ctx.step`` artifact per scorer: ``scores-<name>/part-NNNNN.parquet`` with doc_id, n_tokens,
the score and, for a scorer with details (``heuristics``), every signal; keyed by the scorer's version
and the provenance of its vectors, so changing a threshold or the level mapping never re-runs a model;
:mod:`.web_quality_score`) → thresholds (:mod:`.web_quality_levels`: per scorer,
mergeable quantile sketches of (score, tokens) per partition, tree-merged; exact while a sketch
holds ≤ ``sketch_capacity`` distinct scores, otherwise within the bound in ``stats.extra``) →
combine (``max``: the max of per-scorer buckets, GLM-4.5; ``mean``: the mean token-weighted rank over
scorers, bucketed at its own token-weighted percentiles, one more sketch pass) → decide (per
partition: bucket, level, percentile). The stage removes nothing: every page keeps its scores and
level, and the mixture policy alone decides what a level is worth (its repeat factor, the lowest
level's exclusion with ledger reason ``low_quality``), so no later scorer is starved of pages.

Languages (``per_language``): the sketches are kept per ``lang``; every language with at least
``language_min_docs`` in-scope documents gets its own thresholds (its own 20 token-weighted buckets
and its own high level); pages of smaller languages share one group (``*``), ranked among its own
pages once it holds ``language_min_docs`` of them (else against the whole corpus). A scorer trained on some languages only
(``scorer_languages``, e.g. the shipped English linear model) scores those; elsewhere the
combination uses the other scorers. A scorer not listed there keeps the languages its model was
trained on (``explanatory``: English, ``explanatory_zh``: Chinese; the others: every language).
"""

from __future__ import annotations

import dataclasses
import functools
import logging
from typing import Any

import dask.dataframe as dd
import numpy as np
import pandas as pd

from classifiers.langid import code_problem
from classifiers.scorer import has_details
from classifiers.web_quality import get_scorer, score_options
from curation.config import MERGE, ConfigError, StageConfig, check_choice, check_range
from curation.quality.bucketing import NEMOTRON_LEVELS, scaled_levels, validate_levels
from pipelines.kit import Artifact, Plan, RowStage, SlicedStep, StageContext
from pipelines.kit.preflight import check_model
from pipelines.stages.web_quality_levels import (
    Cuts,
    cuts_and_figures,
    merge_sketches,
    part_sketches,
    read_scores,
    signal_columns,
)
from pipelines.stages.web_quality_score import score_rows, vector_source

log = logging.getLogger(__name__)


@dataclasses.dataclass(frozen=True)
class WebQualityConfig(StageConfig):
    sources: tuple[str, ...] = ("web",)
    scorers: tuple[str, ...] = ("heuristics", "linear")
    scorer_options: dict[str, dict[str, Any]] = dataclasses.field(default_factory=dict)
    score_max_chars: int = 100_000
    keep_signals: bool = True
    n_buckets: int = 20
    combine: str = "mean"  # the recipe sets it; see glm45.yaml for why mean, not GLM-4.5's max
    sketch_capacity: int = 4096
    thresholds: dict[str, list[float]] = dataclasses.field(default_factory=dict)
    # a partition of the buckets: a recipe's levels replace the default's whole
    levels: dict[str, list[int]] = dataclasses.field(default_factory=lambda: {k: list(v) for k, v in NEMOTRON_LEVELS.items()},
                                                     metadata={MERGE: "whole"})
    embed_batch_size: int = 64
    per_language: bool = True
    language_min_docs: int = 50
    scorer_languages: dict[str, list[str]] = dataclasses.field(default_factory=lambda: {"linear": ["en"]})

    def validate(self) -> None:
        check_range(self, "n_buckets", 2, 1000)
        check_range(self, "language_min_docs", 1, None)
        for name, langs in self.scorer_languages.items():
            if not isinstance(langs, list | tuple) or not langs or not all(isinstance(x, str) for x in langs):
                raise ConfigError(f"scorer_languages.{name} must be a non-empty list of language codes, e.g. [en]")
            if problem := code_problem(f"web_quality.scorer_languages.{name}", langs):
                raise ConfigError(problem)
        check_range(self, "sketch_capacity", 64, None)
        check_range(self, "score_max_chars", 1, None)
        check_choice(self, "combine", ("max", "mean"))
        if not self.scorers:
            raise ConfigError("WebQualityConfig.scorers is empty; list at least one (e.g. [heuristics, linear])")
        if len(set(self.scorers)) != len(self.scorers):
            raise ConfigError(f"WebQualityConfig.scorers has duplicates: {list(self.scorers)}")
        for name in self.scorers:
            if not name.replace("_", "").isalnum():
                raise ConfigError(f"scorer name {name!r} must be letters, digits and _ (it names a column)")
        unknown = sorted(set(self.scorer_options) - set(self.scorers))
        if unknown:
            raise ConfigError(f"scorer_options for {unknown} which are not in scorers {list(self.scorers)}")
        try:
            validate_levels(self.levels, self.n_buckets)
        except ValueError as exc:
            covered = max((int(r[1]) for r in self.levels.values() if len(r) == 2), default=-1) + 1
            if covered != self.n_buckets:  # n_buckets changed alone: the levels still partition the old buckets
                example = "{" + ", ".join(f"{k}: [{a}, {b}]" for k, (a, b) in scaled_levels(self.n_buckets).items()) + "}"
                raise ConfigError(f"web_quality.n_buckets = {self.n_buckets} but web_quality.levels partitions {covered} buckets "
                                  f"({exc}): give levels together with n_buckets, a whole partition of 0 … {self.n_buckets - 1}, "
                                  f"e.g. web_quality.levels='{example}'") from exc
            raise ConfigError(f"WebQualityConfig.levels: {exc}") from exc
        for name, cuts in self.thresholds.items():
            if name not in self.scorers and name != "combined":
                raise ConfigError(f"thresholds for {name!r} which is neither in scorers {list(self.scorers)} nor 'combined'")
            if any(not isinstance(c, (int, float)) or isinstance(c, bool) or c != c for c in cuts):
                raise ConfigError(f"thresholds.{name} holds values that are not numbers ({[c for c in cuts][:3]}…): the run "
                                  f"they were copied from scored no page with {name} (e.g. no page in its languages); "
                                  f"leave {name} out of thresholds")
            if len(cuts) != self.n_buckets - 1 or list(cuts) != sorted(cuts):
                raise ConfigError(f"thresholds.{name} needs {self.n_buckets - 1} ascending values")

    def scorer(self, name: str) -> Any:
        return get_scorer(name, self.scorer_options.get(name))

    def languages_of(self, name: str) -> list[str]:
        """The languages scorer ``name`` scores (empty: all): ``scorer_languages`` or its model's own."""
        if name in self.scorer_languages:
            return list(self.scorer_languages[name])
        return list(getattr(self.scorer(name), "languages", None) or [])


#: scorer kind → the kind of model folder its ``model`` option names (checked before anything runs)
MODEL_KINDS = {"linear": "hashed_linear", "explanatory": "hashed_linear", "explanatory_zh": "hashed_linear",
               "embedding": "embedding_head"}


class WebQualityStage(RowStage):
    name = "web_quality"
    version = "3"  # 2: lang in the score artifacts, per-language signals and percentiles; 3: small languages pooled
    config_cls = WebQualityConfig
    requires = ("doc_id", "text", "source", "n_tokens")
    requires_artifacts = {"embeddings": ("semdedup", "embeddings")}
    produces: dict[str, Any] = {
        "quality_bucket": "Int64",
        "quality_level": object,
        "quality_percentile": "float64",
    }

    def preflight(self, cfg: WebQualityConfig) -> None:
        for name in cfg.scorers:  # a scorer checks its model path when it is made; it loads the model when it scores
            try:
                cfg.scorer(name)
            except (ValueError, OSError, ImportError) as exc:
                raise ConfigError(f"web_quality.scorer_options.{name}: {exc}") from None
            opts = cfg.scorer_options.get(name)
            kind = opts.get("kind", name) if isinstance(opts, dict) else None  # a scorer's kind is its name unless told
            if kind in MODEL_KINDS and opts.get("model"):  # whole, and a web-quality model: an edu model was taken
                check_model(f"web_quality.scorer_options.{name}.model", str(opts["model"]), MODEL_KINDS[kind], use="web_quality",
                            how=f"train one with `curate train-classifier {'web-embedding' if kind == 'embedding' else 'linear'}`")

    def model_paths(self, cfg: WebQualityConfig) -> dict[str, str]:
        return {f"scorer_options.{name}.model": str(opts["model"]) for name, opts in cfg.scorer_options.items()
                if name in cfg.scorers and isinstance(opts, dict) and opts.get("model")}

    def prepare(self, docs: dd.DataFrame, cfg: WebQualityConfig, ctx: StageContext) -> Plan:
        folders, written = self._score(docs, cfg, ctx)
        cuts, figures = cuts_and_figures(folders, cfg, ctx, written)
        signal_cols = signal_columns(folders, [n for n in cfg.scorers if cfg.keep_signals and has_details(cfg.scorer(n))])
        columns = dict(self.produces) | {f"quality_score_{n}": "float64" for n in cfg.scorers} | {c: "float64" for c in signal_cols}
        return Plan((folders, cuts, signal_cols), figures, columns)

    def decide(self, number: int, df: pd.DataFrame, state: Any, cfg: WebQualityConfig) -> pd.DataFrame:
        folders, cuts, signal_cols = state
        return decide_part(number, df, folders, cuts, signal_cols, cfg)

    def _score(self, docs: dd.DataFrame, cfg: WebQualityConfig, ctx: StageContext) -> tuple[dict[str, Artifact], dict[str, Any]]:
        """``scores-<name>`` per scorer: the scorer over every partition, each a cached step of
        its own (reused while its model and inputs are), the missing ones computed together; and
        per scorer computed now, its parts' per-language sketches, taken in the tasks that write
        them and merged in the same compute."""
        steps, sketches = [], {}
        for name in cfg.scorers:
            scorer = cfg.scorer(name)  # fails early, before any compute, on a bad model path
            vectors = vector_source(scorer, ctx.upstream.get("embeddings"))
            params = {"scorer": scorer.version, "options": score_options(name, cfg.scorer_options.get(name)),  # all but RUN_ONLY
                      "sources": sorted(cfg.sources), "max_chars": cfg.score_max_chars,
                      "signals": bool(cfg.keep_signals and has_details(scorer)), "stage": self.version,
                      "languages": sorted(cfg.languages_of(name)),
                      **({"vectors": vectors.tag()} if vectors is not None else {})}
            steps.append(SlicedStep(f"scores-{name}", params, score_rows, (cfg, name, vectors),
                                    figures=lambda rows, name=name: {"scored_documents": {name: rows}},
                                    summarise=functools.partial(part_sketches, capacity=cfg.sketch_capacity), merge=merge_sketches))
        arts = ctx.sliced_steps(docs, steps, f"score {', '.join(cfg.scorers)}", sources=cfg.sources,
                                columns=["doc_id", "source", "text", "n_tokens", "lang"],  # what score_rows reads
                                summaries=sketches)
        written = {name: sketches[f"scores-{name}"] for name in cfg.scorers if f"scores-{name}" in sketches}
        return dict(zip(cfg.scorers, arts, strict=True)), written


def decide_part(number: int, df: pd.DataFrame, folders: dict[str, Artifact], cuts: Cuts, signal_cols: list[str],
                cfg: WebQualityConfig) -> pd.DataFrame:
    """A partition with its scores, signals, bucket, level and percentile (read from the score artifacts)."""
    df = df.copy()
    for n in cfg.scorers:
        df[f"quality_score_{n}"] = np.nan
    for c in signal_cols:
        df[c] = np.nan
    df["quality_bucket"] = pd.array([pd.NA] * len(df), dtype="Int64")
    df["quality_level"] = pd.Series([None] * len(df), index=df.index, dtype=object)
    df["quality_percentile"] = np.nan
    s = read_scores(folders, number, signals=bool(signal_cols)) if len(df) else None
    if s is None or s.empty:
        return df
    s = s.drop_duplicates("doc_id").set_index("doc_id")
    hit = df["doc_id"].isin(s.index).to_numpy()
    if not hit.any():
        return df
    rows = s.loc[df.loc[hit, "doc_id"].to_numpy()]
    d = cuts.decision(rows, cfg)
    for n in cfg.scorers:
        df.loc[hit, f"quality_score_{n}"] = rows[n].to_numpy(dtype=np.float64)
    for c in signal_cols:
        if c in rows.columns:
            df.loc[hit, c] = rows[c].to_numpy(dtype=np.float64)
    df.loc[hit, "quality_bucket"] = d.bucket
    df.loc[hit, "quality_level"] = d.level
    df.loc[hit, "quality_percentile"] = np.round(d.percentile, 4)
    return df


STAGE = WebQualityStage()
