"""``curate export datasets``: each phase as a folder ``datasets.load_from_disk`` reads, rows in training order.

- **pre-training** phases: one row per time the plan shows a document (a document of 3 copies is 3
  rows, ``copy`` 0, 1, 2): ``doc_id, copy, text, group, source, n_tokens``; with
  ``--truncation random``, ``input_ids`` too (the document's ids and its EOD, cut to ``seq_length``
  at an offset drawn from (seed, document, copy) when longer: GLM-4.5's random truncation).
- **mid-training** phases: one row per best-fit bin: ``input_ids`` (at most ``seq_length``: its
  documents, each with its EOD, unpadded), ``document_lengths`` (summing to ``len(input_ids)``;
  a trainer builds position ids and a block-diagonal attention mask from them), ``doc_ids`` and
  ``group``.

The rows of a phase are in a seeded random order: a hash of (seed, phase, document, copy) picks
each row's file and its place in it, so the order is the same whatever the shards and workers.
Two passes on the cluster, memory bounded by a shard and by one output file: one task per shard
routes its rows by output file (Arrow IPC files in the in-progress folder), then one task per
output file sorts its rows and writes ``data-NNNNN-of-MMMMM.arrow`` (Arrow stream format, as
``save_to_disk`` writes), and the driver writes ``state.json`` and ``dataset_info.json``.
"""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path
from typing import Any

import dask
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from curation.config import ConfigError
from curation.export.sequences import packed_bins, random_window, repeated, row_keys, shard_ids, with_eod
from curation.export.tokenizer import identity
from curation.ingest.inputs import InputError
from curation.mixture.groups import stable_hash
from curation.tokens import token_id
from pipelines.exports.common import SHARD_COLUMNS, RunExport, ShardJob, empty_reason, read_verified, shard_jobs
from pipelines.io import write_json
from pipelines.kit import Artifact
from pipelines.progress import compute_with_progress

#: Bytes of text (or ids) per output file (``save_to_disk``'s default shard size).
FILE_BYTES = 500 << 20
TRUNCATIONS = ("none", "random")


def export_datasets(run: RunExport, work: Path, client: Any, *, eod_token: str, truncation: str = "none",
                    quiet: bool = False) -> dict[str, Any]:
    """Write every phase of ``run`` into ``work/<phase>``; return ``export.json``'s content."""
    if truncation not in TRUNCATIONS:
        raise ConfigError(f"--truncation {truncation!r}: give one of {', '.join(TRUNCATIONS)}")
    tok = run.tokenizer
    eod = token_id(tok, eod_token)
    phases = {}
    for phase, manifest in run.manifests.items():
        packed = manifest["packing"]["mode"] == "best_fit"
        jobs = shard_jobs(manifest)
        nfiles = output_files(manifest)
        exchange = Artifact(work / ".exchange" / phase)
        opts = {"tok": tok, "eod": eod, "seed": int(manifest["seed"]), "seq_length": int(manifest["seq_length"]),
                "packed": packed, "truncation": truncation}
        routed = [dask.delayed(route_shard)(i, job, str(run.stage_dir), exchange, nfiles, opts, dask_key_name=f"route-{phase}-{i}")
                  for i, job in enumerate(jobs)]
        if routed:
            compute_with_progress(routed, client, f"export {phase}: rows", quiet, costs=[j.bytes for j in jobs])
        names = [f"data-{n:05d}-of-{nfiles:05d}.arrow" for n in range(nfiles)]
        written = [dask.delayed(write_file)(n, exchange, str(work / phase / names[n]), dask_key_name=f"write-{phase}-{n}")
                   for n in range(nfiles)]
        files = compute_with_progress(written, client, f"export {phase}: files", quiet)
        shutil.rmtree(exchange.path, ignore_errors=True)
        schema = next((f["schema"] for f in files if f["schema"] is not None), None) or empty_schema(packed, truncation)
        write_layout(work / phase, names, schema)
        phases[phase] = phase_figures(manifest, files, truncation)
    shutil.rmtree(work / ".exchange", ignore_errors=True)
    out = {"kind": "curation.export", "format": "datasets", "run": str(run.run_dir.resolve()), "tokenizer": tok, "tokenizer_identity": identity(tok),
           "eod_token": eod_token, "eod_id": eod, "truncation": truncation, "phases": phases}
    write_json(work / "export.json", out)
    return out


