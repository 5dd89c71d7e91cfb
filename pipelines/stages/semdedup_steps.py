"""The sub-steps of ``semdedup``: embed → centroids → clusters → similarity → removals.

Each ``*_step`` function is the ``produce`` of one ``ctx.step``: it writes the step's folder and
returns its figures (``stats.json`` ``extra``); the partition functions after it run on the
workers and get their partition number first (``StageContext.map_parts``).
"""

from __future__ import annotations

import dataclasses
import json
import time
from pathlib import Path
from typing import Any

import dask.dataframe as dd
import numpy as np
import pandas as pd

from classifiers.embedding import embedder_name
from classifiers.embedding_store import read_embedding_part, write_card, write_embedding_part
from curation.dedup.kmeans import assign, train_kmeans
from curation.dedup.semantic import SWEEP_COLUMNS, decide, empty_similarity, fold_sweep, keep_key, sweep_counts
from curation.dedup.vectors import decode_vectors, in_sample, mix_static, sample_order
from curation.files import read_parquet
from pipelines.kit import Artifact, StageContext
from pipelines.removal import REMOVAL_META, write_removals
from pipelines.stages.semdedup_check import Sketches, TextCheck, checked_pass

__all__ = ["Sketches", "TextCheck", "Vectors"]  # the checks' types are the stage's too
NO_SKETCHES = Sketches()

STATS_META = pd.DataFrame({k: pd.Series(dtype="float64") for k in ("documents", "tokens", "truncated", "seconds", "dim")})
MEMBERS_META = pd.DataFrame({
    "doc_id": pd.Series(dtype=object), "_part": pd.Series(dtype="int64"), "source": pd.Series(dtype=object),
    "cluster": pd.Series(dtype="int64"), "keep_key": pd.Series(dtype="float64"), "length": pd.Series(dtype="int64"),
    "vector": pd.Series(dtype=object),
    "lang": pd.Series(dtype=object), "sketch": pd.Series(dtype=object), "cut": pd.Series(dtype=bool),
})
SWEEP_META = pd.DataFrame({c: pd.Series(dtype="int64" if c == "count" else object) for c in SWEEP_COLUMNS})


#: The figures of an embeddings card reported in ``stats.json`` (by the figure's name).
CARD_FIGURES = {
    "embedding": ("name", "dim", "count", "seconds", "docs_per_second", "truncated"),
    "static_embedding": ("name", "dim", "seconds", "docs_per_second"),
}


@dataclasses.dataclass(frozen=True)
class Vectors:
    """The embeddings pruning compares: the transformer's, with the static model's mixed in
    (weight ``weight``, for ``languages`` only when given) when ``static`` is set."""

    main: Artifact
    static: Artifact | None = None
    weight: float = 1.0
    languages: tuple[str, ...] = ()

    def tag(self) -> list[Any]:
        """What identifies these vectors in a step's parameters."""
        return [self.main.path.name, self.static.path.name if self.static else None, self.weight, list(self.languages)]


