"""``semdedup``: embed → cluster → similarity pass → decide → remove (SemDeDup, Abbas et al. 2023).

Each sub-step is a ``ctx.cached`` artifact keyed by its own parameters and by the artifact it reads,
so changing ``eps`` re-runs only the decision, changing ``keep`` re-runs the assignment and the
similarity pass, and nothing ever embeds twice for the same model settings:

- ``embeddings/``  ``part-NNNNN.parquet`` (doc_id + vector, one per input partition) + ``embeddings.json``;
  read it with :func:`classifiers.embedding.load_embeddings` (later stages reuse it).
- ``static_embeddings/``  the same for the static embedder when ``static_weight`` > 0: pruning compares
  documents by ``(1 - w) · transformer cosine + w · static cosine`` (tuned on held-out template twins).
- ``centroids/``   ``centroids.npy`` (spherical k-means, trained on a sample on the client) + ``kmeans.json``.
- ``clusters/``    per input partition: doc_id, source, cluster, centroid_sim, keep_key.
- ``similarity/``  per cluster shuffle partition: each member's max cosine to an earlier member
  (keep order) and which one; ``sweep.json`` holds the removal count for every ε of ``eps_sweep``.
- ``removals/``    the duplicates at ``eps``, grouped by input partition (``pipelines.removal``).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
import time
from pathlib import Path
from typing import Any

import dask.dataframe as dd
import numpy as np
import pandas as pd
import pyarrow.parquet as pq

from classifiers.embedding import embedder_name
from classifiers.embedding_store import read_embedding_part, write_card, write_embedding_part
from curation.config import ConfigError, StageConfig, check_choice, check_range
from curation.dedup.kmeans import DEFAULT_CLUSTER_SIZE, assign, default_k, sample_size, train_kmeans
from curation.dedup.semantic import decide, empty_similarity, eps_sweep, keep_key, parse_keep, similarity_pass
from curation.schema import SOURCES
from pipelines.io import write_frame
from pipelines.progress import compute_with_progress
from pipelines.removal import REMOVAL_META, mark_removed, write_removals

log = logging.getLogger(__name__)

CLUSTER_COLUMN = "semdedup_cluster"
STATS_META = pd.DataFrame({k: pd.Series(dtype="float64") for k in ("documents", "tokens", "truncated", "seconds", "dim")})


@dataclasses.dataclass(frozen=True)
class SemDedupConfig(StageConfig):
    sources: tuple[str, ...] = ("web", "math_science")
    prune_sources: tuple[str, ...] = ("web",)
    prune_languages: tuple[str, ...] = ()  # natural languages (``lang``) pruned; () = every language
    static_languages: tuple[str, ...] = ()  # languages whose pruning cosine mixes in the static model; () = all
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
    eps_sweep: tuple[float, ...] = (0.01, 0.02, 0.05, 0.08, 0.1, 0.12, 0.15, 0.2, 0.25, 0.3)
    block_rows: int = 1024

    def pruned_languages(self) -> tuple[str, ...]:
        """The languages SemDeDup prunes (() = all): ``prune_languages``, and when the embedder is the
        static model itself, only ``static_languages`` (its vectors mean nothing for other languages)."""
        if self.model == self.static_model and self.static_languages:
            own = tuple(self.static_languages)
            return tuple(x for x in self.prune_languages if x in own) if self.prune_languages else own
        return tuple(self.prune_languages)

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
        try:
            parse_keep(self.keep)
        except ValueError as exc:
            raise ConfigError(f"SemDedupConfig.keep: {exc}") from exc
        check_range(self, "eps", 1e-6, 1.0)
        check_range(self, "static_weight", 0.0, 1.0)
        for e in self.eps_sweep:
            if not 0.0 < e <= 1.0:
                raise ConfigError(f"SemDedupConfig.eps_sweep value {e} is out of range (0, 1]")
        for key in ("batch_size", "max_seq_length", "cluster_size", "kmeans_iter", "kmeans_sample", "block_rows"):
            check_range(self, key, 1, None)
        if self.k is not None:
            check_range(self, "k", 1, None)

    def embedder_settings(self, model: str | None = None) -> dict[str, Any]:
        """Keyword arguments of :func:`classifiers.embedding.get_embedder` (recorded in the card)."""
        return {"model": model or self.model, "device": self.device, "batch_size": self.batch_size,
                "max_seq_length": self.max_seq_length, "mask_digits": self.mask_digits}

    def combines_static(self) -> bool:
        """Whether pruning mixes in the static embedder's cosine (``static_weight`` > 0, another model)."""
        return self.static_weight > 0 and self.static_model != self.model