def output_files(manifest: dict[str, Any]) -> int:
    """Files of a phase: the bytes its rows will take (shard bytes × the copies they replay) over :data:`FILE_BYTES`."""
    size = 0.0
    for g in manifest["groups"]:
        ratio = g["replay_tokens"] / g["tokens"] if g["tokens"] else 1.0
        size += ratio * sum(s["bytes"] for s in g["shards"])
    return max(1, math.ceil(size * 3 / FILE_BYTES))  # Parquet's zstd text expands about 3x as Arrow


def route_shard(number: int, job: ShardJob, stage_dir: str, exchange: Artifact, nfiles: int, opts: dict[str, Any]) -> int:
    """The rows of one shard (:func:`document_rows` or :func:`bin_rows`) routed by output file."""
    table = read_verified(Path(stage_dir), job.path, job.sha256, SHARD_COLUMNS)
    if opts["packed"]:
        if job.packing_path is None or job.packing_sha256 is None:
            raise InputError(f"{job.path}: a best-fit phase's shard has no packing file in its manifest")
        spans = read_verified(Path(stage_dir), job.packing_path, job.packing_sha256)
        rows = bin_rows(table, spans.to_pandas(), job, opts)
    else:
        rows = document_rows(table, job, opts)
    key = rows.column("_key").to_numpy()
    exchange.write_routed(rows, number, (key % np.uint64(nfiles)).astype(np.int64), nfiles)
    return rows.num_rows


def document_rows(table: pa.Table, job: ShardJob, opts: dict[str, Any]) -> pa.Table:
    """Every copy the plan shows of each document of a pre-training shard, with its order key."""
    rows, copy = repeated(table.column("copies").to_numpy(), table.column("copy").to_numpy())
    docs = table.column("doc_id").to_pylist()
    out = table.select(["doc_id", "text", "group", "source", "n_tokens"]).take(pa.array(rows))
    keys = row_keys(opts["seed"], job.phase, [docs[r] for r in rows], copy.tolist())
    out = out.add_column(1, "copy", pa.array(copy, pa.int64()))
    if opts["truncation"] == "random":
        ids = shard_ids(table.column("text").to_pylist(), table.column("n_tokens").to_numpy(), docs, opts["tok"], job.path,
                        rows=rows)  # only the documents the plan shows
        full = with_eod(ids, opts["eod"], docs, job.where)
        cuts = stable_hash([f"{opts['seed']}|{job.phase}|truncate|{docs[r]}|{c}" for r, c in zip(rows, copy, strict=True)])
        windows = [random_window(full[r], opts["seq_length"], int(k)) for r, k in zip(rows, cuts, strict=True)]
        out = out.append_column("input_ids", pa.array([w.astype(np.int32) for w, _ in windows], pa.list_(pa.int32())))
        out = out.append_column("truncated_at", pa.array([o for _, o in windows], pa.int64()))
        # a window cut at offset 0 has truncated_at 0 too, as a whole document has: this tells them apart
        out = out.append_column("truncated", pa.array([len(full[r]) > opts["seq_length"] for r in rows.tolist()], pa.bool_()))
    return out.append_column("_key", pa.array(keys, pa.uint64()))


def bin_rows(table: pa.Table, spans: Any, job: ShardJob, opts: dict[str, Any]) -> pa.Table:
    """Every best-fit bin of a mid-training shard as one row, with its order key."""
    docs = table.column("doc_id").to_pylist()
    ids = shard_ids(table.column("text").to_pylist(), table.column("n_tokens").to_numpy(), docs, opts["tok"], job.path,
                    rows=spans["row"].to_numpy())
    full = with_eod(ids, opts["eod"], docs, job.where)
    bins = list(packed_bins(full, spans, opts["seq_length"]))
    keys = stable_hash([f"{opts['seed']}|{job.phase}|bin|{job.group}|{job.number}|{i}" for i in range(len(bins))])
    return pa.table({
        "group": pa.array([job.group] * len(bins), pa.string()),
        "input_ids": pa.array([b.astype(np.int32) for b, _, _ in bins], pa.list_(pa.int32())),
        "document_lengths": pa.array([n for _, n, _ in bins], pa.list_(pa.int32())),
        "doc_ids": pa.array([d for _, _, d in bins], pa.list_(pa.string())),
        "_tokens": pa.array(document_tokens(full, spans), pa.int64()),
        "_key": pa.array(keys, pa.uint64()),
    })


