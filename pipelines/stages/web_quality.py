"""``web_quality``: scorer ensemble → token-weighted percentile buckets → levels (annotation only).

score (one cached artifact per scorer: ``scores-<name>/part-NNNNN.parquet`` with doc_id, n_tokens,
the score and, for ``heuristics``, every signal; keyed by the scorer's version, so changing a
threshold or the level mapping never re-runs a model) → thresholds (per scorer,
mergeable quantile sketches of (score, tokens) per partition, tree-merged; exact while a sketch
holds ≤ ``sketch_capacity`` distinct scores, otherwise within the bound in ``stats.extra``) →
combine (``max``: the max of per-scorer buckets, GLM-4.5; ``mean``: the mean token-weighted rank over
scorers, bucketed at its own token-weighted percentiles, one more sketch pass) → decide (per
partition: bucket, level, percentile). The stage removes nothing: every page keeps its scores and
level, and the mixture policy alone decides what a level is worth (its repeat factor, the lowest
level's exclusion with ledger reason ``low_quality``), so no later scorer is starved of pages.
"""

from __future__ import annotations

import dataclasses
import json
import logging
from pathlib import Path
from typing import Any

import dask
import dask.dataframe as dd
import numpy as np
import pandas as pd
import pyarrow.parquet as pq

from classifiers.web_quality import get_scorer
from curation.bucketing import (
    LEVEL_ORDER,
    NEMOTRON_LEVELS,
    QuantileSketch,
    combined_rank,
    decide,
    percentile_grid,
    token_weights,
    validate_levels,
)
from curation.config import ConfigError, StageConfig, check_choice, check_range
from curation.schema import annotated_meta, mark_kept
from pipelines.progress import compute_with_progress
from pipelines.stages.web_quality_score import score_part

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
    levels: dict[str, list[int]] = dataclasses.field(default_factory=lambda: {k: list(v) for k, v in NEMOTRON_LEVELS.items()})
    embed_batch_size: int = 64

    def validate(self) -> None:
        check_range(self, "n_buckets", 2, 1000)
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
            raise ConfigError(f"WebQualityConfig.levels: {exc}") from exc
        for name, cuts in self.thresholds.items():
            if name not in self.scorers and name != "combined":
                raise ConfigError(f"thresholds for {name!r} which is neither in scorers {list(self.scorers)} nor 'combined'")
            if len(cuts) != self.n_buckets - 1 or list(cuts) != sorted(cuts):
                raise ConfigError(f"thresholds.{name} needs {self.n_buckets - 1} ascending values")

    def scorer(self, name: str) -> Any:
        return get_scorer(name, self.scorer_options.get(name))


class WebQualityStage:
    name = "web_quality"
    version = "1"
    config_cls = WebQualityConfig
    requires = ("doc_id", "text", "source", "n_tokens")
    produces: dict[str, Any] = {
        "quality_bucket": "Int64",
        "quality_level": object,
        "quality_percentile": "float64",
    }

    def build(self, docs: dd.DataFrame, cfg: WebQualityConfig, ctx: Any) -> dd.DataFrame:
        folders: dict[str, str] = {}
        for name in cfg.scorers:
            scorer = cfg.scorer(name)  # fails early, before any compute, on a bad model path
            params = {"scorer": scorer.version, "sources": sorted(cfg.sources), "max_chars": cfg.score_max_chars,
                      "signals": bool(cfg.keep_signals and scorer.kind == "heuristics"), "stage": self.version}
            folders[name] = str(ctx.cached(f"scores-{name}", params, lambda out, n=name: _score_all(docs, cfg, n, out, ctx)))
        sketches = _sketches(folders, cfg, ctx)
        thresholds = {  # fixed cut points where the recipe gives them, else this corpus' percentiles
            n: np.asarray(cfg.thresholds[n], dtype=np.float64) if n in cfg.thresholds
            else sketches[n].thresholds(percentile_grid(cfg.n_buckets))
            for n in cfg.scorers
        }
        combined = _combined_sketch(folders, sketches, cfg, ctx) if cfg.combine == "mean" else None
        combined_th = combined.thresholds(percentile_grid(cfg.n_buckets)).tolist() if combined is not None else None
        if cfg.combine == "mean" and "combined" in cfg.thresholds:
            combined_th = [float(x) for x in cfg.thresholds["combined"]]
        _record_stats(folders, thresholds, sketches, combined, combined_th, cfg, ctx)
        produces = dict(self.produces)
        for n in cfg.scorers:
            produces[f"quality_score_{n}"] = "float64"
        signal_cols = _signal_columns(folders, cfg)
        for c in signal_cols:
            produces[c] = "float64"
        meta = annotated_meta(docs._meta, produces)
        return docs.map_partitions(
            _decide_part, folders, {n: t.tolist() for n, t in thresholds.items()},
            {n: s.to_dict() for n, s in sketches.items()}, combined_th, signal_cols, cfg, list(meta.columns), meta=meta,
        )