class SemDedupStage:
    name = "semdedup"
    version = "2"  # 2: the k-means sample is drawn per document, not per partition
    config_cls = SemDedupConfig
    requires = ("doc_id", "text", "source")
    produces: dict[str, Any] = {CLUSTER_COLUMN: "int64"}
    global_keys = ("seed",)

    def build(self, docs: dd.DataFrame, cfg: SemDedupConfig, ctx: Any) -> dd.DataFrame:
        _, column = parse_keep(cfg.keep)
        if column is not None and column not in docs.columns:
            raise ConfigError(f"semdedup.keep = {cfg.keep!r} needs column {column!r}; columns: {list(docs.columns)}")
        seed = int(ctx.recipe.get("seed", 0) or 0)
        nparts = docs.npartitions
        emb = ctx.cached("embeddings", {"embedder": _output_settings(cfg, cfg.model), "sources": sorted(cfg.sources),
                                        "store_dtype": cfg.store_dtype, "version": self.version},
                         lambda out: _embed(docs, cfg, cfg.model, out, ctx))
        card = json.loads((emb / "embeddings.json").read_text())
        n = int(card["count"])
        ctx.extra_stats["embedding"] = {k: card[k] for k in ("name", "dim", "count", "seconds", "docs_per_second", "truncated")}
        if n == 0:
            log.info("semdedup: no document of sources %s; every document kept", list(cfg.sources))
            return mark_removed(docs.map_partitions(_no_cluster, meta=_cluster_meta(docs)), _empty_dir(ctx), self.produces)
        vectors = (str(emb), None, 1.0)
        if cfg.combines_static():
            # Pruning cosine = (1 - w) transformer cosine + w static cosine: the concatenation of the two unit
            # vectors scaled by sqrt(1 - w) and sqrt(w) is a unit vector whose dot products are exactly that.
            static = ctx.cached("static_embeddings", {"embedder": _output_settings(cfg, cfg.static_model),
                                                      "sources": sorted(cfg.sources), "store_dtype": cfg.store_dtype,
                                                      "version": self.version},
                                lambda out: _embed(docs, cfg, cfg.static_model, out, ctx))
            vectors = (str(emb), str(static), float(cfg.static_weight), tuple(cfg.static_languages))
            ctx.extra_stats["static_embedding"] = {k: v for k, v in json.loads((static / "embeddings.json").read_text()).items()
                                                   if k in ("name", "dim", "seconds", "docs_per_second")}
        tag = [Path(v).name if isinstance(v, str) else v for v in vectors]
        k = int(min(cfg.k or default_k(n, cfg.cluster_size), n))
        cent = ctx.cached("centroids", {"vectors": tag, "k": k, "iter": cfg.kmeans_iter,
                                        "sample": sample_size(k, n, cfg.kmeans_sample), "seed": seed},
                          lambda out: _train(vectors, nparts, n, k, cfg, seed, out, ctx))
        clusters = ctx.cached("clusters", {"centroids": cent.name, "vectors": tag, "keep": cfg.keep, "columns": "lang"},
                              lambda out: _assign(docs, vectors, cent, cfg.keep, out, ctx))
        sims = ctx.cached("similarity", {"clusters": clusters.name, "prune_sources": sorted(cfg.prune_sources),
                                         "prune_languages": sorted(cfg.pruned_languages()),
                                         "sweep": list(cfg.eps_sweep), "version": self.version},
                          lambda out: _similarity(vectors, clusters, nparts, cfg, out, ctx))
        removals = ctx.cached("removals", {"similarity": sims.name, "eps": cfg.eps},
                              lambda out: _decide(sims, cfg.eps, out, ctx))
        sweep = json.loads((sims / "sweep.json").read_text())
        ctx.extra_stats.update({
            "k": k, "keep": cfg.keep, "eps": cfg.eps, "pruned": sweep["pruned"],
            "removed": json.loads((removals / "count.json").read_text())["removed"],
            "eps_sweep": sweep["by_source"],
        })
        annotated = docs.map_partitions(_with_cluster, str(clusters), meta=_cluster_meta(docs))
        return mark_removed(annotated, removals / "by_part", self.produces)


