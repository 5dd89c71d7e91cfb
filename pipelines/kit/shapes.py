"""The shapes of a stage, as base classes: a stage declares what it needs, adds and decides, and
the kit does the rest.

- :class:`RowStage`: every row in, the same rows out with the columns the stage adds (a scorer,
  an annotation). Write ``score(rows, cfg)``: the kit runs it on row slices of the rows of the
  stage's ``sources`` only, caches it as the sub-step ``scores`` (keyed by the stage's version,
  its ``produces`` and every config field but those in ``decision_keys``), and joins the scores
  back by ``doc_id``.
  A stage with global work (cuts over every score, an annotated sample, a distilled model)
  writes ``prepare`` (that work, returning a :class:`Plan`) and ``decide`` (one partition).
- :class:`RowFilter`: a row stage that drops the rows its ``drops`` rule names, each with the
  stage's ``reason`` and its scores as the ledger detail.
- :class:`GroupStage`: keys per document → rows regrouped by the key → removals per group →
  marked in place by ``doc_id`` (exact dedup's shape).

What the kit owns: Dask ``meta`` and the column order (the input's, the produced ones, then
``drop_reason``/``drop_detail``), the scope, the slices, the cache keys, and the stage's figures
in ``stats.json``: a stage returns them as :class:`StageFigures` (``marks`` are what the run
summary shows for a stage that removes nothing) instead of writing into ``ctx.extra_stats``. What
the kit checks of a stage's own code, and how it says a mistake there: :mod:`pipelines.kit.contract`.
"""

from __future__ import annotations

import dataclasses
import functools
import logging
from pathlib import Path
from typing import Any, ClassVar

import dask.dataframe as dd
import numpy as np
import pandas as pd

from curation.config import StageConfig
from curation.schema import DROP_DETAIL, DROP_REASON, DropReason, annotated_meta, detail_json, mark_kept, with_columns
from pipelines.kit.artifact import Artifact
from pipelines.kit.context import StageContext
from pipelines.kit.contract import (
    StageDefinitionError,
    annotate_part,
    beyond_produces,
    call,
    check_definition,
    check_reason,
    checked_drops,
    decide_part,
    score_rows,
)
from pipelines.kit.plan import Plan, StageFigures, join_scores

log = logging.getLogger(__name__)


class StageShape:
    """What every stage declares (the runner reads these; ``pipelines/kit/stage.py``)."""

    name: ClassVar[str]
    version: ClassVar[str] = "1"
    config_cls: ClassVar[type[StageConfig]]
    requires: ClassVar[tuple[str, ...]] = ("doc_id", "text")
    produces: ClassVar[dict[str, Any]] = {}
    #: ``{key: (stage, artifact)}``: artifacts of earlier stages, resolved into ``ctx.upstream[key]``
    requires_artifacts: ClassVar[dict[str, tuple[str, str]]] = {}
    #: ``{key: "stage.field"}``: another stage's config values, resolved into ``ctx.settings[key]``
    settings: ClassVar[dict[str, str]] = {}
    #: top-level recipe keys that change the output (``seed``)
    global_keys: ClassVar[tuple[str, ...]] = ()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        check_definition(cls)

    def build(self, docs: dd.DataFrame, cfg: Any, ctx: StageContext) -> dd.DataFrame:
        raise NotImplementedError

    def preflight(self, cfg: Any) -> None:
        """Check what ``cfg`` names outside the recipe (model folders, devices) before anything runs;
        raise ConfigError naming the key (``pipelines/kit/preflight.py``). Default: nothing to check."""

    def config_requires(self, cfg: Any) -> dict[str, str]:
        """Columns the input must have because of a setting (``keep: highest:<column>``): column →
        the setting, checked with ``requires`` before anything runs (``--dry-run`` too). Default: none."""
        return {}

    def config_notes(self, cfg: Any) -> list[str]:
        """Warnings, said before anything runs, about settings that are valid but do not do what they
        ask in this config (a language the embedder cannot prune). Default: none."""
        return []

    def model_paths(self, cfg: Any) -> dict[str, str]:
        """The model files or folders of the user's that ``cfg`` names (key → path; shipped models
        are not listed): their sizes and times go into the stage's config hash, so a model retrained
        in place re-runs the stage. Default: none."""
        return {}

    @staticmethod
    def sources(cfg: Any) -> tuple[str, ...] | None:
        """The sources the stage works on: ``cfg.sources``, or every source when the config has none."""
        sources = getattr(cfg, "sources", None)
        return tuple(sources) if sources is not None else None


