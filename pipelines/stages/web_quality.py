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

Languages (``per_language``): the sketches are kept per ``lang``; every language with at least
``language_min_docs`` in-scope documents gets its own thresholds (its own 20 token-weighted buckets
and its own high level); pages of smaller languages are bucketed against the whole corpus (``*``). A scorer trained on some languages only
(``scorer_languages``, e.g. the shipped English linear model) scores those; elsewhere the
combination uses the other scorers.
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
from curation.config import ConfigError, StageConfig, check_choice, check_range
from curation.quality.bucketing import (
    LEVEL_ORDER,
    NEMOTRON_LEVELS,
    OTHER_LANGS,
    decide_by_group,
    language_groups,
    own_languages,
    validate_levels,
)
from curation.quality.sketch import QuantileSketch, combined_rank, percentile_grid, token_weights
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
    per_language: bool = True
    language_min_docs: int = 50
    scorer_languages: dict[str, list[str]] = dataclasses.field(default_factory=dict)

    def validate(self) -> None:
        check_range(self, "n_buckets", 2, 1000)
        check_range(self, "language_min_docs", 1, None)
        for name, langs in self.scorer_languages.items():
            if not isinstance(langs, list | tuple) or not langs or not all(isinstance(x, str) for x in langs):
                raise ConfigError(f"scorer_languages.{name} must be a non-empty list of language codes, e.g. [en]")
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
    version = "2"  # 2: lang in the score artifacts, per-language signals and percentiles
    config_cls = WebQualityConfig
    requires = ("doc_id", "text", "source", "n_tokens")
    requires_artifacts = {"embeddings": ("semdedup", "embeddings")}
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
                      "signals": bool(cfg.keep_signals and scorer.kind == "heuristics"), "stage": self.version,
                      "languages": sorted(cfg.scorer_languages.get(name, []))}
            folders[name] = str(ctx.cached(f"scores-{name}", params, lambda out, n=name: _score_all(docs, cfg, n, out, ctx)))
        by_lang, docs_per_lang = _sketches(folders, cfg, ctx)
        own = own_languages(docs_per_lang, cfg.language_min_docs) if cfg.per_language else []
        sketches = _group_sketches(by_lang, own, cfg)
        thresholds = {g: _thresholds(sk, cfg) for g, sk in sketches.items()}
        combined = _combined_sketch(folders, sketches, own, cfg, ctx) if cfg.combine == "mean" else None
        combined_th: dict[str, list[float] | None] | None = None
        if combined is not None:
            combined_th = {g: c.thresholds(percentile_grid(cfg.n_buckets)).tolist() for g, c in combined.items()}
            if "combined" in cfg.thresholds:
                combined_th = {g: [float(x) for x in cfg.thresholds["combined"]] for g in combined}
        _record_stats(folders, thresholds, sketches, combined, combined_th, own, docs_per_lang, cfg, ctx)
        produces = dict(self.produces)
        for n in cfg.scorers:
            produces[f"quality_score_{n}"] = "float64"
        signal_cols = _signal_columns(folders, cfg)
        for c in signal_cols:
            produces[c] = "float64"
        meta = annotated_meta(docs._meta, produces)
        return docs.map_partitions(
            _decide_part, folders, _plain_thresholds(thresholds), _plain(sketches), combined_th, own, signal_cols, cfg,
            list(meta.columns), meta=meta,
        )


# -- scoring -------------------------------------------------------------------------------

def _score_all(docs: dd.DataFrame, cfg: WebQualityConfig, name: str, out: Path, ctx: Any) -> None:
    upstream = ctx.upstream.get("embeddings")
    counts = docs.map_partitions(
        score_part, str(out), cfg, name, str(upstream) if upstream else None, meta=pd.Series(dtype="int64")
    )
    n = compute_with_progress(counts, ctx.client, f"web_quality: score {name}", ctx.quiet)
    ctx.extra_stats.setdefault("scored_documents", {})[name] = int(n.sum())


# -- thresholds ----------------------------------------------------------------------------

LangSketches = dict[str, tuple[QuantileSketch, int]]  # lang -> (token-weighted sketch, documents)


def _part_sketch(path: str, capacity: int) -> LangSketches:
    """Per language of one scores part: the sketch of its scores and its number of documents."""
    table = pq.read_table(path, columns=["score", "n_tokens", "lang"]).to_pandas()
    out: LangSketches = {}
    for lang, g in table.groupby(table["lang"].fillna("und").astype(str), sort=True):
        out[str(lang)] = (QuantileSketch.from_values(g["score"].to_numpy(), token_weights(g["n_tokens"].to_numpy()), capacity), len(g))
    return out


