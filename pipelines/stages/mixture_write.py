"""The mixture's shards step: explode documents into shard rows, exchange them by shard through files, write shards.

:func:`write_all_shards` runs two graphs. :func:`explode_partition` turns each input partition
into one row per (document, phase, group) it enters, keyed ``phase|group|shard``, and
:func:`route_partition` writes those rows grouped by the output partition of their shard
(``Artifact.write_routed``: one Arrow file per input partition in ``_exchange/``, one record
batch per output partition). Then one task per
output partition reads its rows (:func:`write_destination`), builds and writes every shard in it
(and its packing file) and returns one record per shard with its path, size, sha256, documents and
tokens — the only thing that reaches the client.

The exchange goes through the stage's folder rather than a Dask shuffle: every kept document's
text crosses once per phase, and as Arrow batches it is written and read by the workers that hold it,
never pickled through the scheduler's transfers (on 2 workers the Dask shuffle made this step
slower than one process; benchmarks/recipe). A cluster run already needs a shared folder for the
stage outputs. Shards do not depend on the order rows arrive in (``build_shard`` orders them by a
seeded hash of the document id).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import dask.dataframe as dd
import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from curation.files import atomic_path, part_name
from curation.mixture.annotate import annotate
from curation.mixture.groups import (
    PROVENANCE_COLUMNS,
    REPO_GROUP,
    THREADS_GROUP,
    assign_shards,
    cap_scopes,
    memberships,
)
from curation.mixture.manifest import file_sha256
from curation.mixture.phases import PhaseSpec
from curation.mixture.policy import Policy, doc_groups
from curation.mixture.replay import CopyPlan
from curation.mixture.shards import PACKING_SCHEMA, SHARD_SCHEMA, ShardOptions, build_shard
from pipelines.kit import Artifact, StageContext

#: Input columns a shard row carries (those present).
CARRIED = tuple(dict.fromkeys(("doc_id", "text", "source", "url", "repo", "path", "language", "lang", "n_tokens", "meta", *PROVENANCE_COLUMNS)))
KEY_SEP = "|"

RECORD_META = pd.DataFrame({
    "phase": pd.Series(dtype=object), "group": pd.Series(dtype=object), "shard": pd.Series(dtype="int64"),
    "path": pd.Series(dtype=object), "bytes": pd.Series(dtype="int64"), "sha256": pd.Series(dtype=object),
    "documents": pd.Series(dtype="int64"), "tokens": pd.Series(dtype="int64"),
    "unique_documents": pd.Series(dtype="int64"), "unique_tokens": pd.Series(dtype="int64"),
    "replay_documents": pd.Series(dtype="int64"), "replay_tokens": pd.Series(dtype="int64"),
    "text_unique_tokens": pd.Series(dtype="int64"), "text_replay_tokens": pd.Series(dtype="int64"),
    "fim": pd.Series(dtype=object), "packing_path": pd.Series(dtype=object), "packing_bytes": pd.Series(dtype="int64"),
    "packing_sha256": pd.Series(dtype=object), "sequences": pd.Series(dtype="int64"), "min_sequences": pd.Series(dtype="int64"),
    "packing_tokens": pd.Series(dtype="int64"),
})


def explode_partition(
    df: pd.DataFrame, specs: list[PhaseSpec], policy: Policy,
    live: set[tuple[str, str]], n_shards: dict[tuple[str, str], int], seed: int, keep_meta: bool = False,
) -> pd.DataFrame:
    """One row per (document, phase, live group) with the shard key ``phase|group|NNNNN``.

    ``meta`` travels only where a builder needs it (issue threads) unless ``keep_meta``: it can
    hold a page's raw HTML, which training shards do not need.
    """
    m = memberships(df, specs, doc_groups(df, policy))
    ok = np.array([(p, g) in live and r > 0 for p, g, r in zip(m["phase"], m["group"], m["repeat"], strict=True)], dtype=bool)
    m = m[ok].reset_index(drop=True)  # a boolean array: an empty *list* would select no columns
    shard = assign_shards(m, n_shards, seed, cap_scopes(specs))
    cols = [c for c in CARRIED if c in df.columns]
    out = df[cols].iloc[m["row"].to_numpy()].reset_index(drop=True)
    out["phase"] = m["phase"].to_numpy()
    out["group"] = m["group"].to_numpy()
    out["unit"] = m["unit"].to_numpy()
    out["repeat"] = m["repeat"].to_numpy()
    if "meta" in out.columns and not keep_meta:
        out["meta"] = out["meta"].astype(object).where((m["group"] == THREADS_GROUP).to_numpy(), None)
    out["_key"] = [shard_key(p, g, s) for p, g, s in zip(m["phase"], m["group"], shard, strict=True)]
    return out


def shard_key(phase: str, group: str, shard: int) -> str:
    """``phase|group|NNNNN``: the key rows are shuffled on (zero-padded, so keys sort by shard)."""
    return f"{phase}{KEY_SEP}{group}{KEY_SEP}{shard:05d}"


def shard_destinations(n_shards: dict[tuple[str, str], int], max_partitions: int) -> tuple[dict[str, int], int]:
    """Shard key → output partition (consecutive keys share one only beyond ``max_partitions``), and the partition count."""
    keys = sorted(shard_key(p, g, s) for (p, g), k in n_shards.items() for s in range(k))
    nparts = max(1, min(len(keys), max_partitions))
    per = -(-max(len(keys), 1) // nparts)
    return {k: i // per for i, k in enumerate(keys)}, nparts


def with_destination(df: pd.DataFrame, dest: dict[str, int]) -> pd.DataFrame:
    """``_dest``: the output partition of each row's shard (every shard key is planned)."""
    out = df.assign(_dest=df["_key"].map(dest))
    if out["_dest"].isna().any():
        raise RuntimeError(f"mixture: shard keys outside the plan: {sorted(set(out.loc[out['_dest'].isna(), '_key']))[:5]}")
    return out.assign(_dest=out["_dest"].astype("int64"))