# -- scoring -------------------------------------------------------------------------------

def _score_all(docs: dd.DataFrame, cfg: WebQualityConfig, name: str, out: Path, ctx: Any) -> None:
    upstream = ctx.upstream_artifact("semdedup", "embeddings")
    counts = docs.map_partitions(
        score_part, str(out), cfg, name, str(upstream) if upstream else None, meta=pd.Series(dtype="int64")
    )
    n = compute_with_progress(counts, ctx.client, f"web_quality: score {name}", ctx.quiet)
    ctx.extra_stats.setdefault("scored_documents", {})[name] = int(n.sum())


# -- thresholds ----------------------------------------------------------------------------

def _part_sketch(path: str, capacity: int) -> QuantileSketch:
    table = pq.read_table(path, columns=["score", "n_tokens"]).to_pandas()
    return QuantileSketch.from_values(table["score"].to_numpy(), token_weights(table["n_tokens"].to_numpy()), capacity)


def _merge(sketches: list[QuantileSketch]) -> QuantileSketch:
    out = sketches[0]
    for s in sketches[1:]:
        out = out.merge(s)
    return out


def _sketches(folders: dict[str, str], cfg: WebQualityConfig, ctx: Any) -> dict[str, QuantileSketch]:
    """One merged token-weighted sketch per scorer: per-partition sketches merged 8 at a time."""
    graphs = {}
    for name, folder in folders.items():
        level = [dask.delayed(_part_sketch)(str(p), cfg.sketch_capacity) for p in sorted(Path(folder).glob("part-*.parquet"))]
        if not level:
            level = [dask.delayed(QuantileSketch.empty)(cfg.sketch_capacity)]
        while len(level) > 1:
            level = [dask.delayed(_merge)(level[i : i + 8]) for i in range(0, len(level), 8)]
        graphs[name] = level[0]
    names = list(graphs)
    merged = _compute_delayed(dask.delayed(list)([graphs[n] for n in names]), ctx)
    return dict(zip(names, merged, strict=True))


def _part_combined(folders: dict[str, str], sketches: dict[str, dict[str, Any]], cfg: WebQualityConfig,
                   number: int) -> QuantileSketch:
    s = _read_scores(folders, number)
    if s is None or s.empty:
        return QuantileSketch.empty(cfg.sketch_capacity)
    sk = {n: QuantileSketch.from_dict(v) for n, v in sketches.items()}
    rank = combined_rank({n: s[n].to_numpy(dtype=np.float64) for n in folders}, sk, "mean")
    return QuantileSketch.from_values(rank, token_weights(s["n_tokens"].to_numpy()), cfg.sketch_capacity)


def _combined_sketch(folders: dict[str, str], sketches: dict[str, QuantileSketch], cfg: WebQualityConfig, ctx: Any) -> QuantileSketch:
    """Token-weighted sketch of the mean rank over scorers (``combine: mean``), merged like the others."""
    n_parts = len(list(Path(next(iter(folders.values()))).glob("part-*.parquet")))
    plain = {n: s.to_dict() for n, s in sketches.items()}
    level = [dask.delayed(_part_combined)(folders, plain, cfg, i) for i in range(n_parts)]
    if not level:
        return QuantileSketch.empty(cfg.sketch_capacity)
    while len(level) > 1:
        level = [dask.delayed(_merge)(level[i : i + 8]) for i in range(0, len(level), 8)]
    return _compute_delayed(level[0], ctx)