def _merge(sketches: list[Any]) -> Any:
    """Merge sketches, or per-language ``{lang: (sketch, documents)}`` maps key by key."""
    if sketches and isinstance(sketches[0], dict):
        out: LangSketches = {}
        for part in sketches:
            for lang, (sk, n) in part.items():
                out[lang] = (out[lang][0].merge(sk), out[lang][1] + n) if lang in out else (sk, n)
        return out
    out_sk = sketches[0]
    for s in sketches[1:]:
        out_sk = out_sk.merge(s)
    return out_sk


def _sketches(folders: dict[str, str], cfg: WebQualityConfig, ctx: Any) -> tuple[dict[str, LangSketches], dict[str, int]]:
    """Per scorer, merged token-weighted sketches per language (per-partition ones merged 8 at a
    time), and the documents per language."""
    graphs = {}
    for name, folder in folders.items():
        level = [dask.delayed(_part_sketch)(str(p), cfg.sketch_capacity) for p in sorted(Path(folder).glob("part-*.parquet"))]
        if not level:
            level = [dask.delayed(dict)()]
        while len(level) > 1:
            level = [dask.delayed(_merge)(level[i : i + 8]) for i in range(0, len(level), 8)]
        graphs[name] = level[0]
    names = list(graphs)
    merged = dict(zip(names, _compute_delayed(dask.delayed(list)([graphs[n] for n in names]), ctx), strict=True))
    first = merged[names[0]] if names else {}
    return merged, {lang: n for lang, (_, n) in first.items()}


def _group_sketches(by_lang: dict[str, LangSketches], own: list[str], cfg: WebQualityConfig) -> dict[str, dict[str, QuantileSketch]]:
    """{group: {scorer: sketch}}: one group per language in ``own``; ``*`` is the whole corpus, against
    which the pages of the smaller languages are bucketed (as every page was before languages)."""
    out: dict[str, dict[str, QuantileSketch]] = {g: {} for g in [*own, OTHER_LANGS]}
    for name, langs in by_lang.items():
        for g in out:
            parts = [sk for lang, (sk, _) in langs.items() if (lang == g or g == OTHER_LANGS)]
            out[g][name] = _merge(parts) if parts else QuantileSketch.empty(cfg.sketch_capacity)
    return out


def _thresholds(sketches: dict[str, QuantileSketch], cfg: WebQualityConfig) -> dict[str, np.ndarray]:
    """Fixed cut points where the recipe gives them, else the group's token-weighted percentiles."""
    return {n: np.asarray(cfg.thresholds[n], dtype=np.float64) if n in cfg.thresholds
            else sketches[n].thresholds(percentile_grid(cfg.n_buckets)) for n in cfg.scorers}


def _plain(sketches: dict[str, dict[str, QuantileSketch]]) -> dict[str, dict[str, dict[str, Any]]]:
    return {g: {n: s.to_dict() for n, s in per.items()} for g, per in sketches.items()}


def _plain_thresholds(thresholds: dict[str, dict[str, np.ndarray]]) -> dict[str, dict[str, list[float]]]:
    return {g: {n: np.asarray(t).tolist() for n, t in per.items()} for g, per in thresholds.items()}


def _part_combined(folders: dict[str, str], sketches: dict[str, dict[str, dict[str, Any]]], own: list[str],
                   cfg: WebQualityConfig, number: int) -> dict[str, QuantileSketch]:
    s = _read_scores(folders, number)
    out = {g: QuantileSketch.empty(cfg.sketch_capacity) for g in sketches}
    if s is None or s.empty:
        return out
    groups = language_groups(s["lang"].to_numpy(), own)
    for g in sketches:
        rows = s if g == OTHER_LANGS else s[groups == g]  # "*": ranks over the whole corpus
        if rows.empty:
            continue
        sk = {n: QuantileSketch.from_dict(v) for n, v in sketches[g].items()}
        rank = combined_rank({n: rows[n].to_numpy(dtype=np.float64) for n in folders}, sk, "mean")
        out[g] = QuantileSketch.from_values(rank, token_weights(rows["n_tokens"].to_numpy()), cfg.sketch_capacity)
    return out


def _merge_groups(parts: list[dict[str, QuantileSketch]]) -> dict[str, QuantileSketch]:
    return {g: _merge([p[g] for p in parts]) for g in parts[0]}


