"""``minhash_dedup``: remove near-duplicates (MinHash + LSH), keep one document per cluster.

signatures → buckets (shuffle on ``(band, band_hash)``, star edges) → edges (verified) →
components (union-find below ``union_find_max_edges`` edges, else distributed min-label
propagation) → clusters (keeper per cluster) → remove by ``doc_id`` in place.

Each sub-step is ``ctx.cached`` with only the parameters it depends on, so changing ``keep``
re-runs the keeper step alone and changing ``verify_threshold`` keeps signatures and buckets.
Intermediate files are grouped by input partition (``pNNNNN/from-MMMMM.parquet``), so every
join with the signatures is a local read of one partition's file: only edges move.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import dask
import dask.dataframe as dd
import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from curation.config import ConfigError, StageConfig, check_choice, check_range
from curation.dedup.components import union_find_components
from curation.dedup.lsh import (
    band_rows,
    check_keep,
    exact_jaccard,
    lsh_params,
    part_of,
    pick_keepers,
    s_curve,
    star_edges,
    uid_of,
    verify_mask,
)
from curation.dedup.minhash import HASHES, SCHEMES, MinHashParams, signatures
from curation.dedup.minhash_stats import (
    COUNTS_META,
    count_rows,
    exact_shingle_sets,
    fold_counts,
    histogram_rows,
    size_histogram,
)
from curation.dedup.shingles import ShingleSpec
from curation.schema import DROP_REASON, with_columns
from pipelines.io import write_frame, write_json
from pipelines.progress import compute_with_progress
from pipelines.removal import REMOVAL_META, mark_removed

VERIFY = ("signature", "exact", "none")
BAND_META = pd.DataFrame({"band": pd.Series(dtype="int64"), "band_hash": pd.Series(dtype="int64"), "uid": pd.Series(dtype="int64")})
MEMBER_META = pd.DataFrame(
    {
        "label": pd.Series(dtype="int64"), "uid": pd.Series(dtype="int64"), "doc_id": pd.Series(dtype=object),
        "source": pd.Series(dtype=object), "key": pd.Series(dtype="float64"), "sig": pd.Series(dtype=object),
    }
)


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
    sources: tuple[str, ...] = ()
    verify: str = "signature"
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


class MinHashDedupStage:
    name = "minhash_dedup"
    version = "2"  # 2: script:5 shingles by default
    config_cls = MinHashDedupConfig
    requires = ("doc_id", "text", "source")
    produces: dict[str, Any] = {"minhash_cluster": object}

    def build(self, docs: dd.DataFrame, cfg: MinHashDedupConfig, ctx: Any) -> dd.DataFrame:
        if cfg.keep.startswith("highest:") and cfg.keep.split(":", 1)[1] not in docs.columns:
            raise ConfigError(f"minhash_dedup.keep = {cfg.keep!r}: the input has no column {cfg.keep.split(':', 1)[1]!r}")
        nparts = docs.npartitions
        bands, rows = cfg.lsh()
        p_sig = {
            "version": self.version, "num_perm": cfg.num_perm, "seed": cfg.seed, "scheme": cfg.scheme, "hash": cfg.hash,
            "shingle": cfg.shingle, "source_shingle": cfg.source_shingle, "sources": sorted(cfg.sources),
        }
        p_buckets = {**p_sig, "bands": bands, "rows": rows, "large_bucket": cfg.large_bucket}
        p_edges = {**p_buckets, "verify": cfg.verify, "verify_threshold": _verify_threshold(cfg)}
        p_clusters = {**p_edges, "keep": cfg.keep}
        run = _Runner(ctx, nparts)
        sig_dir = ctx.cached("signatures", p_sig, lambda out: run.signatures(docs, cfg, out))
        cand_dir = ctx.cached("buckets", p_buckets, lambda out: run.buckets(sig_dir, bands, rows, cfg, out))
        edge_dir = ctx.cached("edges", p_edges, lambda out: run.edges(docs, sig_dir, cand_dir, cfg, out))
        comp_dir = ctx.cached("components", p_edges, lambda out: run.components(edge_dir, cfg, out))
        clus_dir = ctx.cached("clusters", p_clusters, lambda out: run.clusters(docs, sig_dir, comp_dir, cfg, out))
        ctx.extra_stats["lsh"] = {
            "bands": bands, "rows": rows, "lsh_threshold": cfg.effective_lsh_threshold(), "threshold": cfg.threshold,
            "verify": cfg.verify, "verify_threshold": _verify_threshold(cfg), "s_curve": s_curve(bands, rows),
        }
        for name, folder in [("signatures", sig_dir), ("buckets", cand_dir), ("edges", edge_dir), ("components", comp_dir), ("clusters", clus_dir)]:
            ctx.extra_stats[name] = json.loads((folder / "stats.json").read_text())
        marked = mark_removed(docs, clus_dir / "removals")
        meta = with_columns(marked._meta, self.produces)
        return marked.map_partitions(_set_cluster, str(clus_dir / "members"), meta=meta)


def _verify_threshold(cfg: MinHashDedupConfig) -> float | None:
    if cfg.verify == "none":
        return None
    return cfg.threshold if cfg.verify == "exact" else cfg.effective_verify_threshold()


class _Runner:
    """The sub-steps; each writes its folder and a ``stats.json`` there."""

    def __init__(self, ctx: Any, nparts: int) -> None:
        self.ctx = ctx
        self.nparts = nparts

    def compute(self, collection: Any, label: str) -> pd.DataFrame:
        out = compute_with_progress(collection, self.ctx.client, f"minhash_dedup: {label}", self.ctx.quiet)
        return out if isinstance(out, pd.DataFrame) else pd.concat(list(out))

    def over_parts(self, docs: dd.DataFrame | None, fn: Callable[..., pd.DataFrame], *args: Any) -> dd.DataFrame:
        """``fn(part_number, docs_partition_or_None, *args)`` for every input partition."""
        if docs is not None:
            return docs.map_partitions(_with_number, fn, *args, meta=COUNTS_META, enforce_metadata=False)
        return dd.from_map(_without_docs, list(range(self.nparts)), args=[fn, *args], meta=COUNTS_META, enforce_metadata=False)

    def signatures(self, docs: dd.DataFrame, cfg: MinHashDedupConfig, out: Path) -> None:
        cols = ["doc_id", "text", "source"]
        opts = {k: v for k, v in cfg.to_dict().items() if k in ("num_perm", "seed", "scheme", "hash", "shingle", "source_shingle", "sources")}
        counts = self.compute(docs[cols].map_partitions(_with_number, _sign_part, str(out), opts, meta=COUNTS_META, enforce_metadata=False), "signatures")
        write_json(out / "signatures.json", {
            "num_perm": cfg.num_perm, "seed": cfg.seed, "scheme": cfg.scheme, "hash": cfg.hash, "shingle": cfg.shingle,
            "source_shingle": cfg.source_shingle, "columns": {"uid": "partition << 32 | row", "sig": f"uint32[{cfg.num_perm}]"},
            "load": "datasketch.LeanMinHash(seed=seed, hashvalues=row['sig'], scheme=scheme)",
        })
        write_json(out / "stats.json", fold_counts(counts))

    def buckets(self, sig_dir: Path, bands: int, rows: int, cfg: MinHashDedupConfig, out: Path) -> None:
        parts = list(range(self.nparts))
        band = dd.from_map(_band_part, parts, args=[str(sig_dir), bands, rows], meta=BAND_META, enforce_metadata=False)
        shuffled = band.shuffle(on=["band", "band_hash"], npartitions=max(self.nparts, 1))
        counts = self.compute(shuffled.map_partitions(_star_part, str(out), cfg.large_bucket, meta=COUNTS_META, enforce_metadata=False), "buckets")
        stats = fold_counts(counts[counts["kind"] != "hist"])
        stats["bucket_sizes"] = histogram_rows(counts)
        large = counts[counts["kind"] == "large"].sort_values("value", ascending=False)
        stats["large_buckets"] = [{"bucket": k, "size": int(v)} for k, v in zip(large["key"][:20], large["value"][:20], strict=True)]
        stats["large_bucket_count"] = len(large)
        write_json(out / "stats.json", stats)

    def edges(self, docs: dd.DataFrame, sig_dir: Path, cand_dir: Path, cfg: MinHashDedupConfig, out: Path) -> None:
        exact = cfg.verify == "exact"
        source = docs[["doc_id", "text", "source"]] if exact else None
        specs = _specs(cfg)
        half = out / "_half"
        a = self.compute(self.over_parts(source, _attach_v, str(sig_dir), str(cand_dir), str(half), specs), "edges (gather)")
        b = self.compute(self.over_parts(source, _verify_u, str(sig_dir), str(half), str(out), specs, cfg.verify, _verify_threshold(cfg)), "edges (verify)")
        _rmtree(half)
        write_json(out / "stats.json", fold_counts(pd.concat([a, b])))

    def components(self, edge_dir: Path, cfg: MinHashDedupConfig, out: Path) -> None:
        files = sorted(str(p) for p in edge_dir.glob("part-*.parquet"))
        n_edges = sum(pq.ParquetFile(f).metadata.num_rows for f in files)
        if n_edges <= cfg.union_find_max_edges:
            edges = pd.concat([pq.read_table(f, columns=["u", "v"]).to_pandas() for f in files]) if files else pd.DataFrame({"u": [], "v": []})
            nodes, labels = union_find_components(edges["u"].to_numpy(), edges["v"].to_numpy())
            _write_by_part(pd.DataFrame({"node": nodes, "label": labels}), part_of(nodes), out, 0)
            stats = {"method": "union_find", "edges": n_edges, "iterations": 0}
        else:
            labels, iterations = _label_propagation(files, self.ctx.client, cfg.max_iterations)
            self.compute(labels.map_partitions(_write_labels, str(out), meta=COUNTS_META, enforce_metadata=False), "components (write)")
            stats = {"method": "label_propagation", "edges": n_edges, "iterations": iterations}
        write_json(out / "stats.json", stats)

    def clusters(self, docs: dd.DataFrame, sig_dir: Path, comp_dir: Path, cfg: MinHashDedupConfig, out: Path) -> None:
        column = cfg.keep.split(":", 1)[1] if cfg.keep.startswith("highest:") else None
        source = docs[["doc_id", column]] if column else None
        parts = list(range(self.nparts))
        if source is not None:
            members = source.map_partitions(_with_number, _members_part, str(sig_dir), str(comp_dir), cfg.keep, meta=MEMBER_META, enforce_metadata=False)
        else:
            members = dd.from_map(_without_docs, parts, args=[_members_part, str(sig_dir), str(comp_dir), cfg.keep], meta=MEMBER_META, enforce_metadata=False)
        shuffled = members.shuffle(on="label", npartitions=max(self.nparts, 1))
        counts = self.compute(shuffled.map_partitions(_keeper_part, str(out), cfg.keep, meta=COUNTS_META, enforce_metadata=False), "clusters")
        stats = fold_counts(counts[counts["kind"] != "hist"])
        stats["cluster_sizes"] = histogram_rows(counts)
        write_json(out / "stats.json", stats)


# --- partition functions (run on the workers) -------------------------------------------------


def _with_number(df: pd.DataFrame, fn: Callable[..., pd.DataFrame], *args: Any, partition_info: dict | None = None) -> pd.DataFrame:
    return fn((partition_info or {}).get("number", 0), df, *args)


def _without_docs(part: int, fn: Callable[..., pd.DataFrame], *args: Any) -> pd.DataFrame:
    return fn(part, None, *args)


def _sign_part(part: int, df: pd.DataFrame, out: str, opts: dict[str, Any]) -> pd.DataFrame:
    # The recipe was validated on the client; skip from_dict (its LSH check costs 0.1 s a call).
    cfg = MinHashDedupConfig(**opts)
    rows = np.arange(len(df), dtype=np.int64)
    src = df["source"].astype(object).fillna("").to_numpy()
    selected = np.ones(len(df), dtype=bool) if not cfg.sources else np.isin(src, list(cfg.sources))
    texts = df["text"].astype(object).fillna("").to_numpy()
    sig = np.zeros((len(df), cfg.num_perm), dtype=np.uint32)
    salt = np.zeros(len(df), dtype=np.uint64)
    counts = []
    for spec_text in sorted({cfg.source_shingle.get(s, cfg.shingle) for s in set(src[selected])}):
        spec = ShingleSpec.parse(spec_text)
        idx = np.flatnonzero(selected & np.array([cfg.source_shingle.get(s, cfg.shingle) == spec_text for s in src]))
        params = MinHashParams(cfg.num_perm, cfg.seed, cfg.scheme, cfg.hash, spec)
        sig[idx] = signatures(list(texts[idx]), params)
        salt[idx] = spec.salt
        counts.append(("shingle:" + spec_text, len(idx)))
    idx = np.flatnonzero(selected)
    table = pa.table({
        "uid": uid_of(part, rows[idx]),
        "doc_id": pa.array(df["doc_id"].astype(object).to_numpy()[idx], pa.string()),
        "source": pa.array(src[idx], pa.string()),
        "length": np.fromiter((len(t) for t in texts[idx]), dtype=np.int64, count=len(idx)),
        "salt": salt[idx],
        "sig": pa.FixedSizeListArray.from_arrays(pa.array(sig[idx].ravel(), pa.uint32()), cfg.num_perm),
    })
    _write_table(table, Path(out) / f"part-{part:05d}.parquet")
    by_source = pd.Series(src[idx]).value_counts()
    return count_rows([("documents", "", len(idx)), ("skipped_by_source", "", len(df) - len(idx)), *[("by_source", k, v) for k, v in by_source.items()], *[("by_shingle", k, v) for k, v in counts]])


def _band_part(part: int, sig_dir: str, bands: int, rows: int) -> pd.DataFrame:
    uids, sig, table = _read_sigs(sig_dir, part, ["salt"])
    return band_rows(uids, sig, bands, rows, table.column("salt").to_numpy())


def _star_part(df: pd.DataFrame, out: str, large: int, partition_info: dict | None = None) -> pd.DataFrame:
    number = (partition_info or {}).get("number", 0)
    edges, sizes = star_edges(df)
    _write_by_part(edges, part_of(edges["v"].to_numpy()), Path(out), number)
    rows = [("candidates", "", len(edges)), ("buckets_with_pairs", "", len(sizes))]
    rows += [("hist", k, v) for k, v in size_histogram(sizes).items()]
    if len(sizes) and sizes.max() > large:
        big = df.groupby(["band", "band_hash"]).size()
        big = big[big > large]
        rows += [("large", f"band {b} hash {h:x}", int(n)) for (b, h), n in big.items()]
    return count_rows(rows)


def _attach_v(part: int, docs: pd.DataFrame | None, sig_dir: str, cand_dir: str, half: str, specs: dict[str, str]) -> pd.DataFrame:
    """Edges whose ``v`` lives in this partition: dedupe, attach v's signature, regroup by u."""
    edges = _read_group(Path(cand_dir), part, ["u", "v"]).drop_duplicates()
    uids, sig, table = _read_sigs(sig_dir, part, ["source"])
    pos = np.searchsorted(uids, edges["v"].to_numpy())
    edges["sig_v"] = [s.tobytes() for s in sig[pos]]
    if docs is not None:
        edges["sh_v"] = exact_shingle_sets(docs, edges["v"].to_numpy() & 0xFFFFFFFF, specs)
    _write_by_part(edges, part_of(edges["u"].to_numpy()), Path(half), part)
    return count_rows([("candidate_pairs", "", len(edges))])


