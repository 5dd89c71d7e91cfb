"""``semdedup``: embed → cluster → similarity pass → decide → remove (SemDeDup, Abbas et al. 2023).

Each sub-step is a ``ctx.step`` artifact keyed by its own parameters and by the artifact it reads,
so changing ``eps`` re-runs only the decision, changing ``keep`` re-runs the assignment and the
similarity pass, and nothing ever embeds twice for the same model settings:

- ``embeddings/``  ``part-NNNNN.parquet`` (doc_id + vector, one per input partition) + ``embeddings.json``;
  read it with :func:`classifiers.embedding.load_embeddings` (later stages reuse it).
- ``static_embeddings/``  the same for the static embedder when ``static_weight`` > 0: pruning compares
  documents by ``(1 - w) · transformer cosine + w · static cosine`` (tuned on held-out template twins).
- ``centroids/``   ``centroids.npy`` (spherical k-means, trained on a sample on the client) + ``kmeans.json``.
- ``clusters/``    per input partition: doc_id, source, cluster, centroid_sim, keep_key, length (ties of the
  keep key go to the longer text: :func:`curation.dedup.semantic_keep.keep_order`).
- ``similarity/``  per cluster shuffle partition: each member's max cosine to an earlier member
  (keep order) and which one; ``sweep.json`` holds the removal count for every ε of ``eps_sweep``.
  For ``text_check_languages`` a pair above the language's bar counts only when the two pages'
  character bigrams overlap (``clusters/`` then holds their sketches), so for those languages the
  pass depends on their ε and the sweep's counts above it include unchecked pairs. With
  ``window_check`` a pair where a page was cut by the embedder's window (``n_tokens`` >
  ``max_seq_length``) counts only when the whole texts share words (word sketches, ``cut`` in
  ``clusters/``), checked above the widest ε reported: :mod:`pipelines.stages.semdedup_check`.
- ``removals/``    the duplicates at ``eps``, grouped by input partition (``pipelines.removal``).

The steps and their partition functions are in :mod:`pipelines.stages.semdedup_steps`; the
pure parts (pruning, sweep, k-means, the sample and the vector mix) in ``curation/dedup/``.
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

from classifiers.embedding import STATIC_MODELS
from classifiers.langid import code_problem
from classifiers.scorer import model_fingerprint
from curation.config import ConfigError, StageConfig, check_choice, check_range
from curation.dedup.kmeans import DEFAULT_CLUSTER_SIZE, default_k, sample_size
from curation.dedup.semantic import parse_keep
from curation.schema import SOURCES
from pipelines.kit import Artifact, GroupStage, Plan, StageContext, StageFigures
from pipelines.kit.preflight import need_device
from pipelines.stages import semdedup_steps as steps
from pipelines.stages.semdedup_notes import config_notes, warn_unpruned_sources

log = logging.getLogger(__name__)

CLUSTER_COLUMN = "semdedup_cluster"


@dataclasses.dataclass(frozen=True)
class SemDedupConfig(StageConfig):
    sources: tuple[str, ...] = ("web", "math_science", "social")
    prune_sources: tuple[str, ...] = ("web", "social")
    prune_languages: tuple[str, ...] = ()  # natural languages (``lang``) pruned; () = every language
    static_languages: tuple[str, ...] = ("en",)  # languages whose pruning cosine mixes in the static model; () = all
    model: str = "all-MiniLM-L6-v2"
    device: str = "auto"
    batch_size: int = 64
    max_seq_length: int = 256
    mask_digits: bool = True
    static_model: str = "minilm-static"
    static_weight: float = 0.4
    store_dtype: str = "float16"
    k: int | None = None
    cluster_size: int = DEFAULT_CLUSTER_SIZE
    kmeans_iter: int = 20
    kmeans_sample: int = 1_000_000
    keep: str = "farthest"
    eps: float = 0.12
    eps_by_language: dict[str, float] = dataclasses.field(default_factory=dict)  # ε of these languages' pages instead of eps
    text_check_languages: tuple[str, ...] = ()  # languages whose pairs above the bar must also share text (bigram Jaccard)
    model_languages: tuple[str, ...] = ("en",)  # languages the embedder was trained on; others get the text check; () = all
    text_check_jaccard: float = 0.6
    window_check: bool = True  # a pair above the bar with a page cut by the window counts only when the whole texts share words
    window_check_jaccard: float = 0.5
    eps_sweep: tuple[float, ...] = (0.01, 0.02, 0.05, 0.08, 0.1, 0.12, 0.15, 0.2, 0.25, 0.3)
    block_rows: int = 1024

    def static_embedder(self) -> bool:
        """Whether the embedder is the static model itself or another shipped static model, with
        ``static_languages`` set: it prunes those languages only (a static model's vectors mean
        nothing for languages it was not fitted on)."""
        return (self.model == self.static_model or self.model in STATIC_MODELS) and bool(self.static_languages)

    def pruned_languages(self) -> tuple[str, ...]:
        """The languages SemDeDup prunes (() = all, unless :meth:`pruned_sources` is empty):
        ``prune_languages``, and with a :meth:`static_embedder` only those of ``static_languages``.

        >>> SemDedupConfig(model="minilm-static", static_model="minilm-static-bi").pruned_languages()
        ('en',)
        >>> SemDedupConfig().pruned_languages()
        ()
        """
        if self.static_embedder():
            own = tuple(self.static_languages)
            return tuple(x for x in self.prune_languages if x in own) if self.prune_languages else own
        return tuple(self.prune_languages)

    def unprunable(self) -> tuple[str, ...]:
        """The languages of ``prune_languages`` that a :meth:`static_embedder` cannot prune (their pages pass)."""
        return tuple(x for x in self.prune_languages if x not in self.static_languages) if self.static_embedder() else ()

    def pruned_sources(self) -> tuple[str, ...]:
        """``prune_sources``, or none when every language ``prune_languages`` names is :meth:`unprunable`.

        >>> SemDedupConfig(model="minilm-static", prune_languages=("de",)).pruned_sources()
        ()
        """
        return () if self.prune_languages and not self.pruned_languages() else tuple(self.prune_sources)

    def validate(self) -> None:
        for key in ("sources", "prune_sources"):
            bad = sorted(set(getattr(self, key)) - set(SOURCES))
            if bad:
                raise ConfigError(f"SemDedupConfig.{key} has unknown sources {bad}; choose from {list(SOURCES)}")
        if not set(self.prune_sources) <= set(self.sources):
            raise ConfigError("SemDedupConfig.prune_sources must be a subset of sources (only embedded documents are pruned)")
        if not (self.device in ("auto", "cpu", "cuda") or self.device.startswith("cuda:")):
            raise ConfigError(f"SemDedupConfig.device = {self.device!r}; choose auto, cpu, cuda or cuda:N")
        check_choice(self, "store_dtype", ("float16", "float32"))
        for key in ("prune_languages", "static_languages", "text_check_languages", "model_languages", "eps_by_language"):
            if problem := code_problem(f"semdedup.{key}", getattr(self, key)):
                raise ConfigError(problem)
        try:
            parse_keep(self.keep)
        except ValueError as exc:
            raise ConfigError(f"SemDedupConfig.keep: {exc}") from exc
        check_range(self, "eps", 1e-6, 1.0)
        check_range(self, "static_weight", 0.0, 1.0)
        check_range(self, "text_check_jaccard", 0.0, 1.0)
        check_range(self, "window_check_jaccard", 0.0, 1.0)
        for lang, e in self.eps_by_language.items():
            if not isinstance(e, (int, float)) or not 0.0 < e <= 1.0:
                raise ConfigError(f"SemDedupConfig.eps_by_language[{lang!r}] = {e!r} must be a number in (0, 1]")
        for e in self.eps_sweep:
            if not 0.0 < e <= 1.0:
                raise ConfigError(f"SemDedupConfig.eps_sweep value {e} must be a number in (0, 1]")
        for key in ("batch_size", "max_seq_length", "cluster_size", "kmeans_iter", "kmeans_sample", "block_rows"):
            check_range(self, key, 1, None)
        if self.k is not None:
            check_range(self, "k", 1, None)

    def embedder_settings(self, model: str | None = None) -> dict[str, Any]:
        """Keyword arguments of :func:`classifiers.embedding.get_embedder` (recorded in the card)."""
        return {"model": model or self.model, "device": self.device, "batch_size": self.batch_size,
                "max_seq_length": self.max_seq_length, "mask_digits": self.mask_digits}

    def text_check(self) -> steps.TextCheck:
        """The pair checks of the similarity pass (:mod:`pipelines.stages.semdedup_check`)."""
        # Every check (text_check_languages, the window, languages outside model_languages) applies above the
        # widest ε the stage decides or reports: a pair above the language's own bar is checked either way, so the
        # decision is the same, the sweep holds for every ε up to it and a changed ε re-runs the decision alone.
        widest = float(max([self.eps, *self.eps_sweep, *self.eps_by_language.values()]))
        eps = {lang: widest for lang in self.text_check_languages}
        return steps.TextCheck(tuple(sorted(eps.items())), float(self.text_check_jaccard), widest if self.window_check else None,
                               float(self.window_check_jaccard),
                               tuple(sorted(self.model_languages)), widest)

    def sketches(self) -> steps.Sketches:
        """The pages the clusters step sketches for :meth:`text_check`."""
        window = tuple(sorted(self.pruned_sources())) if self.window_check else ()
        return steps.Sketches(tuple(sorted(self.text_check_languages)), window, tuple(sorted(self.pruned_languages())),
                              int(self.max_seq_length), tuple(sorted(self.model_languages)), self.model)

    def combines_static(self) -> bool:
        """Whether pruning mixes in the static embedder's cosine (``static_weight`` > 0, another model)."""
        return self.static_weight > 0 and self.static_model != self.model