def _combined_sketch(folders: dict[str, str], sketches: dict[str, dict[str, QuantileSketch]], own: list[str],
                     cfg: WebQualityConfig, ctx: Any) -> dict[str, QuantileSketch]:
    """Per group, the token-weighted sketch of the mean rank over scorers (``combine: mean``)."""
    n_parts = len(list(Path(next(iter(folders.values()))).glob("part-*.parquet")))
    plain = _plain(sketches)
    level = [dask.delayed(_part_combined)(folders, plain, own, cfg, i) for i in range(n_parts)]
    if not level:
        return {g: QuantileSketch.empty(cfg.sketch_capacity) for g in sketches}
    while len(level) > 1:
        level = [dask.delayed(_merge_groups)(level[i : i + 8]) for i in range(0, len(level), 8)]
    return _compute_delayed(level[0], ctx)


def _compute_delayed(obj: Any, ctx: Any) -> Any:
    """Compute a small Delayed (sketch merges, level counts) on the run's client or locally.

    Not through ``compute_with_progress``: a Delayed answers ``hasattr(x, "to_delayed")`` with a
    new Delayed, which that helper would take for a dataframe.
    """
    if ctx.client is None:
        return dask.compute(obj)[0]
    return ctx.client.compute(obj).result()


def _record_stats(folders: dict[str, str], thresholds: dict[str, dict[str, np.ndarray]],
                  sketches: dict[str, dict[str, QuantileSketch]], combined: dict[str, QuantileSketch] | None,
                  combined_th: dict[str, list[float] | None] | None, own: list[str], docs_per_lang: dict[str, int],
                  cfg: WebQualityConfig, ctx: Any) -> None:
    """stats.extra: thresholds (whole corpus, and per language group), rank-error bounds, token share
    per level and per bucket of each scorer, level shares per language."""
    per_level: dict[str, dict[str, float]] = {}
    group_docs = {g: docs_per_lang.get(g, 0) for g in own}
    group_docs[OTHER_LANGS] = sum(n for lang, n in docs_per_lang.items() if lang not in own)
    live = [g for g in sketches if group_docs.get(g, 0) > 0] or [OTHER_LANGS]
    main = max(live, key=lambda g: group_docs.get(g, 0))
    whole = sketches[OTHER_LANGS]
    parts = [dask.delayed(_level_counts)(folders, _plain_thresholds(thresholds), _plain(sketches), combined_th, own, cfg, i)
             for i in range(len(list(Path(next(iter(folders.values()))).glob("part-*.parquet"))))]
    frames = _compute_delayed(dask.delayed(list)(parts), ctx) if parts else []
    counts = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=["what", "key", "documents", "tokens"])
    summed = counts.groupby(["what", "key"], sort=True)[["documents", "tokens"]].sum()
    for (what, key), row in summed.iterrows():
        per_level.setdefault(str(what), {})[str(key)] = {"documents": int(row["documents"]), "tokens": int(row["tokens"])}
    total_tokens = sum(v["tokens"] for v in per_level.get("level", {}).values()) or 1
    by_lang_level: dict[str, dict[str, dict[str, int]]] = {}
    for key, v in per_level.get("lang_level", {}).items():
        lang, _, lvl = key.partition("|")
        by_lang_level.setdefault(lang, {})[lvl] = v
    ctx.extra_stats.update({
        "scorers": {n: cfg.scorer(n).version for n in cfg.scorers},
        # the whole corpus' cut points (what a monolingual run uses; thresholds_json fixes them for another run)
        "thresholds": {n: [float(x) for x in (thresholds[main][n] if n in cfg.thresholds else
                                               whole[n].thresholds(percentile_grid(cfg.n_buckets)))] for n in cfg.scorers},
        "thresholds_fixed": sorted(cfg.thresholds),  # "combined": the mean-rank cut points were fixed too
        "per_language": cfg.per_language,
        "language_groups": {g: group_docs.get(g, 0) for g in live},  # group -> in-scope documents
        "thresholds_by_lang": {g: {n: [float(x) for x in thresholds[g][n]] for n in cfg.scorers} for g in live},
        "combine": cfg.combine,
        "combined_thresholds": combined_th[main] if combined_th is not None else None,  # the largest group's
        "combined_thresholds_by_lang": {g: combined_th[g] for g in live} if combined_th is not None else None,
        "percentile_rank_error_bound": {**{n: max(float(sketches[g][n].error) for g in live) for n in cfg.scorers},
                                        **({"combined": max(float(combined[g].error) for g in live)} if combined is not None else {})},
        "sketch_points": {n: len(whole[n].values) for n in cfg.scorers},
        "levels_by_lang": by_lang_level,
        "levels": {lvl: {**per_level.get("level", {}).get(lvl, {"documents": 0, "tokens": 0}),
                         "token_share": per_level.get("level", {}).get(lvl, {"tokens": 0})["tokens"] / total_tokens}
                   for lvl in [*LEVEL_ORDER, *sorted(set(cfg.levels) - set(LEVEL_ORDER))] if lvl in cfg.levels},
        "buckets": {k: v for k, v in per_level.items() if k not in ("level", "lang_level")},
        "annotated": {f"level {lvl}": per_level.get("level", {}).get(lvl, {"documents": 0})["documents"]
                      for lvl in ("high", "low") if lvl in cfg.levels},
    })