def _verify_u(
    part: int, docs: pd.DataFrame | None, sig_dir: str, half: str, out: str, specs: dict[str, str], verify: str, threshold: float | None
) -> pd.DataFrame:
    """Edges whose ``u`` lives in this partition: attach u's signature, keep the verified ones."""
    edges = _read_group(Path(half), part, ["u", "v", "sig_v"] + (["sh_v"] if docs is not None else []))
    uids, sig, _ = _read_sigs(sig_dir, part, [])
    sig_u = sig[np.searchsorted(uids, edges["u"].to_numpy())] if len(edges) else np.zeros((0, sig.shape[1]), np.uint32)
    sig_v = np.stack([np.frombuffer(b, dtype=np.uint32) for b in edges["sig_v"]]) if len(edges) else sig_u
    est, keep = verify_mask(sig_u, sig_v, threshold if verify == "signature" else None)
    result = pd.DataFrame({"u": edges["u"].to_numpy(dtype=np.int64), "v": edges["v"].to_numpy(dtype=np.int64), "jaccard_estimate": est})
    if verify == "exact":
        sh_u = exact_shingle_sets(docs, result["u"].to_numpy() & 0xFFFFFFFF, specs)
        result["jaccard"] = [exact_jaccard(np.frombuffer(a, np.uint64), np.frombuffer(b, np.uint64)) for a, b in zip(sh_u, edges["sh_v"], strict=True)]
        keep = result["jaccard"].to_numpy() >= threshold - 1e-12
    kept = result[keep].sort_values(["u", "v"]).reset_index(drop=True)
    write_frame(kept, Path(out) / f"part-{part:05d}.parquet")
    return count_rows([("verified_pairs", "", len(kept)), ("rejected_pairs", "", len(result) - len(kept))])


