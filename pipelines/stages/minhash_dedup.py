"""``minhash_dedup``: remove near-duplicates (MinHash + LSH), keep one document per cluster.

signatures → buckets (shuffle on ``(band, band_hash)``, star edges) → edges (verified) →
components (union-find below ``union_find_max_edges`` edges, else distributed min-label
propagation) → clusters (keeper per cluster) → remove by ``doc_id`` in place.

Each sub-step is a ``ctx.step`` keyed by only the parameters it depends on, so changing ``keep``
re-runs the keeper step alone and changing ``verify_threshold`` keeps signatures and buckets.
Intermediate files are grouped by input partition (``Artifact.write_by_part``), so every join
with the signatures is a local read of one partition's file: only edges move. The steps are in
:mod:`pipelines.stages.minhash_steps`, their partition functions in
:mod:`pipelines.stages.minhash_parts`.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import dask.dataframe as dd
import pandas as pd

from curation.config import ConfigError, StageConfig, check_choice, check_range
from curation.dedup.lsh import check_keep, keep_column, lsh_params, s_curve
from curation.dedup.minhash import HASHES, SCHEMES
from curation.dedup.shingles import ShingleSpec
from curation.schema import SOURCES
from pipelines.kit import Artifact, GroupStage, Plan, StageContext, StageFigures
from pipelines.stages import minhash_steps as steps
from pipelines.stages.minhash_parts import set_cluster

VERIFY = ("signature", "exact", "none")


@dataclasses.dataclass(frozen=True)
class MinHashDedupConfig(StageConfig):
    threshold: float = 0.8
    lsh_threshold: float | None = None
    bands: int | None = None
    rows: int | None = None
    num_perm: int = 128
    seed: int = 1
    scheme: str = "affine32"
    hash: str = "fast"
    shingle: str = "script:5"
    source_shingle: dict[str, str] = dataclasses.field(default_factory=dict)
    # every source but synthetic traces (reasoning, agent): templated traces of different problems are near-duplicates
    sources: tuple[str, ...] = tuple(s for s in SOURCES if s not in ("reasoning", "agent"))
    verify: str = "exact"
    verify_threshold: float | None = None
    keep: str = "first"
    union_find_max_edges: int = 5_000_000
    large_bucket: int = 1000
    max_iterations: int = 64

    def validate(self) -> None:
        check_range(self, "threshold", 0.0, 1.0)
        check_range(self, "num_perm", 2, 4096)
        check_range(self, "union_find_max_edges", 0)
        check_range(self, "large_bucket", 2)
        check_range(self, "max_iterations", 1)
        check_choice(self, "scheme", SCHEMES)
        check_choice(self, "hash", HASHES)
        check_choice(self, "verify", VERIFY)
        if self.lsh_threshold is not None:
            check_range(self, "lsh_threshold", 0.0, 1.0)
        if self.verify_threshold is not None:
            check_range(self, "verify_threshold", 0.0, 1.0)
        if not isinstance(self.source_shingle, dict):
            raise ConfigError("MinHashDedupConfig.source_shingle must map a source to a spec, e.g. {code: 'char:5'}")
        try:
            for spec in [self.shingle, *self.source_shingle.values()]:
                ShingleSpec.parse(spec)
            check_keep(self.keep)
            b, r = self.lsh()
        except ValueError as exc:
            raise ConfigError(f"MinHashDedupConfig: {exc}") from exc
        if b < 2:
            raise ConfigError(f"MinHashDedupConfig: LSH needs at least 2 bands, got {b} (lower lsh_threshold or set bands/rows)")

    def lsh(self) -> tuple[int, int]:
        """(bands, rows): explicit, or datasketch's optimum for ``lsh_threshold``."""
        return lsh_params(self.effective_lsh_threshold(), self.num_perm, self.bands, self.rows)

    def effective_lsh_threshold(self) -> float:
        # Candidates are cheap and verified, so LSH aims lower than the threshold (recall).
        return self.lsh_threshold if self.lsh_threshold is not None else round(min(max(self.threshold - 0.25, 0.05), self.threshold), 4)

    def effective_verify_threshold(self) -> float:
        # 1.5 standard errors of the num_perm estimate below the threshold: a pair exactly at the
        # threshold passes 93% of the time, one 0.1 below it about 1%.
        if self.verify_threshold is not None:
            return self.verify_threshold
        t = self.threshold
        return round(t - 1.5 * math.sqrt(t * (1 - t) / self.num_perm), 4)

    def spec_for(self, source: str) -> ShingleSpec:
        return ShingleSpec.parse(self.source_shingle.get(source, self.shingle))