def _output_settings(cfg: SemDedupConfig, model: str) -> dict[str, Any]:
    """Embedder settings that change the vectors (device and batch size do not)."""
    return {"model": model, "max_seq_length": cfg.max_seq_length, "mask_digits": cfg.mask_digits}


def _read_vectors(spec: tuple, number: int, langs: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``(doc_ids, vectors)`` of partition ``number`` as pruning sees them (transformer, or combined).

    With ``langs`` (one per row) and ``static_languages`` in the spec, the static model is mixed in
    only for those languages; the others keep the transformer alone (the distilled static model
    learned English words only: on Chinese pages it finds nearly every page close to every other).
    """
    main, static, weight = spec[:3]
    static_langs = spec[3] if len(spec) > 3 else ()
    ids, vecs = read_embedding_part(Path(main) / f"part-{number:05d}.parquet")
    if static is None:
        return ids, vecs
    sids, svecs = read_embedding_part(Path(static) / f"part-{number:05d}.parquet")
    if not np.array_equal(ids, sids):
        raise RuntimeError(f"semdedup: the two embeddings of partition {number} disagree; delete the stage cache")
    w = np.full((len(ids), 1), weight, dtype=np.float64)
    if static_langs and langs is not None:
        w[~np.isin(np.asarray(langs, dtype=object), list(static_langs))] = 0.0
    return ids, np.hstack([np.sqrt(1.0 - w) * vecs, np.sqrt(w) * svecs]).astype(np.float32)


# --------------------------------------------------------------------------- embed


def _embed(docs: dd.DataFrame, cfg: SemDedupConfig, model: str, out: Path, ctx: Any) -> None:
    started = time.time()
    graph = docs[["doc_id", "text", "source"]].map_partitions(
        _embed_part, str(out), cfg.embedder_settings(model), tuple(cfg.sources), cfg.store_dtype, meta=STATS_META)
    stats = compute_with_progress(graph, ctx.client, f"semdedup: embed ({model})", ctx.quiet)
    seconds = time.time() - started
    count = int(stats["documents"].sum())
    # The card names the embedder so consumers embed missing documents with the same settings.
    write_card(out, {
        "embedder": {k: v for k, v in cfg.embedder_settings(model).items() if k != "device"},
        "name": embedder_name(model, cfg.max_seq_length, cfg.mask_digits), "dim": int(stats["dim"].max()),
        "dtype": cfg.store_dtype, "count": count,
        "sources": sorted(cfg.sources), "normalized": True, "seconds": round(seconds, 3),
        "model_seconds": round(float(stats["seconds"].sum()), 3),
        "docs_per_second": round(count / max(float(stats["seconds"].sum()), 1e-9), 2),
        "tokens": int(stats["tokens"].sum()), "truncated": int(stats["truncated"].sum()),
    })


def _embed_part(df: pd.DataFrame, out: str, settings: dict[str, Any], sources: tuple[str, ...], dtype: str,
                partition_info: dict | None = None) -> pd.DataFrame:
    from classifiers.embedding import get_embedder

    number = (partition_info or {}).get("number", 0)
    rows = df[df["source"].isin(sources)]
    embedder = get_embedder(**settings)  # cached per worker process
    started = time.perf_counter()
    vecs = embedder.embed(rows["text"].tolist())
    seconds = time.perf_counter() - started
    write_embedding_part(Path(out) / f"part-{number:05d}.parquet", rows["doc_id"].astype(str).tolist(), vecs, dtype)
    stats = getattr(embedder, "last_stats", {}) if len(rows) else {}
    return pd.DataFrame({"documents": [float(len(rows))], "tokens": [float(stats.get("tokens", 0))],
                         "truncated": [float(stats.get("truncated", 0))], "seconds": [seconds],
                         "dim": [float(embedder.dim)]})


# --------------------------------------------------------------------------- cluster


def _train(vectors: tuple, nparts: int, n: int, k: int, cfg: SemDedupConfig, seed: int, out: Path, ctx: Any) -> None:
    want = sample_size(k, n, cfg.kmeans_sample)
    graph = dd.from_map(_sample_part, list(range(nparts)), [seed] * nparts, spec=vectors, fraction=want / n,
                        meta=pd.DataFrame({"vector": pd.Series(dtype=object)}), enforce_metadata=False)
    frame = compute_with_progress(graph, ctx.client, "semdedup: k-means sample", ctx.quiet)
    sample = _decode(frame["vector"].tolist(), np.float32)
    started = time.time()
    centroids = train_kmeans(sample, k, niter=cfg.kmeans_iter, seed=seed)
    np.save(out / "centroids.npy", centroids, allow_pickle=False)
    (out / "kmeans.json").write_text(json.dumps({"k": int(len(centroids)), "sample": int(len(sample)), "vectors": n,
                                                 "iterations": cfg.kmeans_iter, "seed": seed,
                                                 "seconds": round(time.time() - started, 3)}, indent=2, sort_keys=True))


def _sample_part(number: int, seed: int, spec: tuple, fraction: float) -> pd.DataFrame:
    ids, vecs = _read_vectors(spec, number)
    if fraction < 1.0:
        vecs = vecs[in_sample(ids, seed, fraction)]
    return pd.DataFrame({"vector": pd.Series([row.tobytes() for row in vecs], dtype=object)})


def in_sample(ids: Any, seed: int, fraction: float) -> np.ndarray:
    """Whether each document is in the k-means sample: a hash of (seed, id) below ``fraction``.

    Decided per document, so the sample (and the clusters) do not depend on how the corpus is
    partitioned; a per-partition random draw made 32 MB and 128 MB partitions disagree on ~0.2 %
    of the semantic duplicates.

    >>> in_sample(["a", "b", "c"], 1, 1.0).tolist(), int(in_sample([str(i) for i in range(10000)], 1, 0.25).sum()) // 100
    ([True, True, True], 25)
    """
    bound = min(int(fraction * 2**64), 2**64 - 1)
    return np.fromiter(
        (int.from_bytes(hashlib.blake2b(f"{seed}:{i}".encode(), digest_size=8).digest(), "little") <= bound for i in ids),
        dtype=bool, count=len(ids),
    )


def _decode(blobs: list[bytes], dtype: Any) -> np.ndarray:
    """Rows of raw vector bytes → an (n, d) float32 array."""
    if not blobs:
        return np.zeros((0, 1), np.float32)
    return np.frombuffer(b"".join(blobs), dtype=dtype).reshape(len(blobs), -1).astype(np.float32)


def _assign(docs: dd.DataFrame, vectors: tuple, cent: Path, keep: str, out: Path, ctx: Any) -> None:
    meta = pd.Series(dtype="int64")
    graph = docs.map_partitions(_assign_part, vectors, str(cent / "centroids.npy"), keep, str(out), meta=meta)
    compute_with_progress(graph, ctx.client, "semdedup: assign clusters", ctx.quiet)


def _langs(rows: pd.DataFrame) -> np.ndarray:
    """The ``lang`` of each row (the ingest column; identified here for input that lacks it)."""
    from classifiers.langid import identify_docs

    langs = rows["lang"].to_numpy(dtype=object, copy=True) if "lang" in rows.columns else np.full(len(rows), None, dtype=object)
    missing = np.array([not isinstance(x, str) for x in langs], dtype=bool)
    if missing.any():
        langs[missing] = identify_docs(rows["text"].to_numpy()[missing].tolist(), rows["source"].to_numpy()[missing].tolist())[0]
    return langs


def _assign_part(df: pd.DataFrame, vectors: tuple, centroids: str, keep: str, out: str,
                 partition_info: dict | None = None) -> pd.Series:
    number = (partition_info or {}).get("number", 0)
    ids, _ = read_embedding_part(Path(vectors[0]) / f"part-{number:05d}.parquet")
    rows = df.set_index(df["doc_id"].astype(str)).loc[list(ids)] if len(ids) else df.iloc[:0]
    langs = _langs(rows)
    ids, vecs = _read_vectors(vectors, number, langs)
    labels, sims = assign(vecs, np.load(centroids, allow_pickle=False))
    frame = pd.DataFrame({
        "doc_id": pd.Series(ids, dtype=object), "source": pd.Series(rows["source"].to_numpy(dtype=object), dtype=object),
        "lang": pd.Series(langs, dtype=object),
        "cluster": labels, "centroid_sim": sims, "keep_key": keep_key(rows, sims, keep),
    })
    write_frame(frame, Path(out) / f"part-{number:05d}.parquet")
    return pd.Series([len(frame)], dtype="int64")


# --------------------------------------------------------------------------- similarity pass and decision

MEMBERS_META = pd.DataFrame({
    "doc_id": pd.Series(dtype=object), "_part": pd.Series(dtype="int64"), "source": pd.Series(dtype=object),
    "cluster": pd.Series(dtype="int64"), "keep_key": pd.Series(dtype="float64"), "vector": pd.Series(dtype=object),
})


def _similarity(vectors: tuple, clusters: Path, nparts: int, cfg: SemDedupConfig, out: Path, ctx: Any) -> None:
    members = dd.from_map(_members_part, list(range(nparts)), spec=vectors, clusters=str(clusters),
                          sources=tuple(cfg.prune_sources), languages=cfg.pruned_languages(), meta=MEMBERS_META,
                          enforce_metadata=False)
    # The whole cluster must sit in one partition: shuffle (doc_id, vector, keep key) on the cluster id.
    shuffled = members.shuffle(on="cluster", npartitions=max(1, nparts))
    counts = shuffled.map_partitions(_similarity_part, str(out), cfg.block_rows, tuple(cfg.eps_sweep),
                                     meta=pd.DataFrame({"source": pd.Series(dtype=object), "key": pd.Series(dtype=object),
                                                        "count": pd.Series(dtype="int64")}))
    table = compute_with_progress(counts, ctx.client, "semdedup: similarity pass", ctx.quiet)
    totals = table.groupby(["source", "key"], sort=True)["count"].sum()
    by_source: dict[str, Any] = {}
    for (source, key), value in totals.items():
        by_source.setdefault(source, {"documents": 0, "removed": {}, "rate": {}})
        if key == "documents":
            by_source[source]["documents"] = int(value)
        else:
            by_source[source]["removed"][key] = int(value)
    for entry in by_source.values():
        entry["rate"] = {e: round(c / max(entry["documents"], 1), 6) for e, c in entry["removed"].items()}
    pruned = sum(e["documents"] for e in by_source.values())
    (out / "sweep.json").write_text(json.dumps({"pruned": pruned, "by_source": by_source}, indent=2, sort_keys=True))


def _members_part(number: int, spec: tuple, clusters: str, sources: tuple[str, ...], languages: tuple[str, ...] = ()) -> pd.DataFrame:
    asg = pq.read_table(Path(clusters) / f"part-{number:05d}.parquet").to_pandas()
    ids, vecs = _read_vectors(spec, number, asg["lang"].to_numpy(dtype=object) if "lang" in asg.columns else None)
    if not np.array_equal(asg["doc_id"].to_numpy(dtype=object), ids):
        raise RuntimeError(f"semdedup: clusters and embeddings of partition {number} disagree; delete the stage cache")
    keep = asg["source"].isin(sources).to_numpy().copy()
    if languages:  # pages in other languages are never pruned (an English embedder cannot tell them apart)
        keep &= asg["lang"].isin(languages).to_numpy() if "lang" in asg.columns else np.zeros(len(asg), dtype=bool)
    half = vecs[keep].astype(np.float16)  # 768 bytes a 384-d vector through the shuffle
    return pd.DataFrame({
        "doc_id": pd.Series(ids[keep], dtype=object), "_part": np.full(int(keep.sum()), number, dtype=np.int64),
        "source": pd.Series(asg["source"].to_numpy(dtype=object)[keep], dtype=object),
        "cluster": asg["cluster"].to_numpy(dtype=np.int64)[keep],
        "keep_key": asg["keep_key"].to_numpy(dtype=np.float64)[keep],
        "vector": pd.Series([row.tobytes() for row in half], dtype=object),
    })


def _similarity_part(df: pd.DataFrame, out: str, block_rows: int, sweep: tuple[float, ...],
                     partition_info: dict | None = None) -> pd.DataFrame:
    number = (partition_info or {}).get("number", 0)
    if len(df):
        vecs = _decode(df["vector"].tolist(), np.float16)
        vecs /= np.maximum(np.linalg.norm(vecs, axis=1, keepdims=True), 1e-12)
        sims = similarity_pass(df.drop(columns=["vector"]), vecs, block_rows=block_rows)
    else:
        sims = empty_similarity()
    write_frame(sims, Path(out) / f"part-{number:05d}.parquet")
    rows = []
    for source, group in sims.groupby("source", sort=True):
        rows.append((source, "documents", len(group)))
        rows.extend((source, key, count) for key, count in eps_sweep(group["max_sim"].to_numpy(), sweep).items())
    return pd.DataFrame(rows, columns=["source", "key", "count"]).astype({"source": object, "key": object, "count": "int64"})


def _decide(sims: Path, eps: float, out: Path, ctx: Any) -> None:
    files = sorted(str(p) for p in sims.glob("part-*.parquet"))
    frames = dd.from_map(_read_sims, files, meta=empty_similarity(), enforce_metadata=False)
    removals = frames.map_partitions(decide, eps, meta=REMOVAL_META)
    n = write_removals(removals, out / "by_part", ctx, "decide")
    (out / "count.json").write_text(json.dumps({"removed": n, "eps": eps}))


def _read_sims(path: str) -> pd.DataFrame:
    return pq.read_table(path).to_pandas()


# --------------------------------------------------------------------------- output


def _cluster_meta(docs: dd.DataFrame) -> pd.DataFrame:
    return docs._meta.assign(**{CLUSTER_COLUMN: pd.Series(dtype="int64")})


def _with_cluster(df: pd.DataFrame, clusters: str, partition_info: dict | None = None) -> pd.DataFrame:
    number = (partition_info or {}).get("number", 0)
    asg = pq.read_table(Path(clusters) / f"part-{number:05d}.parquet", columns=["doc_id", "cluster"]).to_pandas()
    lookup = pd.Series(asg["cluster"].to_numpy(dtype=np.int64), index=asg["doc_id"].astype(str).to_numpy())
    df = df.copy()
    df[CLUSTER_COLUMN] = lookup.reindex(df["doc_id"].astype(str).to_numpy()).fillna(-1).to_numpy(dtype=np.int64)
    return df


def _no_cluster(df: pd.DataFrame) -> pd.DataFrame:
    return df.assign(**{CLUSTER_COLUMN: np.full(len(df), -1, dtype=np.int64)})


def _empty_dir(ctx: Any) -> Path:
    folder = ctx.work_dir / ".no_removals"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


STAGE = SemDedupStage()