def _members_part(part: int, docs: pd.DataFrame | None, sig_dir: str, comp_dir: str, keep: str) -> pd.DataFrame:
    comp = _read_group(Path(comp_dir), part, ["node", "label"])
    uids, sig, table = _read_sigs(sig_dir, part, ["doc_id", "source", "length"])
    pos = np.searchsorted(uids, comp["node"].to_numpy())
    if keep.startswith("highest:") and docs is not None:
        column = docs[keep.split(":", 1)[1]]
        key = pd.to_numeric(column.iloc[comp["node"].to_numpy() & 0xFFFFFFFF], errors="coerce").to_numpy(dtype=np.float64)
    else:
        key = table.column("length").to_numpy()[pos].astype(np.float64)
    return pd.DataFrame({
        "label": comp["label"].to_numpy(dtype=np.int64), "uid": comp["node"].to_numpy(dtype=np.int64),
        "doc_id": table.column("doc_id").to_numpy(zero_copy_only=False)[pos].astype(object),
        "source": table.column("source").to_numpy(zero_copy_only=False)[pos].astype(object),
        "key": key, "sig": pd.Series([s.tobytes() for s in sig[pos]], dtype=object).to_numpy(),
    })


def _keeper_part(df: pd.DataFrame, out: str, keep: str, partition_info: dict | None = None) -> pd.DataFrame:
    number = (partition_info or {}).get("number", 0)
    picked = pick_keepers(df, keep)
    parts = part_of(picked["uid"].to_numpy())
    picked["_part"] = parts
    removed = picked[picked[DROP_REASON].notna()]
    _write_by_part(removed[list(REMOVAL_META.columns)], removed["_part"].to_numpy(), Path(out) / "removals", number)
    _write_by_part(picked[["doc_id", "minhash_cluster"]], parts, Path(out) / "members", number)
    sizes = df.groupby("label").size().to_numpy()
    src = df.set_index("uid").loc[removed["uid"], "source"] if len(removed) else pd.Series(dtype=object)
    rows = [("clusters", "", len(sizes)), ("clustered_documents", "", len(df)), ("removed", "", len(removed))]
    rows += [("hist", k, v) for k, v in size_histogram(sizes).items()]
    rows += [("removed_by_source", k, v) for k, v in src.value_counts().items()]
    return count_rows(rows)