class RowStage(StageShape):
    """Every row in, the same rows out with the ``produces`` columns (see the module docstring)."""

    #: config fields that only decide from the scores (``max_urls``): the ``scores`` cache key is every other field
    decision_keys: ClassVar[tuple[str, ...]] = ()
    #: the columns ``score`` reads besides ``doc_id`` and ``source`` (``None``: every column)
    score_columns: ClassVar[tuple[str, ...] | None] = None

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """With the default ``decide`` a produced column is missing on the rows outside ``sources``:
        its dtype must hold that (``float64``, ``Int64``, ``boolean``, ``object``), not numpy's
        ``int64`` or ``bool`` (a stage with its own ``decide`` fills every row itself)."""
        super().__init_subclass__(**kwargs)
        if "score_keys" in vars(cls):
            raise StageDefinitionError(
                f"{cls.__name__}.score_keys: the scores are keyed on every config field but those that only "
                'decide; list those instead, decision_keys = ("max_urls",), and drop score_keys'
            )
        for column, dtype in cls.produces.items() if getattr(cls.decide, "joins_scores", False) else ():
            dt = pd.api.types.pandas_dtype(dtype)
            if isinstance(dt, np.dtype) and dt.kind in "iub":
                nullable = {"b": "boolean", "i": f"Int{dt.itemsize * 8}", "u": f"UInt{dt.itemsize * 8}"}[dt.kind]
                raise StageDefinitionError(
                    f"{cls.__name__}.produces[{column!r}] = {dtype!r} cannot hold a missing value, which the rows "
                    f"outside the stage's sources get: declare {nullable!r} (pandas' nullable type) instead"
                )

    def score(self, rows: pd.DataFrame, cfg: Any) -> pd.DataFrame:
        """The produced columns of ``rows`` (rows of the stage's sources), on ``rows``' index."""
        raise NotImplementedError(f"{type(self).__name__} writes score() or prepare() and decide()")

    def prepare(self, docs: dd.DataFrame, cfg: Any, ctx: StageContext) -> Plan:
        """The work before any partition is decided. Default: the cached sub-step ``scores``."""
        sources = self.sources(cfg)

        def produce(out: Path) -> dict[str, Any]:
            columns = ["doc_id", "source", *self.score_columns] if self.score_columns is not None else None
            rows, beyond = ctx.write_sliced_summaries(
                docs,
                Artifact(out),
                score_rows,
                self,
                cfg,
                label="score",
                sources=sources,
                columns=columns,
                summarise=beyond_produces,
            )
            extra = sorted({c for part in beyond for c in part})
            return {"scored_documents": rows, **({"beyond_produces": extra} if extra else {})}

        scores = ctx.step("scores", self.scores_params(cfg), produce)
        if extra := scores.figures().get("beyond_produces"):  # kept with the scores: said when they are reused too
            log.warning(
                "%s: score returns the columns %s beyond produces %s; they are not kept: declare them in produces "
                "(and raise version) or leave them out of score's frame",
                self.name,
                extra,
                list(self.produces),
            )
        return Plan(scores, StageFigures(marks={"scored": int(scores.figures().get("scored_documents", 0))}))

    def scores_params(self, cfg: Any) -> dict[str, Any]:
        """The ``scores`` step's key: the version, the sources, the produced columns and every config
        field but ``enabled`` and the ``decision_keys`` (a field left out of those re-scores, never reuses stale scores)."""
        sources = self.sources(cfg)
        skip = {"enabled", "sources", *self.decision_keys}
        return {
            "version": self.version,
            "sources": sorted(sources) if sources is not None else None,
            "produces": {c: str(pd.api.types.pandas_dtype(d)) for c, d in self.produces.items()},
            "config": {f.name: getattr(cfg, f.name) for f in dataclasses.fields(cfg) if f.name not in skip},
        }

    def decide(self, number: int, df: pd.DataFrame, state: Any, cfg: Any) -> pd.DataFrame:
        """Partition ``number`` with its produced columns. Default: the ``scores`` of its rows
        (missing values outside the sources)."""
        return join_scores(df, state.read_part(number), self.produces)

    def build(self, docs: dd.DataFrame, cfg: Any, ctx: StageContext) -> dd.DataFrame:
        plan = self.prepare(docs, cfg, ctx)
        plan.figures.record(ctx)
        meta = annotated_meta(docs._meta, plan.columns if plan.columns is not None else self.produces)
        return ctx.map_parts(docs, decide_part, self, plan.state, cfg, list(meta.columns), meta=meta)