def document_tokens(full: list[np.ndarray | None], spans: Any) -> np.ndarray:
    """The documents' own tokens in each bin, in sequence order: its spans' lengths less the EODs
    they end with (``export.json`` counts a datasets phase in the manifest's unit, EOD aside)."""
    if not len(spans):
        return np.zeros(0, dtype=np.int64)
    rows, offset, length = (spans[c].to_numpy() for c in ("row", "offset", "length"))
    own = np.array([len(full[r]) - 1 for r in rows.tolist()], dtype=np.int64)  # each row's ids less its one EOD
    kept = np.minimum(length, np.maximum(own - offset, 0))
    _, seq = np.unique(spans["sequence"].to_numpy(), return_inverse=True)  # sorted, as packed_bins yields the bins
    return np.bincount(seq, weights=kept).astype(np.int64)


def write_file(number: int, exchange: Artifact, path: str) -> dict[str, Any]:
    """Sort the rows routed to output file ``number`` by their key and write them as an Arrow stream."""
    rows = exchange.read_routed_table(number)
    figures: dict[str, Any] = {"path": Path(path).name, "rows": 0, "schema": None, "groups": {}}
    if rows is None:
        return figures
    rows = rows.take(pc.sort_indices(rows, sort_keys=[("_key", "ascending")])).drop_columns(["_key"])
    # the documents' tokens, EOD aside: a bin's documents (``_tokens``, not written), a row's ``n_tokens``
    tokens = rows.column("_tokens") if "_tokens" in rows.column_names else rows.column("n_tokens")
    rows = rows.drop_columns([c for c in ("_tokens",) if c in rows.column_names])
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    with pa.OSFile(path, "wb") as sink, pa.ipc.new_stream(sink, rows.schema) as writer:
        writer.write_table(rows, max_chunksize=1000)
    # with random truncation, what a trainer reads: the windows' ids (EOD included), not the documents' tokens
    trained = pc.list_value_length(rows.column("input_ids")) if "truncated_at" in rows.column_names else tokens
    by_group = pa.table({"group": rows.column("group"), "tokens": pc.cast(tokens, pa.int64()),
                         "trained": pc.cast(trained, pa.int64())}).group_by("group").aggregate(
        [("tokens", "sum"), ("tokens", "count"), ("trained", "sum")])
    columns = [by_group.column(c).to_pylist() for c in ("group", "tokens_sum", "tokens_count", "trained_sum")]
    figures.update(rows=rows.num_rows, schema=rows.schema, groups={
        g: {"tokens": int(t), "rows": int(n), "trained_tokens": int(w)} for g, t, n, w in zip(*columns, strict=True)})
    return figures


def empty_schema(packed: bool, truncation: str) -> pa.Schema:
    """The columns of a phase with no rows."""
    if packed:
        return pa.schema([("group", pa.string()), ("input_ids", pa.list_(pa.int32())), ("document_lengths", pa.list_(pa.int32())),
                          ("doc_ids", pa.list_(pa.string()))])
    fields = [("doc_id", pa.string()), ("copy", pa.int64()), ("text", pa.string()), ("group", pa.string()), ("source", pa.string()),
              ("n_tokens", pa.int64())]
    if truncation == "random":
        fields += [("input_ids", pa.list_(pa.int32())), ("truncated_at", pa.int64()), ("truncated", pa.bool_())]
    return pa.schema(fields)


