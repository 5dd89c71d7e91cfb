"""The cheap steps of ``web_quality`` (see :mod:`pipelines.stages.web_quality`): score artifacts →
per-language token-weighted sketches → thresholds (:class:`Cuts`) → a decision per scores frame,
and the level/bucket figures of ``stats.extra``. Sketches of per-partition scores are merged 8 at a
time on the cluster; only the merged sketches (small) come back to the client. The scoring tasks
take their part's sketches from the frame they write, merged in the scoring compute; a reused
scores artifact is read back for them."""

from __future__ import annotations

import dataclasses
from typing import Any

import dask
import numpy as np
import pandas as pd
import pyarrow.parquet as pq

from curation.files import read_parquet
from curation.quality.bucketing import LEVEL_ORDER, OTHER_LANGS, decide_by_group, language_groups, own_languages
from curation.quality.sketch import QuantileSketch, combined_rank, percentile_grid, token_weights
from pipelines.kit import Artifact, StageContext, StageFigures, tree_merge

LangSketches = dict[str, tuple[QuantileSketch, int]]  # lang -> (token-weighted sketch, documents)
Scores = dict[str, Artifact]  # scorer -> its scores artifact


@dataclasses.dataclass(frozen=True)
class Cuts:
    """What deciding a partition needs, in plain (picklable) form: the groups with their own
    thresholds, per group the scorers' cut points and sketches, and the mean-rank cut points.
    ``pooled``: the ``*`` group is ranked among its own pages (else against the whole corpus)."""

    own: list[str]
    thresholds: dict[str, dict[str, list[float]]]
    sketches: dict[str, dict[str, dict[str, Any]]]
    combined: dict[str, list[float] | None] | None = None
    pooled: bool = False

    def decision(self, s: pd.DataFrame, cfg: Any) -> Any:
        """The decision for the rows of a scores frame, each bucketed within its language group."""
        return decide_by_group(
            language_groups(s["lang"].to_numpy(), self.own), {n: s[n].to_numpy(dtype=np.float64) for n in cfg.scorers},
            {g: {n: np.asarray(t, dtype=np.float64) for n, t in per.items()} for g, per in self.thresholds.items()},
            cfg.levels, None, cfg.combine,
            {g: {n: QuantileSketch.from_dict(v) for n, v in per.items()} for g, per in self.sketches.items()},
            {g: np.asarray(t) if t is not None else None for g, t in self.combined.items()} if self.combined is not None else None,
        )


def read_scores(folders: Scores, number: int, signals: bool = False) -> pd.DataFrame | None:
    """The scores of partition ``number``: doc_id, n_tokens, lang, one column per scorer (+ signals)."""
    merged: pd.DataFrame | None = None
    for name, art in folders.items():
        t = art.read_part(number)
        if t is None:
            return None
        keep = ["doc_id", "score"] + ([c for c in t.columns if c.startswith("quality_signal_")] if signals else [])
        t = t[keep + (["n_tokens", "lang"] if merged is None else [])].rename(columns={"score": name})
        merged = t if merged is None else merged.merge(t, on="doc_id", how="outer")
    return merged


def signal_columns(folders: Scores, with_details: list[str]) -> list[str]:
    """The ``quality_signal_*`` columns of the first scorer in ``with_details`` that wrote any."""
    for name in with_details:
        for f in folders[name].parts():  # a partition with no in-scope page has no signal columns
            cols = [c for c in pq.read_schema(f).names if c.startswith("quality_signal_")]
            if cols:
                return cols
    return []


# -- sketches and thresholds ---------------------------------------------------------------

def _part_sketch(path: str, capacity: int) -> LangSketches:
    """:func:`part_sketches` of a scores part read back."""
    return part_sketches(read_parquet(path, ["score", "n_tokens", "lang"]).to_pandas(), capacity)


def part_sketches(table: pd.DataFrame, capacity: int) -> LangSketches:
    """Per language of one scores part: the sketch of its scores and its number of documents
    (``score``, ``n_tokens`` and ``lang`` read; taken in the task that writes the part, or of the
    part read back)."""
    out: LangSketches = {}
    for lang, g in table.groupby(table["lang"].fillna("und").astype(str), sort=True):
        out[str(lang)] = (QuantileSketch.from_values(g["score"].to_numpy(), token_weights(g["n_tokens"].to_numpy()), capacity), len(g))
    return out


def merge_sketches(sketches: list[Any]) -> Any:
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


def _merge_groups(parts: list[dict[str, QuantileSketch]]) -> dict[str, QuantileSketch]:
    return {g: merge_sketches([p[g] for p in parts]) for g in parts[0]}


def _plain(sketches: dict[str, dict[str, QuantileSketch]]) -> dict[str, dict[str, dict[str, Any]]]:
    return {g: {n: s.to_dict() for n, s in per.items()} for g, per in sketches.items()}


