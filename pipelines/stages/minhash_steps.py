"""The sub-steps of ``minhash_dedup``: signatures → buckets → edges → components → clusters.

Each ``*_step`` function is the ``produce`` of one ``ctx.step``: it writes the step's folder
through the partition functions of :mod:`pipelines.stages.minhash_parts` and returns the step's
figures (``stats.json`` ``extra``). :func:`label_propagation` is the distributed connected
components: the rounds of :mod:`curation.dedup.components` on Dask frames until no label changes.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import dask.dataframe as dd
import pandas as pd
import pyarrow.parquet as pq

from curation.dedup.components import initial_labels, propagate, union_find_components
from curation.dedup.lsh import part_of
from curation.dedup.minhash_stats import COUNTS_META, fold_counts, histogram_rows
from curation.files import read_parquet
from pipelines.io import write_json
from pipelines.kit import Artifact, StageContext
from pipelines.progress import persist
from pipelines.stages import minhash_parts as parts

BAND_META = pd.DataFrame({"band": pd.Series(dtype="int64"), "band_hash": pd.Series(dtype="int64"), "uid": pd.Series(dtype="int64")})
MEMBER_META = pd.DataFrame(
    {
        "label": pd.Series(dtype="int64"), "uid": pd.Series(dtype="int64"), "doc_id": pd.Series(dtype=object),
        "source": pd.Series(dtype=object), "key": pd.Series(dtype="float64"), "sig": pd.Series(dtype=object),
    }
)
EDGE_META = pd.DataFrame({"u": pd.Series(dtype="int64"), "v": pd.Series(dtype="int64")})


def over_parts(docs: dd.DataFrame | None, nparts: int, fn: Any, *args: Any, meta: pd.DataFrame = COUNTS_META) -> dd.DataFrame:
    """``fn(part_number, docs_partition_or_None, *args)`` for every input partition."""
    if docs is not None:
        return StageContext.map_parts(docs, fn, *args, meta=meta, enforce_metadata=False)
    return dd.from_map(parts.without_docs, list(range(nparts)), args=[fn, *args], meta=meta, enforce_metadata=False)


def signatures_step(docs: dd.DataFrame, opts: dict[str, Any], ctx: StageContext, out: Path) -> dict[str, Any]:
    """One ``part-NNNNN.parquet`` of signatures per input partition, and ``signatures.json``."""
    graph = over_parts(docs[["doc_id", "text", "source"]], docs.npartitions, parts.sign_part, Artifact(out), opts)
    counts = ctx.compute(graph, "signatures", costs=ctx.costs())  # shingling: the step's work, ~ its tokens
    write_json(out / "signatures.json", {
        **{k: opts[k] for k in ("num_perm", "seed", "scheme", "hash", "shingle", "source_shingle")},
        "columns": {"uid": "partition << 32 | row", "sig": f"uint32[{opts['num_perm']}]"},
        "load": "datasketch.LeanMinHash(seed=seed, hashvalues=row['sig'], scheme=scheme)",
    })
    return {"signatures": fold_counts(counts)}


def buckets_step(sigs: Artifact, nparts: int, bands: int, rows: int, large: int, ctx: StageContext, out: Path) -> dict[str, Any]:
    """Band keys shuffled on ``(band, band_hash)``; star edges of each bucket, by the partition of ``v``."""
    band = dd.from_map(parts.band_part, list(range(nparts)), args=[sigs, bands, rows], meta=BAND_META, enforce_metadata=False)
    shuffled = ctx.shuffle(band, ["band", "band_hash"], "buckets", npartitions=max(nparts, 1))
    counts = ctx.compute(ctx.map_parts(shuffled, parts.star_part, Artifact(out), large, meta=COUNTS_META, enforce_metadata=False), "buckets")
    stats = fold_counts(counts[counts["kind"] != "hist"])
    stats["bucket_sizes"] = histogram_rows(counts)
    top = counts[counts["kind"] == "large"].sort_values("value", ascending=False)
    stats["large_buckets"] = [{"bucket": k, "size": int(v)} for k, v in zip(top["key"][:20], top["value"][:20], strict=True)]
    stats["large_bucket_count"] = len(top)
    return {"buckets": stats}


def edges_step(
    docs: dd.DataFrame | None, nparts: int, sigs: Artifact, cands: Artifact, specs: dict[str, str], verify: str,
    threshold: float | None, ctx: StageContext, out: Path,
) -> dict[str, Any]:
    """Candidate pairs verified (signature estimate or exact Jaccard), one file per partition of ``u``.

    ``docs`` (``doc_id``, ``text``, ``source``) only for exact verification.
    """
    half = Artifact(out / "_half")
    a = ctx.compute(over_parts(docs, nparts, parts.attach_v, sigs, cands, half, specs), "edges (gather)")
    b = ctx.compute(over_parts(docs, nparts, parts.verify_u, sigs, half, Artifact(out), specs, verify, threshold), "edges (verify)")
    shutil.rmtree(half.path, ignore_errors=True)
    return {"edges": fold_counts(pd.concat([a, b]))}


def components_step(edges: Artifact, union_find_max_edges: int, max_iterations: int, ctx: StageContext, out: Path) -> dict[str, Any]:
    """Component labels by the partition of each node: union-find in memory below
    ``union_find_max_edges`` edges, else distributed min-label propagation."""
    files = [str(p) for p in edges.parts()]
    n_edges = sum(pq.ParquetFile(f).metadata.num_rows for f in files)
    if n_edges <= union_find_max_edges:
        uv = edges.read_all(["u", "v"])
        nodes, labels = union_find_components(uv["u"].to_numpy(), uv["v"].to_numpy())
        Artifact(out).write_by_part(pd.DataFrame({"node": nodes, "label": labels}), source=0, part_column=part_of(nodes))
        return {"components": {"method": "union_find", "edges": n_edges, "iterations": 0}}
    labels, iterations = label_propagation(files, ctx, max_iterations)
    ctx.compute(ctx.map_parts(labels, parts.write_labels, Artifact(out), meta=COUNTS_META, enforce_metadata=False), "components (write)")
    return {"components": {"method": "label_propagation", "edges": n_edges, "iterations": iterations}}


def clusters_step(
    docs: dd.DataFrame | None, nparts: int, sigs: Artifact, comps: Artifact, keep: str, ctx: StageContext, out: Path,
    threshold: float | None = None, specs: dict[str, str] | None = None,
) -> dict[str, Any]:
    """Members shuffled on their component label; the keepers of each cluster picked by ``keep``.

    A member is removed only when its similarity to its keeper reaches ``threshold`` (``None``:
    every member goes against the cluster's one keeper); ``specs`` (exact verification): the
    similarity is the exact Jaccard of the shingle sets. ``docs``: ``doc_id`` and the key column for
    ``keep = highest:<column>`` / ``lowest:<column>``, ``text`` and ``source`` with ``specs``.
    """
    members = over_parts(docs, nparts, parts.members_part, sigs, comps, keep, specs, meta=MEMBER_META)
    shuffled = ctx.shuffle(members, "label", "clusters", npartitions=max(nparts, 1))
    graph = ctx.map_parts(shuffled, parts.keeper_part, out, keep, threshold, specs is not None, meta=COUNTS_META, enforce_metadata=False)
    counts = ctx.compute(graph, "clusters")
    stats = fold_counts(counts[counts["kind"] != "hist"])
    stats["cluster_sizes"] = histogram_rows(counts)
    return {"clusters": stats}


def label_propagation(files: list[str], ctx: StageContext, max_iterations: int) -> tuple[dd.DataFrame, int]:
    """``(labels, rounds)``: connected components of the edge files as Dask joins
    (:func:`~curation.dedup.components.propagate` until no label changes). Each round's count of
    changed labels is a :meth:`~StageContext.compute`, whose wait, watched, covers the persisted
    frames it reads (:func:`~pipelines.progress.persist`)."""
    edges = dd.from_map(_read_edges, files, meta=EDGE_META, enforce_metadata=False)
    sym = persist(dd.concat([edges, edges.rename(columns={"u": "v", "v": "u"})[["u", "v"]]]), ctx.client)
    labels = persist(initial_labels(sym), ctx.client)
    for iteration in range(1, max_iterations + 1):
        new = persist(propagate(sym, labels), ctx.client)
        changed = int(ctx.compute((new["label"] != new["old"]).sum(), f"components (round {iteration})"))
        labels = new[["node", "label"]]
        if changed == 0:
            return labels, iteration
    raise RuntimeError(f"connected components did not converge in {max_iterations} iterations; raise max_iterations")


def _read_edges(path: str) -> pd.DataFrame:
    return read_parquet(path, ["u", "v"]).to_pandas()