class MinHashDedupStage(GroupStage):
    name = "minhash_dedup"
    version = "5"  # 2: script:5 shingles by default; 3: format characters dropped from the folded text;
    # 4: documents without a word (punctuation, symbols, emoji only) get no signature;
    # 5: a member is removed only when its own Jaccard with its keeper reaches the threshold (star keepers)
    config_cls = MinHashDedupConfig
    requires = ("doc_id", "text", "source")
    produces: dict[str, Any] = {"minhash_cluster": object}

    def config_requires(self, cfg: MinHashDedupConfig) -> dict[str, str]:
        """The column ``keep: highest:<column>`` / ``lowest:<column>`` reads → that setting."""
        column = keep_column(cfg.keep)
        return {column: f"keep = {cfg.keep!r}"} if column else {}

    def config_notes(self, cfg: MinHashDedupConfig) -> list[str]:
        """``verify_threshold`` set where nothing reads it: only ``verify: signature`` cuts on it."""
        if cfg.verify_threshold is None or cfg.verify == "signature":
            return []
        what = "threshold decides on the exact Jaccard" if cfg.verify == "exact" else "no candidate pair is verified"
        return [f"minhash_dedup.verify_threshold = {cfg.verify_threshold:g} does nothing under verify: {cfg.verify} ({what}): "
                "set minhash_dedup.verify=signature to cut on the signature estimate, or leave verify_threshold out"]

    def identify(self, docs: dd.DataFrame, cfg: MinHashDedupConfig, ctx: StageContext) -> Plan:
        column = keep_column(cfg.keep)
        if column is not None and column not in docs.columns:
            raise ConfigError(f"minhash_dedup.keep = {cfg.keep!r}: the input has no column {column!r}")
        nparts = docs.npartitions
        bands, rows = cfg.lsh()
        threshold = _verify_threshold(cfg)
        opts = {k: v for k, v in cfg.to_dict().items() if k in ("num_perm", "seed", "scheme", "hash", "shingle", "source_shingle", "sources")}
        p_sig = {**{k: v for k, v in opts.items() if k != "sources"}, "version": self.version, "sources": sorted(cfg.sources)}
        p_buckets = {**p_sig, "bands": bands, "rows": rows, "large_bucket": cfg.large_bucket}
        p_edges = {**p_buckets, "verify": cfg.verify, "verify_threshold": threshold}
        p_clusters = {**p_edges, "keep": cfg.keep}
        exact = docs[["doc_id", "text", "source"]] if cfg.verify == "exact" else None
        specs = {**dict(cfg.source_shingle), "": cfg.shingle}  # shingle spec per source ("" = the default)

        sigs = ctx.step("signatures", p_sig, lambda out: steps.signatures_step(docs, opts, ctx, out))
        cands = ctx.step("buckets", p_buckets, lambda out: steps.buckets_step(sigs, nparts, bands, rows, cfg.large_bucket, ctx, out))
        edges = ctx.step("edges", p_edges, lambda out: steps.edges_step(exact, nparts, sigs, cands, specs, cfg.verify, threshold, ctx, out))
        comps = ctx.step("components", p_edges, lambda out: steps.components_step(edges, cfg.union_find_max_edges, cfg.max_iterations, ctx, out))
        keyed = docs[["doc_id", *(["text", "source"] if exact is not None else []), *([column] if column else [])]]
        keyed = keyed if exact is not None or column else None
        clusters = ctx.step("clusters", p_clusters, lambda out: steps.clusters_step(
            keyed, nparts, sigs, comps, cfg.keep, ctx, out, threshold, specs if exact is not None else None))
        lsh = {"bands": bands, "rows": rows, "lsh_threshold": cfg.effective_lsh_threshold(), "threshold": cfg.threshold,
               "verify": cfg.verify, "verify_threshold": threshold, "s_curve": s_curve(bands, rows)}
        return Plan((clusters.path / "removals", Artifact(clusters.path / "members")), StageFigures({"lsh": lsh}))

    def annotate(self, number: int, df: pd.DataFrame, members: Artifact, cfg: MinHashDedupConfig) -> pd.DataFrame:
        return set_cluster(number, df, members)


def _verify_threshold(cfg: MinHashDedupConfig) -> float | None:
    if cfg.verify == "none":
        return None
    return cfg.threshold if cfg.verify == "exact" else cfg.effective_verify_threshold()


STAGE = MinHashDedupStage()
