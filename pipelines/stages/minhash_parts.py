"""The partition functions of ``minhash_dedup``'s sub-steps (run on the workers).

Each gets its partition number first (``StageContext.map_parts``, or ``dd.from_map`` over the
partition numbers where no document column is needed), writes its share of an
:class:`~pipelines.kit.Artifact` and returns a few rows of counts (``minhash_stats.COUNTS_META``).
Documents are addressed by ``uid = partition << 32 | row``; rows meant for another partition are
written by partition (``Artifact.write_by_part``), so every join with the signatures is a local
read of one partition's file.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from curation.dedup.lsh import (
    band_rows,
    exact_jaccard,
    keep_column,
    part_of,
    pick_keepers,
    star_edges,
    uid_of,
    verify_mask,
)
from curation.dedup.minhash import MinHashParams, signatures
from curation.dedup.minhash_stats import count_rows, exact_shingle_sets, size_histogram
from curation.dedup.shingles import ShingleSpec, has_words
from curation.files import read_parquet
from curation.schema import DROP_REASON
from pipelines.kit import Artifact, atomic_path
from pipelines.removal import REMOVAL_META

_INT_COLUMNS = ("u", "v", "node", "label")


def sign_part(part: int, df: pd.DataFrame, out: Artifact, opts: dict[str, Any]) -> pd.DataFrame:
    """Signatures of the selected documents of one partition (``opts``: the signature settings).

    A document without a word (punctuation, symbols, emoji only: :func:`has_words`) gets none: it
    shares no shingle with any document, so it is never a near-duplicate (exact dedup removes its copies)."""
    rows = np.arange(len(df), dtype=np.int64)
    src = df["source"].astype(object).fillna("").to_numpy()
    sources, default, by_source = opts["sources"], opts["shingle"], opts["source_shingle"]
    selected = np.ones(len(df), dtype=bool) if not sources else np.isin(src, list(sources))
    texts = df["text"].astype(object).fillna("").to_numpy()
    in_sources = selected.copy()
    selected &= np.fromiter((has_words(t) for t in texts), dtype=bool, count=len(texts))
    sig = np.zeros((len(df), opts["num_perm"]), dtype=np.uint32)
    salt = np.zeros(len(df), dtype=np.uint64)
    counts = []
    for spec_text in sorted({by_source.get(s, default) for s in set(src[selected])}):
        spec = ShingleSpec.parse(spec_text)
        idx = np.flatnonzero(selected & np.array([by_source.get(s, default) == spec_text for s in src]))
        params = MinHashParams(opts["num_perm"], opts["seed"], opts["scheme"], opts["hash"], spec)
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
        "sig": pa.FixedSizeListArray.from_arrays(pa.array(sig[idx].ravel(), pa.uint32()), opts["num_perm"]),
    })
    with atomic_path(out.part_path(part)) as tmp:
        # Signatures are uniformly random 32-bit values: compressing them costs time and saves nothing.
        codecs = {name: ("none" if name == "sig" else "zstd") for name in table.column_names}
        pq.write_table(table, tmp, compression=codecs, use_dictionary=[n for n in table.column_names if n != "sig"])
    by_source_count = pd.Series(src[idx]).value_counts()
    return count_rows([
        ("documents", "", len(idx)), ("skipped_by_source", "", len(df) - int(in_sources.sum())),
        ("skipped_no_words", "", int(in_sources.sum()) - len(idx)),
        *[("by_source", k, v) for k, v in by_source_count.items()], *[("by_shingle", k, v) for k, v in counts],
    ])


def band_part(part: int, sigs: Artifact, bands: int, rows: int) -> pd.DataFrame:
    uids, sig, table = read_sigs(sigs, part, ["salt"])
    return band_rows(uids, sig, bands, rows, table.column("salt").to_numpy())


def star_part(number: int, df: pd.DataFrame, out: Artifact, large: int) -> pd.DataFrame:
    """Star edges of the buckets of one shuffle partition, written by the partition of ``v``."""
    edges, sizes = star_edges(df)
    out.write_by_part(edges, source=number, part_column=part_of(edges["v"].to_numpy()))
    rows = [("candidates", "", len(edges)), ("buckets_with_pairs", "", len(sizes))]
    rows += [("hist", k, v) for k, v in size_histogram(sizes).items()]
    if len(sizes) and sizes.max() > large:
        big = df.groupby(["band", "band_hash"]).size()
        big = big[big > large]
        rows += [("large", f"band {b} hash {h:x}", int(n)) for (b, h), n in big.items()]
    return count_rows(rows)


def attach_v(part: int, docs: pd.DataFrame | None, sigs: Artifact, cands: Artifact, half: Artifact, specs: dict[str, str]) -> pd.DataFrame:
    """Edges whose ``v`` lives in this partition: dedupe, attach v's signature, regroup by u."""
    edges = read_group(cands, part, ["u", "v"]).drop_duplicates()
    uids, sig, _ = read_sigs(sigs, part, ["source"])
    pos = np.searchsorted(uids, edges["v"].to_numpy())
    edges["sig_v"] = [s.tobytes() for s in sig[pos]]
    if docs is not None:
        edges["sh_v"] = exact_shingle_sets(docs, edges["v"].to_numpy() & 0xFFFFFFFF, specs)
    half.write_by_part(edges, source=part, part_column=part_of(edges["u"].to_numpy()))
    return count_rows([("candidate_pairs", "", len(edges))])