def _write_labels(df: pd.DataFrame, out: str, partition_info: dict | None = None) -> pd.DataFrame:
    number = (partition_info or {}).get("number", 0)
    _write_by_part(df[["node", "label"]], part_of(df["node"].to_numpy()), Path(out), number)
    return count_rows([("nodes", "", len(df))])


def _set_cluster(df: pd.DataFrame, folder: str, partition_info: dict | None = None) -> pd.DataFrame:
    number = (partition_info or {}).get("number", 0)
    df = df.copy()
    members = _read_group(Path(folder), number, ["doc_id", "minhash_cluster"])
    by_id = dict(zip(members["doc_id"], members["minhash_cluster"], strict=True))
    df["minhash_cluster"] = pd.Series([by_id.get(d) for d in df["doc_id"]], index=df.index, dtype=object)
    return df


# --- distributed connected components ---------------------------------------------------------


def _label_propagation(files: list[str], client: Any, max_iterations: int) -> tuple[dd.DataFrame, int]:
    """Min-label propagation with pointer jumping, as Dask joins over the edge list."""
    meta = pd.DataFrame({"u": pd.Series(dtype="int64"), "v": pd.Series(dtype="int64")})
    edges = dd.from_map(_read_edges, files, meta=meta, enforce_metadata=False)
    sym = _persist(dd.concat([edges, edges.rename(columns={"u": "v", "v": "u"})[["u", "v"]]]), client)
    labels = sym.groupby("u")["v"].min().reset_index().rename(columns={"u": "node", "v": "label"})
    labels["label"] = labels[["node", "label"]].min(axis=1)
    labels = _persist(labels, client)
    for iteration in range(1, max_iterations + 1):
        best = sym.merge(labels, left_on="v", right_on="node")[["u", "label"]].groupby("u")["label"].min()
        best = best.reset_index().rename(columns={"u": "node", "label": "nl"})
        new = labels.merge(best, on="node", how="left")
        new["old"] = new["label"]
        new["label"] = new[["label", "nl"]].min(axis=1).astype("int64")
        # Pointer jumping: a node's label is a node of the same component; take that node's label.
        jump = new[["node", "label"]].rename(columns={"node": "label", "label": "l2"})
        new = new[["node", "label", "old"]].merge(jump, on="label", how="left")
        new["label"] = new[["label", "l2"]].min(axis=1).astype("int64")
        new = _persist(new[["node", "label", "old"]], client)
        changed = int((new["label"] != new["old"]).sum().compute())
        labels = new[["node", "label"]]
        if changed == 0:
            return labels, iteration
    raise RuntimeError(f"connected components did not converge in {max_iterations} iterations; raise max_iterations")