def write_all_shards(
    docs: dd.DataFrame, ctx: StageContext, specs: list[PhaseSpec], policy: Policy, live: set[tuple[str, str]],
    n_shards: dict[tuple[str, str], int], copies: dict[tuple[str, str], CopyPlan], opts: ShardOptions, max_partitions: int,
    undrawn: Artifact | None = None,
) -> pd.DataFrame:
    """Write every shard of the live groups into the stage folder; their records, sorted by phase, group, shard.
    ``undrawn``: where each shard's documents that the replay gives no copy go, routed back to their
    input partition (:func:`not_drawn`, read by :func:`annotate_partition`)."""
    if not live:
        return RECORD_META.copy()
    dest, nparts = shard_destinations({k: n for k, n in n_shards.items() if k in live}, max_partitions)
    exchange = Artifact(ctx.work_dir / EXCHANGE)
    routed = ctx.map_parts(docs, route_partition, exchange, dest, nparts, specs, policy, live, n_shards, opts.seed, opts.keep_meta,
                           meta=pd.Series(dtype="int64"))
    chars = ctx.compute(routed, "route rows to shards")
    # Each shard goes to a partition of its own (consecutive shards share one only beyond
    # max_partitions; a hash shuffle once put two or three 32 MB shards in one partition and
    # killed a 1 GB worker building them).
    written = dd.from_map(write_destination, list(range(nparts)),
                          args=(exchange, str(ctx.work_dir), {s.name: s for s in specs}, opts, copies, undrawn, docs.npartitions),
                          meta=RECORD_META, enforce_metadata=False)
    records = ctx.compute(written, "write shards", costs=destination_costs(chars, dest, nparts, copies))
    shutil.rmtree(exchange.path, ignore_errors=True)
    return records.sort_values(["phase", "group", "shard"]).reset_index(drop=True)