def write_layout(folder: Path, names: list[str], schema: pa.Schema) -> None:
    """``state.json`` and ``dataset_info.json`` as ``Dataset.save_to_disk`` writes them (files with no rows are written empty)."""
    from datasets import Features

    folder.mkdir(parents=True, exist_ok=True)
    for name in names:
        if not (folder / name).exists():
            with pa.OSFile(str(folder / name), "wb") as sink, pa.ipc.new_stream(sink, schema):
                pass
    features = Features.from_arrow_schema(schema)
    write_json(folder / "dataset_info.json", {"citation": "", "description": "", "features": features.to_dict(), "homepage": "", "license": ""})
    state = {"_data_files": [{"filename": n} for n in names], "_fingerprint": fingerprint(folder, names),
             "_format_columns": None, "_format_kwargs": {}, "_format_type": None, "_output_all_columns": False, "_split": None}
    write_json(folder / "state.json", state)


def fingerprint(folder: Path, names: list[str]) -> str:
    """A 16-hex fingerprint of the phase's files (their names and sizes), as ``datasets`` keeps one per dataset."""
    text = json.dumps([(n, (folder / n).stat().st_size) for n in names])
    return f"{int(stable_hash([text])[0]):016x}"


def phase_figures(manifest: dict[str, Any], files: list[dict[str, Any]], truncation: str) -> dict[str, Any]:
    """What one phase's folder holds, per group, next to the manifest's plan."""
    groups: dict[str, dict[str, int]] = {}
    for f in files:
        for g, v in f["groups"].items():
            d = groups.setdefault(g, {"rows": 0, "tokens": 0, "trained_tokens": 0})
            for k in d:
                d[k] += v[k]
    planned = {g["name"]: g["planned_tokens"] for g in manifest["groups"]}
    truncated = truncation == "random" and manifest["packing"]["mode"] == "none"
    out: dict[str, Any] = {
        "folder": manifest["phase"], "rows": sum(f["rows"] for f in files), "files": [f["path"] for f in files],
        "tokens": sum(v["tokens"] for v in groups.values()),  # the rows' n_tokens: the manifest's replay_tokens
        "seq_length": manifest["seq_length"], "packing": manifest["packing"]["mode"],
        "truncation": "random" if truncated else "none",
        "planned_tokens": manifest["budget"]["planned_tokens"],
        "groups": {g: {**{k: n for k, n in v.items() if truncated or k != "trained_tokens"}, "planned_tokens": planned.get(g, 0)}
                   for g, v in sorted(groups.items())},
    }
    if not out["rows"]:
        out["empty"] = (f"the phase replays no token ({empty_reason(manifest)}): its dataset has no rows: "
                        "there is nothing to train on")
    if truncated and out["rows"]:
        out["trained_tokens"] = sum(v["trained_tokens"] for v in groups.values())
        out["warnings"] = truncation_warnings(out)
    return out


def truncation_warnings(phase: dict[str, Any], tolerance: float = 0.02) -> list[str]:
    """What random truncation does to a phase's mix: the groups whose share of the tokens a trainer
    reads (the windows) is more than ``tolerance`` off their share of the plan (whole documents)."""
    groups, planned_total, trained_total = phase["groups"], phase["planned_tokens"], phase["trained_tokens"]
    moved = [(g, v["planned_tokens"] / planned_total, v["trained_tokens"] / trained_total) for g, v in groups.items()
             if planned_total and trained_total and abs(v["trained_tokens"] / trained_total - v["planned_tokens"] / planned_total) > tolerance]
    if not moved:
        return []
    shares = ", ".join(f"{g} {a:.3f} -> {b:.3f}" for g, a, b in sorted(moved, key=lambda m: -abs(m[2] - m[1])))
    return [f"{phase['folder']}: with --truncation random a trainer reads {trained_total:,} tokens of the "
            f"{sum(v['tokens'] for v in groups.values()):,} the rows' documents hold (each copy of a document longer than "
            f"{phase['seq_length']:,} tokens gives one window), so group shares move off the plan's: {shares}. The manifest "
            "plans whole documents; to train on the plan's shares, export without --truncation (Megatron's loader reads "
            "documents whole, in consecutive samples)"]