def verify_u(
    part: int, docs: pd.DataFrame | None, sigs: Artifact, half: Artifact, out: Artifact, specs: dict[str, str], verify: str, threshold: float | None
) -> pd.DataFrame:
    """Edges whose ``u`` lives in this partition: attach u's signature, keep the verified ones."""
    edges = read_group(half, part, ["u", "v", "sig_v"] + (["sh_v"] if docs is not None else []))
    uids, sig, _ = read_sigs(sigs, part, [])
    sig_u = sig[np.searchsorted(uids, edges["u"].to_numpy())] if len(edges) else np.zeros((0, sig.shape[1]), np.uint32)
    sig_v = np.stack([np.frombuffer(b, dtype=np.uint32) for b in edges["sig_v"]]) if len(edges) else sig_u
    est, keep = verify_mask(sig_u, sig_v, threshold if verify == "signature" else None)
    result = pd.DataFrame({"u": edges["u"].to_numpy(dtype=np.int64), "v": edges["v"].to_numpy(dtype=np.int64), "jaccard_estimate": est})
    if verify == "exact":
        sh_u = exact_shingle_sets(docs, result["u"].to_numpy() & 0xFFFFFFFF, specs)
        result["jaccard"] = [exact_jaccard(np.frombuffer(a, np.uint64), np.frombuffer(b, np.uint64)) for a, b in zip(sh_u, edges["sh_v"], strict=True)]
        keep = result["jaccard"].to_numpy() >= threshold - 1e-12
    kept = result[keep].sort_values(["u", "v"]).reset_index(drop=True)
    out.write_part(part, kept)
    return count_rows([("verified_pairs", "", len(kept)), ("rejected_pairs", "", len(result) - len(kept))])


def write_labels(number: int, df: pd.DataFrame, out: Artifact) -> pd.DataFrame:
    """Component labels of one partition of the distributed propagation, by the node's partition."""
    out.write_by_part(df[["node", "label"]], source=number, part_column=part_of(df["node"].to_numpy()))
    return count_rows([("nodes", "", len(df))])