def destination_costs(chars: pd.Series, dest: dict[str, int], nparts: int, copies: dict[tuple[str, str], CopyPlan]) -> list[int]:
    """What building each output partition's shards costs: the characters routed to each shard
    key (``chars``, summed over the input partitions) times its group's epochs where they are
    above one (a shard holds that many copies of its documents), summed per output partition.
    Below one epoch a shard still reads, orders and writes every routed document (``copies``
    marks the sample): the 32K repo-level code shard of a 116 MB recipe, at 0.05 epochs, was
    costed 20x too low, started last and ran alone for 2.9 s (benchmarks/recipe). The writer
    starts the costliest first: the shards differ by 100x in size, and Dask's own order left a
    large one to run alone at the end of the step."""
    out = np.zeros(nparts, dtype=np.float64)
    for key, n in chars.groupby(level=0).sum().items():
        phase, group, _shard = str(key).split(KEY_SEP)
        plan = copies.get((phase, group))
        out[dest[str(key)]] += float(n) * max(1.0, plan.epochs if plan is not None else 1.0)
    return [int(c) for c in out]


#: The folder of the stage's in-progress output that holds the rows in transit (removed after).
EXCHANGE = "_exchange"


def route_partition(
    number: int, df: pd.DataFrame, exchange: Artifact, dest: dict[str, int], nparts: int, specs: list[PhaseSpec], policy: Policy,
    live: set[tuple[str, str]], n_shards: dict[tuple[str, str], int], seed: int, keep_meta: bool,
) -> pd.Series:
    """Explode input partition ``number``, write its rows under the output partition of their
    shard; return the characters of text routed to each shard key (the writer's costs)."""
    rows = with_destination(explode_partition(df, specs, policy, live, n_shards, seed, keep_meta), dest)
    rows["_part"] = np.int64(number)  # where a document the replay does not draw is said so (not_drawn)
    exchange.write_routed(rows.drop(columns="_dest"), number, rows["_dest"].to_numpy(), nparts)
    return rows["text"].str.len().groupby(rows["_key"].to_numpy(), sort=True).sum().astype("int64")


def write_destination(
    number: int, exchange: Artifact, work_dir: str, specs: dict[str, PhaseSpec], opts: ShardOptions,
    copies: dict[tuple[str, str], CopyPlan], undrawn: Artifact | None = None, n_input: int = 0,
) -> pd.DataFrame:
    """Build and write the shards of output partition ``number`` from the rows routed to it; the
    documents they give no copy go to ``undrawn``, routed to their input partition (of ``n_input``)."""
    rows = exchange.read_routed(number)
    if rows is None:
        return RECORD_META.copy()
    found: list[pd.DataFrame] = []
    records = write_shards(rows, work_dir, specs, opts, copies, found)
    if undrawn is not None and found:
        table = pd.concat(found, ignore_index=True)
        undrawn.write_routed(table[["doc_id", "phase"]], number, table["_part"].to_numpy(), n_input)
    return records


def _write(table: pa.Table, path: Path) -> None:
    with atomic_path(path) as tmp:
        pq.write_table(table, tmp, compression="zstd")