def _part_combined(folders: Scores, cuts: Cuts, cfg: Any, number: int) -> dict[str, QuantileSketch]:
    s = read_scores(folders, number)
    out = {g: QuantileSketch.empty(cfg.sketch_capacity) for g in cuts.sketches}
    if s is None or s.empty:
        return out
    groups = language_groups(s["lang"].to_numpy(), cuts.own)
    for g in cuts.sketches:
        rows = s if g == OTHER_LANGS and not cuts.pooled else s[groups == g]  # "*" too few to pool: the whole corpus
        if rows.empty:
            continue
        sk = {n: QuantileSketch.from_dict(v) for n, v in cuts.sketches[g].items()}
        rank = combined_rank({n: rows[n].to_numpy(dtype=np.float64) for n in folders}, sk, "mean")
        out[g] = QuantileSketch.from_values(rank, token_weights(rows["n_tokens"].to_numpy()), cfg.sketch_capacity)
    return out


def cuts_and_figures(folders: Scores, cfg: Any, ctx: StageContext,
                     written: dict[str, LangSketches] | None = None) -> tuple[Cuts, StageFigures]:
    """Thresholds per scorer and language group (and of the mean rank under ``combine: mean``), and
    the figures of ``stats.extra`` that describe them. ``written``: per scorer, the merged
    :func:`part_sketches` its scoring tasks took of the parts they wrote; the parts of the other
    scorers (steps reused from an earlier run) are read back, in a compute of their own."""
    written = written or {}
    graphs = {name: tree_merge([dask.delayed(_part_sketch)(str(p), cfg.sketch_capacity) for p in art.parts()]
                               or [dask.delayed(dict)()], merge_sketches, dask.delayed) for name, art in folders.items() if name not in written}
    unread = list(graphs)
    read = dict(zip(unread, ctx.compute(dask.delayed(list)([graphs[n] for n in unread]), "sketches"), strict=True)) if unread else {}
    by_lang: dict[str, LangSketches] = {name: read[name] if name in read else written[name] for name in folders}
    first = next(iter(by_lang.values()), {})  # every scorer's sketches count the same documents
    docs_per_lang = {lang: n for lang, (_, n) in first.items()}
    own = own_languages(docs_per_lang, cfg.language_min_docs) if cfg.per_language else []
    # the small languages are ranked among themselves (as each large one is) once they hold language_min_docs
    # pages together: their scores are not calibrated against English ones (no stop-word lists, English-only
    # scorers); fewer pages than that are too few for 20 buckets and are bucketed against the whole corpus
    pooled = bool(own) and sum(n for lang, n in docs_per_lang.items() if lang not in own) >= cfg.language_min_docs
    sketches: dict[str, dict[str, QuantileSketch]] = {g: {} for g in [*own, OTHER_LANGS]}
    whole: dict[str, QuantileSketch] = {}
    for name, langs in by_lang.items():
        whole[name] = merge_sketches([sk for sk, _ in langs.values()]) if langs else QuantileSketch.empty(cfg.sketch_capacity)
        for g in sketches:
            parts = [sk for lang, (sk, _) in langs.items() if lang == g or (g == OTHER_LANGS and lang not in own)]
            sketches[g][name] = (merge_sketches(parts) if parts else QuantileSketch.empty(cfg.sketch_capacity)) \
                if g != OTHER_LANGS or pooled else whole[name]
    grid = percentile_grid(cfg.n_buckets)
    thresholds = {g: {n: np.asarray(cfg.thresholds[n], dtype=np.float64) if n in cfg.thresholds else sk[n].thresholds(grid)
                      for n in cfg.scorers} for g, sk in sketches.items()}
    cuts = Cuts(own, {g: {n: np.asarray(t).tolist() for n, t in per.items()} for g, per in thresholds.items()}, _plain(sketches),
                pooled=pooled)
    combined: dict[str, QuantileSketch] | None = None
    if cfg.combine == "mean":
        n_parts = len(next(iter(folders.values())).parts())
        shared = _constant(cuts)
        level = [dask.delayed(_part_combined)(folders, shared, cfg, i) for i in range(n_parts)]
        combined = (ctx.compute(tree_merge(level, _merge_groups, dask.delayed), "combined sketch") if level
                    else {g: QuantileSketch.empty(cfg.sketch_capacity) for g in sketches})
        combined_th = {g: c.thresholds(grid).tolist() for g, c in combined.items()}
        if "combined" in cfg.thresholds:
            combined_th = {g: [float(x) for x in cfg.thresholds["combined"]] for g in combined}
        cuts = dataclasses.replace(cuts, combined=combined_th)
    return cuts, _figures(folders, cuts, thresholds, sketches, whole, combined, docs_per_lang, cfg, ctx)


def _constant(value: Any) -> Any:
    """``value`` as one task every partition's task depends on. Passed directly, Dask walks
    its nested lists (the sketches' points) again for every task: 1.4 CPU-s of the driver per
    web_quality run at 11 partitions (profiled); as one task, a worker receives it once."""
    return dask.delayed(value, traverse=False)


# -- figures -------------------------------------------------------------------------------