def members_part(
    part: int, docs: pd.DataFrame | None, sigs: Artifact, comps: Artifact, keep: str, specs: dict[str, str] | None = None
) -> pd.DataFrame:
    """The clustered documents of one partition with their label, keep key and, with ``specs``
    (exact verification), their shingle-hash sets (``sh``) for the Jaccard to their keeper."""
    comp = read_group(comps, part, ["node", "label"])
    uids, sig, table = read_sigs(sigs, part, ["doc_id", "source", "length"])
    pos = np.searchsorted(uids, comp["node"].to_numpy())
    rows = comp["node"].to_numpy() & 0xFFFFFFFF
    if keep_column(keep) and docs is not None:
        column = docs[keep_column(keep)]
        key = pd.to_numeric(column.iloc[rows], errors="coerce").to_numpy(dtype=np.float64)
        key = -key if keep.startswith("lowest:") else key  # larger wins in pick_keepers
    else:
        key = table.column("length").to_numpy()[pos].astype(np.float64)
    sh = exact_shingle_sets(docs, rows, specs) if specs is not None and docs is not None else [b""] * len(comp)
    return pd.DataFrame({
        "label": comp["label"].to_numpy(dtype=np.int64), "uid": comp["node"].to_numpy(dtype=np.int64),
        "doc_id": table.column("doc_id").to_numpy(zero_copy_only=False)[pos].astype(object),
        "source": table.column("source").to_numpy(zero_copy_only=False)[pos].astype(object),
        "key": key, "sig": pd.Series([s.tobytes() for s in sig[pos]], dtype=object).to_numpy(),
        "sh": pd.Series(sh, dtype=object).to_numpy(),
    })


def keeper_part(number: int, df: pd.DataFrame, out: Path, keep: str, threshold: float | None, exact: bool) -> pd.DataFrame:
    """The keepers of each cluster of one shuffle partition: removals and cluster ids, by partition.

    A member goes only when its own similarity to its keeper reaches ``threshold`` (exact Jaccard
    of the shingle sets with ``exact``); the others of the cluster keep their own keepers."""
    picked = pick_keepers(df if exact else df.drop(columns=["sh"], errors="ignore"), keep, threshold)
    parts = part_of(picked["uid"].to_numpy())
    picked["_part"] = parts
    removed = picked[picked[DROP_REASON].notna()]
    Artifact(out / "removals").write_by_part(removed[list(REMOVAL_META.columns)], source=number)
    Artifact(out / "members").write_by_part(picked[["doc_id", "minhash_cluster"]], source=number, part_column=parts)
    sizes = df.groupby("label").size().to_numpy()
    src = df.set_index("uid").loc[removed["uid"], "source"] if len(removed) else pd.Series(dtype=object)
    rows = [("clusters", "", len(sizes)), ("clustered_documents", "", len(df)), ("removed", "", len(removed)),
            ("keepers", "", len(df) - len(removed))]
    rows += [("hist", k, v) for k, v in size_histogram(sizes).items()]
    rows += [("removed_by_source", k, v) for k, v in src.value_counts().items()]
    return count_rows(rows)


def set_cluster(number: int, df: pd.DataFrame, members: Artifact) -> pd.DataFrame:
    """The output partition: each document's ``minhash_cluster`` (None outside every cluster)."""
    df = df.copy()
    found = read_group(members, number, ["doc_id", "minhash_cluster"])
    by_id = dict(zip(found["doc_id"], found["minhash_cluster"], strict=True))
    df["minhash_cluster"] = pd.Series([by_id.get(d) for d in df["doc_id"]], index=df.index, dtype=object)
    return df


def without_docs(part: int, fn: Any, *args: Any) -> pd.DataFrame:
    """``fn(part, None, *args)``: a partition function of a step that reads no document column."""
    return fn(part, None, *args)


def read_sigs(sigs: Artifact, part: int, columns: list[str]) -> tuple[np.ndarray, np.ndarray, pa.Table]:
    """``(uids, signatures as an (n, num_perm) array, the table)`` of one partition."""
    table = read_parquet(sigs.part_path(part), ["uid", "sig", *columns])
    sig_col = table.column("sig").combine_chunks()
    width = sig_col.type.list_size
    sig = sig_col.flatten().to_numpy().reshape(-1, width) if len(sig_col) else np.zeros((0, width), dtype=np.uint32)
    return table.column("uid").to_numpy(), sig, table


def read_group(artifact: Artifact, part: int, columns: list[str]) -> pd.DataFrame:
    """``artifact.read_group``, or an empty frame of ``columns`` when nothing was written for ``part``."""
    found = artifact.read_group(part, columns)
    if found is not None:
        return found
    return pd.DataFrame({c: pd.Series(dtype="int64" if c in _INT_COLUMNS else object) for c in columns})