def _compute_delayed(obj: Any, ctx: Any) -> Any:
    """Compute a small Delayed (sketch merges, level counts) on the run's client or locally.

    Not through ``compute_with_progress``: a Delayed answers ``hasattr(x, "to_delayed")`` with a
    new Delayed, which that helper would take for a dataframe.
    """
    if ctx.client is None:
        return dask.compute(obj)[0]
    return ctx.client.compute(obj).result()


def _record_stats(folders: dict[str, str], thresholds: dict[str, np.ndarray], sketches: dict[str, QuantileSketch],
                  combined: QuantileSketch | None, combined_th: list[float] | None, cfg: WebQualityConfig, ctx: Any) -> None:
    """stats.extra: thresholds, rank-error bounds, token share per level and per bucket of each scorer."""
    per_level: dict[str, dict[str, float]] = {}
    plain = {n: s.to_dict() for n, s in sketches.items()}
    parts = [dask.delayed(_level_counts)(folders, {n: t.tolist() for n, t in thresholds.items()}, plain, combined_th, cfg, i)
             for i in range(len(list(Path(next(iter(folders.values()))).glob("part-*.parquet"))))]
    frames = _compute_delayed(dask.delayed(list)(parts), ctx) if parts else []
    counts = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=["what", "key", "documents", "tokens"])
    summed = counts.groupby(["what", "key"], sort=True)[["documents", "tokens"]].sum()
    for (what, key), row in summed.iterrows():
        per_level.setdefault(str(what), {})[str(key)] = {"documents": int(row["documents"]), "tokens": int(row["tokens"])}
    total_tokens = sum(v["tokens"] for v in per_level.get("level", {}).values()) or 1
    ctx.extra_stats.update({
        "scorers": {n: cfg.scorer(n).version for n in cfg.scorers},
        "thresholds": {n: [float(x) for x in t] for n, t in thresholds.items()},
        "thresholds_fixed": sorted(cfg.thresholds),  # "combined": the mean-rank cut points were fixed too
        "combine": cfg.combine,
        "combined_thresholds": combined_th,
        "percentile_rank_error_bound": {**{n: float(s.error) for n, s in sketches.items()},
                                        **({"combined": float(combined.error)} if combined is not None else {})},
        "sketch_points": {n: len(s.values) for n, s in sketches.items()},
        "levels": {lvl: {**per_level.get("level", {}).get(lvl, {"documents": 0, "tokens": 0}),
                         "token_share": per_level.get("level", {}).get(lvl, {"tokens": 0})["tokens"] / total_tokens}
                   for lvl in [*LEVEL_ORDER, *sorted(set(cfg.levels) - set(LEVEL_ORDER))] if lvl in cfg.levels},
        "buckets": {k: v for k, v in per_level.items() if k != "level"},
        "annotated": {f"level {lvl}": per_level.get("level", {}).get(lvl, {"documents": 0})["documents"]
                      for lvl in ("high", "low") if lvl in cfg.levels},
    })


def _read_scores(folders: dict[str, str], number: int, signals: bool = False) -> pd.DataFrame | None:
    """The scores of partition ``number``: doc_id, n_tokens, one column per scorer (+ signals)."""
    merged: pd.DataFrame | None = None
    for name, folder in folders.items():
        path = Path(folder) / f"part-{number:05d}.parquet"
        if not path.exists():
            return None
        t = pq.read_table(path).to_pandas()
        keep = ["doc_id", "score"] + ([c for c in t.columns if c.startswith("quality_signal_")] if signals else [])
        t = t[keep + (["n_tokens"] if merged is None else [])].rename(columns={"score": name})
        merged = t if merged is None else merged.merge(t, on="doc_id", how="outer")
    return merged