def _read_scores(folders: dict[str, str], number: int, signals: bool = False) -> pd.DataFrame | None:
    """The scores of partition ``number``: doc_id, n_tokens, lang, one column per scorer (+ signals)."""
    merged: pd.DataFrame | None = None
    for name, folder in folders.items():
        path = Path(folder) / f"part-{number:05d}.parquet"
        if not path.exists():
            return None
        t = pq.read_table(path).to_pandas()
        keep = ["doc_id", "score"] + ([c for c in t.columns if c.startswith("quality_signal_")] if signals else [])
        t = t[keep + (["n_tokens", "lang"] if merged is None else [])].rename(columns={"score": name})
        merged = t if merged is None else merged.merge(t, on="doc_id", how="outer")
    return merged


def _group_decision(s: pd.DataFrame, thresholds: dict[str, dict[str, list[float]]], sketches: dict[str, dict[str, Any]],
                    combined_th: dict[str, list[float] | None] | None, own: list[str], cfg: WebQualityConfig) -> Any:
    """The decision for the rows of a scores frame, each bucketed within its language group."""
    return decide_by_group(
        language_groups(s["lang"].to_numpy(), own), {n: s[n].to_numpy(dtype=np.float64) for n in cfg.scorers},
        {g: {n: np.asarray(t, dtype=np.float64) for n, t in per.items()} for g, per in thresholds.items()},
        cfg.levels, None, cfg.combine,
        {g: {n: QuantileSketch.from_dict(v) for n, v in per.items()} for g, per in sketches.items()},
        {g: np.asarray(t) if t is not None else None for g, t in combined_th.items()} if combined_th is not None else None,
    )


def _level_counts(folders: dict[str, str], thresholds: dict[str, dict[str, list[float]]], sketches: dict[str, dict[str, Any]],
                  combined_th: dict[str, list[float] | None] | None, own: list[str], cfg: WebQualityConfig,
                  number: int) -> pd.DataFrame:
    s = _read_scores(folders, number)
    cols = {"what": [], "key": [], "documents": [], "tokens": []}
    if s is None or s.empty:
        return pd.DataFrame(cols)
    d = _group_decision(s, thresholds, sketches, combined_th, own, cfg)
    tokens = s["n_tokens"].fillna(0).to_numpy(dtype=np.int64)
    frames = [pd.DataFrame({"what": "level", "key": d.level, "documents": 1, "tokens": tokens})]
    lang_level = s["lang"].fillna("und").astype(str).to_numpy().astype(object) + "|" + d.level.astype(str)
    frames.append(pd.DataFrame({"what": "lang_level", "key": lang_level, "documents": 1, "tokens": tokens}))
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

def _decide_part(df: pd.DataFrame, folders: dict[str, str], thresholds: dict[str, dict[str, list[float]]],
                 sketches: dict[str, dict[str, Any]], combined_th: dict[str, list[float] | None] | None, own: list[str],
                 signal_cols: list[str], cfg: WebQualityConfig, columns: list[str], partition_info: dict | None = None) -> pd.DataFrame:
    number = (partition_info or {}).get("number", 0)
    return _decide(df, number, folders, thresholds, sketches, combined_th, own, signal_cols, cfg)[columns]


def _decide(df: pd.DataFrame, number: int, folders: dict[str, str], thresholds: dict[str, dict[str, list[float]]],
            sketches: dict[str, dict[str, Any]], combined_th: dict[str, list[float] | None] | None, own: list[str],
            signal_cols: list[str], cfg: WebQualityConfig) -> pd.DataFrame:
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
    d = _group_decision(rows, thresholds, sketches, combined_th, own, cfg)
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