class RowFilter(RowStage):
    """A row stage that drops the rows of its sources that ``drops`` names, with ``reason``."""

    reason: ClassVar[DropReason]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        check_reason(cls)

    def drops(self, scores: pd.DataFrame, cfg: Any) -> pd.Series:
        """True for the rows to drop, from their produced columns (rows of the stage's sources)."""
        raise NotImplementedError

    def decide(self, number: int, df: pd.DataFrame, state: Any, cfg: Any) -> pd.DataFrame:
        df = mark_kept(super().decide(number, df, state, cfg))
        sources = self.sources(cfg)
        scope = df["source"].isin(sources).to_numpy() if sources is not None else np.ones(len(df), dtype=bool)
        columns = list(self.produces)
        hit = scope.copy()
        hit[scope] = checked_drops(self, call(self, "drops", df.loc[scope, columns], cfg), int(scope.sum()))
        df.loc[hit, DROP_REASON] = self.reason.value
        df.loc[hit, DROP_DETAIL] = [detail_json(**row) for row in df.loc[hit, columns].to_dict("records")]
        return df


RowStage.decide.joins_scores = RowFilter.decide.joins_scores = True  # type: ignore[attr-defined]


class GroupStage(StageShape):
    """Documents grouped by a key, removals chosen per group (exact dedup's shape):
    ``keys`` per partition → rows regrouped on ``on`` (``ctx.shuffle``) → ``removals`` per
    group → written by input partition and marked in place by ``doc_id`` (:mod:`pipelines.removal`),
    so documents never move. Cached as the sub-step ``removals``, keyed by the version and the
    config fields in ``removal_keys``; ``figure`` names the count of removals in ``stats.json``.

    A stage that finds its groups in more steps (MinHash, SemDeDup) writes ``identify`` instead,
    and ``annotate`` for the columns it adds (their cluster ids)."""

    key_meta: ClassVar[pd.DataFrame]  #: the columns ``keys`` returns, for Dask's meta
    on: ClassVar[str] = "hash"
    figure: ClassVar[str] = "removed"
    removal_keys: ClassVar[tuple[str, ...]] = ()

    def keys(self, part: pd.DataFrame, cfg: Any) -> pd.DataFrame:
        """One key row per document of ``part`` (``doc_id``, ``on`` and what ``removals`` reads)."""
        raise NotImplementedError

    def removals(self, group: pd.DataFrame, cfg: Any) -> pd.DataFrame:
        """The removal rows (``pipelines.removal.REMOVAL_META``) of key rows sharing their ``on`` values."""
        raise NotImplementedError

    def identify(self, docs: dd.DataFrame, cfg: Any, ctx: StageContext) -> Plan:
        """The removals: ``Plan((folder, state))``, ``folder`` written by
        :func:`pipelines.removal.write_removals`, ``state`` for ``annotate``. Default: the cached
        sub-step ``removals`` from ``keys`` and ``removals``."""
        from pipelines.kit.group_checks import keys_part, removals_part
        from pipelines.removal import REMOVAL_META, keys_with_part, write_removals

        def produce(out: Path) -> dict[str, Any]:
            keys = keys_with_part(docs, functools.partial(keys_part, stage=self, cfg=cfg), self.key_meta)
            groups = ctx.shuffle(keys, self.on, "identify", costs=ctx.costs())
            return {
                self.figure: write_removals(
                    groups.map_partitions(removals_part, self, cfg, meta=REMOVAL_META), out, ctx, "identify"
                )
            }

        params = {**{k: getattr(cfg, k) for k in self.removal_keys}, "version": self.version}
        return Plan((ctx.step("removals", params, produce).path, None))

    def annotate(self, number: int, df: pd.DataFrame, state: Any, cfg: Any) -> pd.DataFrame:
        """Partition ``number`` with the produced columns (none by default)."""
        return df

    def build(self, docs: dd.DataFrame, cfg: Any, ctx: StageContext) -> dd.DataFrame:
        from pipelines.removal import mark_removed

        plan = self.identify(docs, cfg, ctx)
        plan.figures.record(ctx)
        removals, state = plan.state
        columns = plan.columns if plan.columns is not None else self.produces
        if columns:
            meta = with_columns(docs._meta, columns)
            docs = ctx.map_parts(docs, annotate_part, self, state, cfg, list(meta.columns), meta=meta)
        return mark_removed(docs, removals)