class SemDedupStage(GroupStage):
    name = "semdedup"
    version = "6"  # 2: the k-means sample is drawn per document, not per partition; 3: the window check;
    # 4: ties of the keep key go to the longer text (``length`` in clusters/); 5: languages outside model_languages
    # and unknown-only pages get the text check, the k-means sample is in seeded hash order; 6: the text check of
    # text_check_languages applies above the widest ε (the sweep of those languages holds), eps_sweep counts the pages
    # that follow eps, eps_sweep_by_language those of eps_by_language
    #: The embed step's own version: the vectors did not change with the stage's versions 3 and 4.
    embed_version = "2"
    config_cls = SemDedupConfig
    requires = ("doc_id", "text", "source")
    produces: dict[str, Any] = {CLUSTER_COLUMN: "int64"}
    global_keys = ("seed",)

    def preflight(self, cfg: SemDedupConfig) -> None:
        from classifiers.embedding import resolve_model_path

        for key in ("model", "static_model") if cfg.combines_static() else ("model",):
            try:
                resolve_model_path(getattr(cfg, key))
            except FileNotFoundError as exc:
                raise ConfigError(f"semdedup.{key}: {exc}") from None
        need_device("semdedup.device", cfg.device)

    def config_requires(self, cfg: SemDedupConfig) -> dict[str, str]:
        """The column ``keep: highest:<column>`` / ``lowest:<column>`` reads → that setting."""
        column = parse_keep(cfg.keep)[1]
        return {column: f"keep = {cfg.keep!r}"} if column else {}

    def config_notes(self, cfg: SemDedupConfig) -> list[str]:
        """What the settings ask for and the embedder does not do (:func:`semdedup_notes.config_notes`)."""
        return config_notes(cfg, SemDedupConfig.static_weight)

    def model_paths(self, cfg: SemDedupConfig) -> dict[str, str]:
        from classifiers.embedding import DEFAULT_MODEL, STATIC_MODELS

        shipped = {DEFAULT_MODEL, "sentence-transformers/all-MiniLM-L6-v2", *STATIC_MODELS}
        return {key: getattr(cfg, key) for key in ("model", "static_model") if getattr(cfg, key) not in shipped}

    def identify(self, docs: dd.DataFrame, cfg: SemDedupConfig, ctx: StageContext) -> Plan:
        _, column = parse_keep(cfg.keep)
        if column is not None and column not in docs.columns:
            raise ConfigError(f"semdedup.keep = {cfg.keep!r} needs column {column!r}; columns: {list(docs.columns)}")
        seed = int(ctx.recipe.get("seed", 0) or 0)
        nparts = docs.npartitions
        emb = self._embed(docs, cfg, cfg.model, "embedding", ctx)
        n = int(json.loads((emb.path / "embeddings.json").read_text())["count"])
        if n == 0:
            log.info("semdedup: no document of sources %s; every document kept", list(cfg.sources))
            return Plan((_empty_dir(ctx), None))
        vectors = steps.Vectors(emb)
        if cfg.combines_static():
            # Pruning cosine = (1 - w) transformer cosine + w static cosine (curation.dedup.vectors.mix_static).
            static = self._embed(docs, cfg, cfg.static_model, "static_embedding", ctx)
            vectors = steps.Vectors(emb, static, float(cfg.static_weight), tuple(cfg.static_languages))
        k = int(min(cfg.k or default_k(n, cfg.cluster_size), n))
        want = sample_size(k, n, cfg.kmeans_sample)
        cent = ctx.step("centroids", {"vectors": vectors.tag(), "k": k, "iter": cfg.kmeans_iter, "sample": want, "seed": seed,
                                      "order": "hash"},
                        lambda out: steps.centroids_step(vectors, nparts, n, k, want, cfg.kmeans_iter, seed, ctx, out))
        check, sketches = cfg.text_check(), cfg.sketches()
        clusters = ctx.step("clusters", {"centroids": cent.path.name, "vectors": vectors.tag(), "keep": cfg.keep, "columns": "lang,length",
                                         "sketch": sketches.key()},
                            lambda out: steps.clusters_step(docs, vectors, cent, cfg.keep, ctx, out, sketches))
        warn_unpruned_sources(clusters, tuple(cfg.prune_sources), cfg.pruned_languages(), cfg.model)
        figures = {"k": k, "keep": cfg.keep, "eps": cfg.eps}
        if not cfg.pruned_sources():  # prune_languages names only languages the embedder cannot prune (config_notes)
            return Plan((_empty_dir(ctx), clusters), StageFigures(figures))
        languages = cfg.pruned_languages()
        sims = ctx.step("similarity", {"clusters": clusters.path.name, "prune_sources": sorted(cfg.prune_sources),
                                       "prune_languages": sorted(languages), "sweep": list(cfg.eps_sweep), "version": self.version,
                                       "text_check": dataclasses.asdict(check)},
                        lambda out: steps.similarity_step(vectors, clusters, nparts, tuple(cfg.prune_sources), languages,
                                                          cfg.block_rows, tuple(cfg.eps_sweep), ctx, out, check))
        removals = ctx.step("removals", {"similarity": sims.path.name, "eps": cfg.eps, "eps_by_language": dict(sorted(cfg.eps_by_language.items()))},
                            lambda out: steps.removals_step(sims, cfg.eps, ctx, out, cfg.eps_by_language))
        if cfg.eps_by_language:
            figures["eps_by_language"] = dict(sorted(cfg.eps_by_language.items()))
        return Plan((removals.path / "by_part", clusters), StageFigures(figures))

    def annotate(self, number: int, df: pd.DataFrame, clusters: Artifact | None, cfg: SemDedupConfig) -> pd.DataFrame:
        """Each document's cluster (-1 outside the sources, or for every document when none was embedded)."""
        return _with_cluster(number, df, clusters) if clusters is not None else _no_cluster(df)

    def _embed(self, docs: dd.DataFrame, cfg: SemDedupConfig, model: str, figure: str, ctx: StageContext) -> Artifact:
        """The embeddings of ``model`` (the step is keyed by the settings that change the vectors,
        never by device or batch size, so nothing embeds twice)."""
        params = {"embedder": {"model": model, "max_seq_length": cfg.max_seq_length, "mask_digits": cfg.mask_digits},
                  "sources": sorted(cfg.sources), "store_dtype": cfg.store_dtype, "version": self.embed_version}
        if model in self.model_paths(cfg).values():  # a folder of the user's: its files, not its name (retrained in place)
            params["embedder"]["files"] = model_fingerprint(Path(model).expanduser())
        return ctx.step("static_embeddings" if figure == "static_embedding" else "embeddings", params,
                        lambda out: steps.embed_step(docs, cfg.embedder_settings(model), tuple(cfg.sources), cfg.store_dtype, figure, ctx, out),
                        resume=True)  # a stop keeps the partitions embedded


def _with_cluster(number: int, df: pd.DataFrame, clusters: Artifact) -> pd.DataFrame:
    asg = clusters.read_part(number, ["doc_id", "cluster"])
    lookup = pd.Series(asg["cluster"].to_numpy(dtype=np.int64), index=asg["doc_id"].astype(str).to_numpy())
    df = df.copy()
    df[CLUSTER_COLUMN] = lookup.reindex(df["doc_id"].astype(str).to_numpy()).fillna(-1).to_numpy(dtype=np.int64)
    return df


def _no_cluster(df: pd.DataFrame) -> pd.DataFrame:
    return df.assign(**{CLUSTER_COLUMN: np.full(len(df), -1, dtype=np.int64)})


def _empty_dir(ctx: StageContext) -> Path:
    folder = ctx.work_dir / ".no_removals"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


STAGE = SemDedupStage()