def read_vectors(vectors: Vectors, number: int, langs: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``(doc_ids, vectors)`` of partition ``number`` as pruning sees them (transformer, or mixed)."""
    ids, vecs = read_embedding_part(vectors.main.part_path(number))
    if vectors.static is None:
        return ids, vecs
    sids, svecs = read_embedding_part(vectors.static.part_path(number))
    if not np.array_equal(ids, sids):
        raise RuntimeError(f"semdedup: the two embeddings of partition {number} disagree; delete the stage cache")
    return ids, mix_static(vecs, svecs, vectors.weight, langs, vectors.languages)


# --------------------------------------------------------------------------- embed


def embed_step(docs: dd.DataFrame, settings: dict[str, Any], sources: tuple[str, ...], dtype: str, figure: str,
               ctx: StageContext, out: Path) -> dict[str, Any]:
    """One ``part-NNNNN.parquet`` of vectors per input partition and the ``embeddings.json`` card;
    the card's :data:`CARD_FIGURES` come back under ``figure``. A ``resume`` step: the partitions
    a stopped run embedded are kept, and only the others are embedded."""
    started = time.time()
    stats = ctx.map_resumable(docs[["doc_id", "text", "source"]], Artifact(out), _embed_part, Artifact(out), settings, sources, dtype,
                              label=f"embed ({settings['model']})", costs=ctx.costs(sources))
    seconds = time.time() - started
    count = int(stats["documents"].sum())
    # The card names the embedder so consumers embed missing documents with the same settings.
    card = {
        "embedder": {k: v for k, v in settings.items() if k != "device"},
        "name": embedder_name(settings["model"], settings["max_seq_length"], settings["mask_digits"]),
        "dim": int(stats["dim"].max()), "dtype": dtype, "count": count,
        "sources": sorted(sources), "normalized": True, "seconds": round(seconds, 3),
        "model_seconds": round(float(stats["seconds"].sum()), 3),
        "docs_per_second": round(count / max(float(stats["seconds"].sum()), 1e-9), 2),
        "tokens": int(stats["tokens"].sum()), "truncated": int(stats["truncated"].sum()),
    }
    write_card(out, card)
    return {figure: {k: card[k] for k in CARD_FIGURES[figure]}}


def _embed_part(number: int, df: pd.DataFrame, out: Artifact, settings: dict[str, Any], sources: tuple[str, ...], dtype: str) -> pd.DataFrame:
    from classifiers.embedding import get_embedder

    rows = df[df["source"].isin(sources)]
    embedder = get_embedder(**settings)  # cached per worker process
    started = time.perf_counter()
    vecs = embedder.embed(rows["text"].tolist())
    seconds = time.perf_counter() - started
    write_embedding_part(out.part_path(number), rows["doc_id"].astype(str).tolist(), vecs, dtype)
    stats = getattr(embedder, "last_stats", {}) if len(rows) else {}
    return pd.DataFrame({"documents": [float(len(rows))], "tokens": [float(stats.get("tokens", 0))],
                         "truncated": [float(stats.get("truncated", 0))], "seconds": [seconds],
                         "dim": [float(embedder.dim)]})


# --------------------------------------------------------------------------- cluster


def centroids_step(vectors: Vectors, nparts: int, n: int, k: int, want: int, niter: int, seed: int, ctx: StageContext,
                   out: Path) -> None:
    """Spherical k-means trained on the client from a sample of about ``want`` of the ``n`` vectors."""
    graph = dd.from_map(_sample_part, list(range(nparts)), [seed] * nparts, vectors=vectors, fraction=want / n,
                        meta=pd.DataFrame({"doc_id": pd.Series(dtype=object), "vector": pd.Series(dtype=object)}),
                        enforce_metadata=False)
    frame = ctx.compute(graph, "k-means sample")
    # In a seeded hash order, not in partition order: faiss seeds by row index, so file order moved clusters.
    sample = decode_vectors(frame["vector"].to_numpy(dtype=object)[sample_order(frame["doc_id"], seed)].tolist(), np.float32)
    started = time.time()
    centroids = train_kmeans(sample, k, niter=niter, seed=seed)
    np.save(out / "centroids.npy", centroids, allow_pickle=False)
    (out / "kmeans.json").write_text(json.dumps({"k": int(len(centroids)), "sample": int(len(sample)), "vectors": n,
                                                 "iterations": niter, "seed": seed,
                                                 "seconds": round(time.time() - started, 3)}, indent=2, sort_keys=True))


def _sample_part(number: int, seed: int, vectors: Vectors, fraction: float) -> pd.DataFrame:
    ids, vecs = read_vectors(vectors, number)
    if fraction < 1.0:
        chosen = in_sample(ids, seed, fraction)
        ids, vecs = ids[chosen], vecs[chosen]
    return pd.DataFrame({"doc_id": pd.Series(ids, dtype=object), "vector": pd.Series([row.tobytes() for row in vecs], dtype=object)})


def clusters_step(docs: dd.DataFrame, vectors: Vectors, centroids: Artifact, keep: str, ctx: StageContext, out: Path,
                  sketches: Sketches = NO_SKETCHES) -> None:
    """Per input partition: doc_id, source, lang, cluster, centroid_sim, keep_key, length (characters:
    ties of the keep key go to the longer text) and the pages' ``sketch`` and ``cut`` for the pair
    checks (:class:`Sketches`)."""
    graph = ctx.map_parts(docs, _assign_part, vectors, str(centroids.path / "centroids.npy"), keep, Artifact(out),
                          sketches, meta=pd.Series(dtype="int64"))
    ctx.compute(graph, "assign clusters")


def _langs(rows: pd.DataFrame) -> np.ndarray:
    """The ``lang`` of each row (the ingest column; identified here for input that lacks it)."""
    from classifiers.langid import identify_docs

    langs = rows["lang"].to_numpy(dtype=object, copy=True) if "lang" in rows.columns else np.full(len(rows), None, dtype=object)
    missing = np.array([not isinstance(x, str) for x in langs], dtype=bool)
    if missing.any():
        langs[missing] = identify_docs(rows["text"].to_numpy()[missing].tolist(), rows["source"].to_numpy()[missing].tolist())[0]
    return langs


def _assign_part(number: int, df: pd.DataFrame, vectors: Vectors, centroids: str, keep: str, out: Artifact,
                 sketches: Sketches = NO_SKETCHES) -> pd.Series:
    ids, _ = read_embedding_part(vectors.main.part_path(number))
    rows = df.set_index(df["doc_id"].astype(str)).loc[list(ids)] if len(ids) else df.iloc[:0]
    langs = _langs(rows)
    ids, vecs = read_vectors(vectors, number, langs)
    labels, sims = assign(vecs, np.load(centroids, allow_pickle=False))
    frame = pd.DataFrame({
        "doc_id": pd.Series(ids, dtype=object), "source": pd.Series(rows["source"].to_numpy(dtype=object), dtype=object),
        "lang": pd.Series(langs, dtype=object),
        "cluster": labels, "centroid_sim": sims, "keep_key": keep_key(rows, sims, keep),
        "length": rows["text"].map(lambda t: len(t) if isinstance(t, str) else 0).to_numpy(dtype=np.int64),
    })
    for name, column in sketches.columns(rows, langs).items():
        frame[name] = column
    out.write_part(number, frame)
    return pd.Series([len(frame)], dtype="int64")


# --------------------------------------------------------------------------- similarity pass and decision


def similarity_step(vectors: Vectors, clusters: Artifact, nparts: int, sources: tuple[str, ...], languages: tuple[str, ...],
                    block_rows: int, sweep: tuple[float, ...], ctx: StageContext, out: Path,
                    check: TextCheck | None = None) -> dict[str, Any]:
    """Each pruned member's max cosine to an earlier member of its cluster (pairs of ``check``'s
    languages only when their texts overlap); ``sweep.json``."""
    members = dd.from_map(_members_part, list(range(nparts)), vectors=vectors, clusters=clusters, sources=sources,
                          languages=languages, meta=MEMBERS_META, enforce_metadata=False)
    # The whole cluster must sit in one partition: shuffle (doc_id, vector, keep key) on the cluster id.
    shuffled = ctx.shuffle(members, "cluster", "similarity pass", npartitions=max(1, nparts))
    counts = ctx.map_parts(shuffled, _similarity_part, Artifact(out), block_rows, sweep, check, meta=SWEEP_META)
    # per (source, lang): the decision step splits them by eps_by_language (eps_sweep, eps_sweep_by_language)
    totals = ctx.compute(counts, "similarity pass").groupby(list(SWEEP_COLUMNS[:3]), sort=True)["count"].sum()
    rows = [[*key, int(n)] for key, n in totals.items()]
    (out / "sweep.json").write_text(json.dumps({"columns": list(SWEEP_COLUMNS), "rows": rows}, indent=1))
    return {"pruned": int(sum(r[3] for r in rows if r[2] == "documents"))}


def _members_part(number: int, vectors: Vectors, clusters: Artifact, sources: tuple[str, ...], languages: tuple[str, ...] = ()) -> pd.DataFrame:
    asg = clusters.read_part(number)
    ids, vecs = read_vectors(vectors, number, asg["lang"].to_numpy(dtype=object) if "lang" in asg.columns else None)
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
        "length": asg["length"].to_numpy(dtype=np.int64)[keep],
        "vector": pd.Series([row.tobytes() for row in half], dtype=object),
        "lang": pd.Series(asg["lang"].to_numpy(dtype=object)[keep] if "lang" in asg.columns else [None] * int(keep.sum()), dtype=object),
        "sketch": pd.Series(asg["sketch"].to_numpy(dtype=object)[keep] if "sketch" in asg.columns else [b""] * int(keep.sum()),
                            dtype=object),
        "cut": asg["cut"].to_numpy(dtype=bool)[keep] if "cut" in asg.columns else np.zeros(int(keep.sum()), dtype=bool),
    })


def _similarity_part(number: int, df: pd.DataFrame, out: Artifact, block_rows: int, sweep: tuple[float, ...],
                     check: TextCheck | None = None) -> pd.DataFrame:
    if len(df):
        vecs = decode_vectors(df["vector"].tolist(), np.float16)
        vecs /= np.maximum(np.linalg.norm(vecs, axis=1, keepdims=True), 1e-12)
        sims = checked_pass(df, vecs, check, block_rows)
    else:
        sims = empty_similarity()
    out.write_part(number, sims)
    return sweep_counts(sims, sweep)


def removals_step(sims: Artifact, eps: float, ctx: StageContext, out: Path, eps_by_language: dict[str, float] | None = None) -> dict[str, Any]:
    """The duplicates at ``eps`` (``eps_by_language`` for those languages), by input partition
    (``by_part/``), and ``count.json``."""
    frames = dd.from_map(_read_file, [str(p) for p in sims.parts()], meta=empty_similarity(), enforce_metadata=False)
    removals = frames.map_partitions(decide, eps, dict(eps_by_language or {}), meta=REMOVAL_META)
    n = write_removals(removals, out / "by_part", ctx, "decide")
    (out / "count.json").write_text(json.dumps({"removed": n, "eps": eps}))
    return {"removed": n, **sweep_figures(sims.path / "sweep.json", eps_by_language or {})}


def sweep_figures(path: Path, eps_by_language: dict[str, float]) -> dict[str, Any]:
    """``eps_sweep`` (per source: the pages whose language follows ``eps``) and, with
    ``eps_by_language``, ``eps_sweep_by_language`` (per language with its own ε, per source), from
    the similarity pass's ``sweep.json``: each count is what setting that one ε removes."""
    saved = json.loads(path.read_text())
    summary = fold_sweep(pd.DataFrame(saved["rows"], columns=saved["columns"]), own=eps_by_language)
    figures: dict[str, Any] = {"eps_sweep": summary["by_source"]}
    if eps_by_language:
        figures["eps_sweep_by_language"] = {lang: summary["by_language"].get(lang, {}) for lang in sorted(eps_by_language)}
    return figures


def _read_file(path: str) -> pd.DataFrame:
    return read_parquet(path).to_pandas()