def _level_counts(folders: dict[str, str], thresholds: dict[str, list[float]], sketches: dict[str, dict[str, Any]],
                  combined_th: list[float] | None, cfg: WebQualityConfig, number: int) -> pd.DataFrame:
    s = _read_scores(folders, number)
    cols = {"what": [], "key": [], "documents": [], "tokens": []}
    if s is None or s.empty:
        return pd.DataFrame(cols)
    d = decide({n: s[n].to_numpy(dtype=np.float64) for n in folders}, {n: np.asarray(t) for n, t in thresholds.items()},
               cfg.levels, None, cfg.combine, {n: QuantileSketch.from_dict(v) for n, v in sketches.items()},
               np.asarray(combined_th) if combined_th is not None else None)
    tokens = s["n_tokens"].fillna(0).to_numpy(dtype=np.int64)
    frames = [pd.DataFrame({"what": "level", "key": d.level, "documents": 1, "tokens": tokens})]
    for n, b in d.buckets.items():
        frames.append(pd.DataFrame({"what": f"bucket_{n}", "key": b.astype(str), "documents": 1, "tokens": tokens}))
    frames.append(pd.DataFrame({"what": "bucket", "key": d.bucket.astype(str), "documents": 1, "tokens": tokens}))
    return pd.concat(frames).groupby(["what", "key"], as_index=False)[["documents", "tokens"]].sum()


def _signal_columns(folders: dict[str, str], cfg: WebQualityConfig) -> list[str]:
    for name, folder in folders.items():
        if cfg.scorer(name).kind != "heuristics" or not cfg.keep_signals:
            continue
        files = sorted(Path(folder).glob("part-*.parquet"))
        if files:
            return [c for c in pq.read_schema(files[0]).names if c.startswith("quality_signal_")]
    return []


# -- deciding ------------------------------------------------------------------------------

def _decide_part(df: pd.DataFrame, folders: dict[str, str], thresholds: dict[str, list[float]],
                 sketches: dict[str, dict[str, Any]], combined_th: list[float] | None, signal_cols: list[str],
                 cfg: WebQualityConfig, columns: list[str], partition_info: dict | None = None) -> pd.DataFrame:
    number = (partition_info or {}).get("number", 0)
    return _decide(df, number, folders, thresholds, sketches, combined_th, signal_cols, cfg)[columns]


def _decide(df: pd.DataFrame, number: int, folders: dict[str, str], thresholds: dict[str, list[float]],
            sketches: dict[str, dict[str, Any]], combined_th: list[float] | None, signal_cols: list[str],
            cfg: WebQualityConfig) -> pd.DataFrame:
    df = mark_kept(df.copy())
    for n in cfg.scorers:
        df[f"quality_score_{n}"] = np.nan
    for c in signal_cols:
        df[c] = np.nan
    df["quality_bucket"] = pd.array([pd.NA] * len(df), dtype="Int64")
    df["quality_level"] = pd.Series([None] * len(df), index=df.index, dtype=object)
    df["quality_percentile"] = np.nan
    s = _read_scores(folders, number, signals=bool(signal_cols)) if len(df) else None
    if s is None or s.empty:
        return df
    s = s.drop_duplicates("doc_id").set_index("doc_id")
    hit = df["doc_id"].isin(s.index).to_numpy()
    if not hit.any():
        return df
    rows = s.loc[df.loc[hit, "doc_id"].to_numpy()]
    scores = {n: rows[n].to_numpy(dtype=np.float64) for n in cfg.scorers}
    d = decide(scores, {n: np.asarray(t, dtype=np.float64) for n, t in thresholds.items()}, cfg.levels, None,
               cfg.combine, {n: QuantileSketch.from_dict(v) for n, v in sketches.items()},
               np.asarray(combined_th) if combined_th is not None else None)
    for n in cfg.scorers:
        df.loc[hit, f"quality_score_{n}"] = scores[n]
    for c in signal_cols:
        if c in rows.columns:
            df.loc[hit, c] = rows[c].to_numpy(dtype=np.float64)
    df.loc[hit, "quality_bucket"] = d.bucket
    df.loc[hit, "quality_level"] = d.level
    df.loc[hit, "quality_percentile"] = np.round(d.percentile, 4)
    return df


def thresholds_json(stage_dir: Path) -> dict[str, Any]:
    """The thresholds a finished run used (from its stats.json), e.g. to fix them for another run."""
    stats = json.loads((Path(stage_dir) / "stats.json").read_text())
    return stats["extra"]["thresholds"]


STAGE = WebQualityStage()