def _level_counts(folders: Scores, cuts: Cuts, cfg: Any, number: int) -> pd.DataFrame:
    s = read_scores(folders, number)
    cols: dict[str, list[Any]] = {"what": [], "key": [], "documents": [], "tokens": []}
    if s is None or s.empty:
        return pd.DataFrame(cols)
    d = cuts.decision(s, cfg)
    tokens = s["n_tokens"].fillna(0).to_numpy(dtype=np.int64)
    frames = [pd.DataFrame({"what": "level", "key": d.level, "documents": 1, "tokens": tokens})]
    lang_level = s["lang"].fillna("und").astype(str).to_numpy().astype(object) + "|" + d.level.astype(str)
    frames.append(pd.DataFrame({"what": "lang_level", "key": lang_level, "documents": 1, "tokens": tokens}))
    for n, b in d.buckets.items():
        frames.append(pd.DataFrame({"what": f"bucket_{n}", "key": b.astype(str), "documents": 1, "tokens": tokens}))
    frames.append(pd.DataFrame({"what": "bucket", "key": d.bucket.astype(str), "documents": 1, "tokens": tokens}))
    return pd.concat(frames).groupby(["what", "key"], as_index=False)[["documents", "tokens"]].sum()


def _figures(folders: Scores, cuts: Cuts, thresholds: dict[str, dict[str, np.ndarray]],
             sketches: dict[str, dict[str, QuantileSketch]], whole: dict[str, QuantileSketch],
             combined: dict[str, QuantileSketch] | None, docs_per_lang: dict[str, int], cfg: Any, ctx: StageContext) -> StageFigures:
    """Thresholds (whole corpus, and per language group), rank-error bounds, token share per level
    and per bucket of each scorer, level shares per language; marks: pages of the high and low levels."""
    own, combined_th = cuts.own, cuts.combined
    per_level: dict[str, dict[str, Any]] = {}
    group_docs = {g: docs_per_lang.get(g, 0) for g in own}
    group_docs[OTHER_LANGS] = sum(n for lang, n in docs_per_lang.items() if lang not in own)
    live = [g for g in sketches if group_docs.get(g, 0) > 0] or [OTHER_LANGS]
    main = max(live, key=lambda g: group_docs.get(g, 0))
    shared = _constant(cuts)
    parts = [dask.delayed(_level_counts)(folders, shared, cfg, i) for i in range(len(next(iter(folders.values())).parts()))]
    counts = (ctx.compute(dask.delayed(list)(parts), "level counts") if parts
              else pd.DataFrame(columns=["what", "key", "documents", "tokens"]))
    summed = counts.groupby(["what", "key"], sort=True)[["documents", "tokens"]].sum()
    for (what, key), row in summed.iterrows():
        per_level.setdefault(str(what), {})[str(key)] = {"documents": int(row["documents"]), "tokens": int(row["tokens"])}
    levels = per_level.get("level", {})
    total_tokens = sum(v["tokens"] for v in levels.values()) or 1
    by_lang_level: dict[str, dict[str, dict[str, int]]] = {}
    for key, v in per_level.get("lang_level", {}).items():
        lang, _, lvl = key.partition("|")
        by_lang_level.setdefault(lang, {})[lvl] = v
    grid = percentile_grid(cfg.n_buckets)
    return StageFigures({
        "scorers": {n: cfg.scorer(n).version for n in cfg.scorers},
        # the whole corpus' cut points (what a monolingual run uses; another run fixes them with the config's ``thresholds``)
        "thresholds": {n: [float(x) for x in (thresholds[main][n] if n in cfg.thresholds else whole[n].thresholds(grid))]
                       for n in cfg.scorers},
        "thresholds_fixed": sorted(cfg.thresholds),  # "combined": the mean-rank cut points were fixed too
        "per_language": cfg.per_language,
        "language_groups": {g: group_docs.get(g, 0) for g in live},  # group -> in-scope documents
        "small_languages_ranked_against": "their own pages" if cuts.pooled else "the whole corpus",  # the "*" group
        "thresholds_by_lang": {g: {n: [float(x) for x in thresholds[g][n]] for n in cfg.scorers} for g in live},
        "combine": cfg.combine,
        "combined_thresholds": combined_th[main] if combined_th is not None else None,  # the largest group's
        "combined_thresholds_by_lang": {g: combined_th[g] for g in live} if combined_th is not None else None,
        "percentile_rank_error_bound": {**{n: max(float(sketches[g][n].error) for g in live) for n in cfg.scorers},
                                        **({"combined": max(float(combined[g].error) for g in live)} if combined is not None else {})},
        "sketch_points": {n: len(whole[n].values) for n in cfg.scorers},
        "levels_by_lang": by_lang_level,
        "levels": {lvl: {**levels.get(lvl, {"documents": 0, "tokens": 0}), "token_share": levels.get(lvl, {"tokens": 0})["tokens"] / total_tokens}
                   for lvl in [*LEVEL_ORDER, *sorted(set(cfg.levels) - set(LEVEL_ORDER))] if lvl in cfg.levels},
        "buckets": {k: v for k, v in per_level.items() if k not in ("level", "lang_level")},
    }, {f"level {lvl}": levels.get(lvl, {"documents": 0})["documents"] for lvl in ("high", "low") if lvl in cfg.levels})