def write_shards(
    df: pd.DataFrame, work_dir: str, specs: dict[str, PhaseSpec], opts: ShardOptions,
    copies: dict[tuple[str, str], CopyPlan], undrawn: list[pd.DataFrame] | None = None,
) -> pd.DataFrame:
    """Build and write every shard whose rows are in ``df``; one record per shard. ``undrawn``
    (rows with ``_part``, their input partition): gets each shard's :func:`not_drawn`."""
    records = []
    root = Path(work_dir)
    for key, rows in df.groupby("_key", sort=True):
        phase, group, shard_s = str(key).split(KEY_SEP)
        spec = specs[phase]
        frame, spans, fim, text_tokens, text_unique_tokens = build_shard(rows, spec, group, copies[(phase, group)], opts)
        rel = f"shards/{phase}/{group}/{part_name(int(shard_s))}"
        _write(pa.Table.from_pandas(frame, schema=SHARD_SCHEMA, preserve_index=False), root / rel)
        if undrawn is not None and "_part" in rows.columns:
            undrawn.append(not_drawn(rows, frame, phase, group))
        first = frame["copy"].to_numpy() == 0
        rec = {
            "phase": phase, "group": group, "shard": int(shard_s), "path": rel, "bytes": (root / rel).stat().st_size,
            "sha256": file_sha256(root / rel), "documents": len(frame), "tokens": int(frame["n_tokens"].sum()),
            "unique_documents": int(first.sum()), "unique_tokens": int(frame["n_tokens"].to_numpy()[first].sum()),
            "replay_documents": int(frame["copies"].sum()), "replay_tokens": int((frame["copies"] * frame["n_tokens"]).sum()),
            # epochs are counted on the text's own tokens (FIM's sentinels differ from copy to copy and phase to phase)
            "text_unique_tokens": text_unique_tokens, "text_replay_tokens": int((frame["copies"].to_numpy() * text_tokens).sum()),
            "fim": json.dumps(fim, sort_keys=True), "packing_path": None, "packing_bytes": 0, "packing_sha256": None, "sequences": 0,
            "min_sequences": 0, "packing_tokens": 0,
        }
        if spans is not None:
            prel = f"packing/{phase}/{group}/{part_name(int(shard_s))}"
            _write(pa.Table.from_pandas(spans, schema=PACKING_SCHEMA, preserve_index=False), root / prel)
            rec.update({
                "packing_path": prel, "packing_bytes": (root / prel).stat().st_size, "packing_sha256": file_sha256(root / prel),
                "sequences": int(spans["sequence"].nunique()), "packing_tokens": int(spans["length"].sum()),
                "min_sequences": -(-int(spans["length"].sum()) // spec.seq_length),  # no packing can use fewer
            })
        records.append(rec)
    return records_frame(records)


def records_frame(records: list[dict]) -> pd.DataFrame:
    """The shard records as a frame of :data:`RECORD_META`'s columns and dtypes, each column built
    in its dtype (``DataFrame(records).astype`` cost more than building the shards' records)."""
    if not records:
        return RECORD_META.copy()
    return pd.DataFrame({
        c: pd.Series([r[c] for r in records], dtype=object) if t.kind == "O" else np.array([r[c] for r in records], dtype=t)
        for c, t in RECORD_META.dtypes.items()
    })


def not_drawn(rows: pd.DataFrame, frame: pd.DataFrame, phase: str, group: str) -> pd.DataFrame:
    """The input documents of one shard's ``rows`` that its written ``frame`` shows 0 times
    (``doc_id``, ``phase``, ``_part``): a fractional epoch draws only some documents of a group. A
    repository document or issue thread shows each of its members (``provenance``) as often as itself."""
    shown = frame["copies"].to_numpy() > 0
    if group in (REPO_GROUP, THREADS_GROUP):
        drawn = {m for p in frame["provenance"].to_numpy(dtype=object)[shown] for m in json.loads(p)["members"]}
    else:
        drawn = set(frame["doc_id"].to_numpy(dtype=object)[shown].tolist())
    ids = rows["doc_id"].astype(str).to_numpy(dtype=object)
    miss = np.array([d not in drawn for d in ids], dtype=bool)
    return pd.DataFrame({"doc_id": ids[miss], "phase": phase, "_part": rows["_part"].to_numpy(dtype=np.int64)[miss]})


def annotate_partition(
    number: int, df: pd.DataFrame, undrawn: Artifact, specs: list[PhaseSpec], policy: Policy, live: set[tuple[str, str]],
    max_epochs: dict[str, float], epochs: dict[tuple[str, str], float],
) -> pd.DataFrame:
    """:func:`~curation.mixture.annotate.annotate` of input partition ``number``, with the phases whose
    replay gives its documents no copy (:func:`not_drawn`, as the shards' writers routed them back)."""
    rows = undrawn.read_routed(number, objects=True)
    pairs = set() if rows is None else set(zip(rows["doc_id"].tolist(), rows["phase"].tolist(), strict=True))
    return annotate(df, specs, policy, live, max_epochs, undrawn=pairs, epochs=epochs)