def _persist(collection: dd.DataFrame, client: Any) -> dd.DataFrame:
    return client.persist(collection) if client is not None else dask.persist(collection)[0]


def _read_edges(path: str) -> pd.DataFrame:
    return pq.read_table(path, columns=["u", "v"]).to_pandas()


# --- small file helpers -----------------------------------------------------------------------


def _read_sigs(sig_dir: str, part: int, columns: list[str]) -> tuple[np.ndarray, np.ndarray, pa.Table]:
    table = pq.read_table(Path(sig_dir) / f"part-{part:05d}.parquet", columns=["uid", "sig", *columns])
    sig_col = table.column("sig").combine_chunks()
    width = sig_col.type.list_size
    sig = sig_col.flatten().to_numpy().reshape(-1, width) if len(sig_col) else np.zeros((0, width), dtype=np.uint32)
    return table.column("uid").to_numpy(), sig, table


def _specs(cfg: MinHashDedupConfig) -> dict[str, str]:
    """Shingle spec per source ("" = the default), as plain strings for the task graph."""
    return {**dict(cfg.source_shingle), "": cfg.shingle}


def _write_by_part(df: pd.DataFrame, parts: np.ndarray, folder: Path, number: int) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    if len(df) == 0:
        return
    order = np.argsort(parts, kind="stable")
    df, parts = df.iloc[order].reset_index(drop=True), parts[order]
    cuts = np.flatnonzero(np.diff(parts)) + 1
    for lo, hi in zip(np.r_[0, cuts], np.r_[cuts, len(parts)], strict=True):
        write_frame(df.iloc[lo:hi].reset_index(drop=True), folder / f"p{int(parts[lo]):05d}" / f"from-{number:05d}.parquet")


def _read_group(folder: Path, part: int, columns: list[str]) -> pd.DataFrame:
    files = sorted((folder / f"p{part:05d}").glob("from-*.parquet"))
    if not files:
        return pd.DataFrame({c: pd.Series(dtype="int64" if c in ("u", "v", "node", "label") else object) for c in columns})
    return pd.concat([pq.read_table(f, columns=columns).to_pandas() for f in files], ignore_index=True)


def _write_table(table: pa.Table, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    # Signatures are uniformly random 32-bit values: compressing them costs time and saves nothing.
    codecs = {name: ("none" if name == "sig" else "zstd") for name in table.column_names}
    pq.write_table(table, tmp, compression=codecs, use_dictionary=[n for n in table.column_names if n != "sig"])
    os.replace(tmp, path)


def _rmtree(path: Path) -> None:
    import shutil

    shutil.rmtree(path, ignore_errors=True)


STAGE = MinHashDedupStage()
