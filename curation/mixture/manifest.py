"""Phase manifests: build them from a plan and the written shards, export blends, validate them.

A manifest is the contract with the training job (DESIGN.md §3): one versioned JSON per phase,
checked against ``curation/schemas/manifest.schema.json``. Paths are relative to ``base_dir``
(the stage folder), itself relative to the manifest's folder.

>>> groups = [{"name": "web/high", "weight": 0.75, "tokens": 30, "documents": 3, "planned_tokens": 60,
...            "shards": [{"path": "shards/p/web/high/part-00000.parquet", "tokens": 30, "replay_documents": 6}]},
...           {"name": "code/high", "weight": 0.25, "tokens": 20, "documents": 1, "planned_tokens": 20,
...            "shards": [{"path": "shards/p/code/high/part-00000.parquet", "tokens": 20, "replay_documents": 1}]}]
>>> megatron_blend(groups)
'0.75 shards/p/web/high/part-00000 0.25 shards/p/code/high/part-00000'
>>> interleave_export(groups)["probabilities"]  # rows: 6 of web/high (2 epochs of 3), 1 of code/high
[0.857142857143, 0.142857142857]
>>> interleave_export(groups)["documents"]  # rows after repeating each row `copies` times
[6, 1]
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping
from importlib import resources
from pathlib import Path
from typing import Any

import pyarrow.compute as pc
import pyarrow.parquet as pq

from curation.mixture.plan import GroupPlan, PhasePlan, PhaseSpec

SCHEMA_VERSION = "1.1"
MANIFEST_KIND = "curation.mixture.manifest"


def load_schema() -> dict[str, Any]:
    """The manifest JSON Schema shipped in the package."""
    return json.loads((resources.files("curation") / "schemas" / "manifest.schema.json").read_text())


def file_sha256(path: Path) -> str:
    return file_digest(path, hashlib.sha256())


def file_digest(path: Path, h: Any) -> str:
    """Hex digest of a file's bytes with the hash object ``h`` (hashlib or xxhash), read in 4 MiB blocks."""
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 22), b""):
            h.update(block)
    return h.hexdigest()


def _cap(value: float) -> float | None:
    return None if math.isinf(value) else round(value, 9)


def _replay_tokens(shard: Mapping[str, Any]) -> int:
    return int(shard.get("replay_tokens", shard["tokens"]))


def megatron_blend(groups: list[Mapping[str, Any]]) -> str:
    """Megatron-LM ``--data-path`` blend: ``weight prefix`` per shard, weights by planned tokens (sum 1).

    A group's weight (planned tokens / the phase's planned tokens) is shared by its shards in
    proportion to the tokens each holds at the plan's epochs (``replay_tokens``). Megatron's
    ``BlendedDataset`` draws samples by these weights and re-reads a shard as often as its share
    needs, so every group gets its planned tokens. Prefixes are shard paths without ``.parquet``;
    convert each shard with Megatron's ``tools/preprocess_data.py`` to ``<prefix>.bin/.idx``.
    """
    items: list[str] = []
    for g in groups:
        total = sum(_replay_tokens(s) for s in g["shards"])
        if g["weight"] <= 0 or not total:
            continue
        for s in g["shards"]:
            w = g["weight"] * _replay_tokens(s) / total
            if w > 0:
                items.append(f"{w:.10g} {s['path'][: -len('.parquet')]}")
    return " ".join(items)


def interleave_export(groups: list[Mapping[str, Any]], stopping_strategy: str = "first_exhausted") -> dict[str, Any]:
    """How to rebuild a phase with Hugging Face ``datasets``: files, row repeats and probabilities per group.

    Each shard row carries ``copies``: how many times the plan shows it in this phase (its group's
    epochs, the fraction given to a hashed, token-weighted subset of rows). Repeating every row
    ``copies`` times gives each group its planned tokens (``documents`` rows); concatenating the
    groups and shuffling reproduces the phase exactly. ``probabilities`` (rows per group) serve
    ``interleave_datasets`` when streaming; sampling makes those exact only in expectation.
    """
    names, files, raw, docs = [], [], [], []
    for g in groups:
        if g["weight"] <= 0 or not g["documents"]:
            continue
        names.append(g["name"])
        files.append([s["path"] for s in g["shards"]])
        n = sum(int(s.get("replay_documents", s.get("documents", 0))) for s in g["shards"])
        docs.append(n)
        raw.append(float(n))
    total = sum(raw)
    probs = [round(r / total, 12) for r in raw] if total else [0.0] * len(raw)
    return {"groups": names, "data_files": files, "probabilities": probs, "stopping_strategy": stopping_strategy,
            "copies_column": "copies", "documents": docs}


def group_entry(plan: GroupPlan, shards: list[dict[str, Any]], fim: dict[str, int] | None, packing: dict[str, Any] | None) -> dict[str, Any]:
    """A manifest group from its plan and its shard records (sums taken from the shards)."""
    return {
        "name": plan.group,
        "kind": plan.kind,
        "repeat": round(plan.repeat, 9),
        "mix": round(plan.mix, 9),
        "nominal_epochs": round(plan.nominal_epochs, 9),
        "epochs": round(plan.epochs, 9),
        "cap": _cap(plan.cap),
        "weight": round(plan.weight, 12),
        "documents": sum(s["documents"] for s in shards),
        "tokens": sum(s["tokens"] for s in shards),
        "unique_documents": sum(s.get("unique_documents", s["documents"]) for s in shards),
        "unique_tokens": sum(s.get("unique_tokens", s["tokens"]) for s in shards),
        "replay_documents": sum(s.get("replay_documents", s["documents"]) for s in shards),
        "replay_tokens": sum(_replay_tokens(s) for s in shards),
        "planned_tokens": plan.planned_tokens,
        "shortfall_tokens": plan.shortfall_tokens,
        "fim": fim,
        "shards": shards,
        "packing": packing,
    }


def build_manifest(
    spec: PhaseSpec,
    plan: PhasePlan,
    groups: list[dict[str, Any]],
    *,
    provenance: Mapping[str, Any],
    fim: Mapping[str, Any],
    repeats: str,
    languages: Mapping[str, Mapping[str, Mapping[str, int]]] | None = None,
    warnings: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """The manifest of one phase. ``groups`` come from :func:`group_entry`; ``languages`` is
    group → language → unique documents/tokens (the plan's epochs give the planned tokens)."""
    shipped = [g for g in groups if g["shards"]]
    epochs = {g.group: g.epochs for g in plan.groups}
    per_lang: dict[str, dict[str, float]] = {}
    for gname, table in (languages or {}).items():
        for lang, v in table.items():
            if epochs.get(gname, 0.0) <= 0:
                continue
            d = per_lang.setdefault(lang, {"documents": 0, "tokens": 0, "planned_tokens": 0.0})
            d["documents"] += int(v["documents"])
            d["tokens"] += int(v["tokens"])
            d["planned_tokens"] += epochs[gname] * int(v["tokens"])
    planned_all = sum(v["planned_tokens"] for v in per_lang.values()) or 1.0
    lang_out = {k: {"documents": int(v["documents"]), "tokens": int(v["tokens"]), "planned_tokens": int(round(v["planned_tokens"])),
                    "share": round(v["planned_tokens"] / planned_all, 6)} for k, v in sorted(per_lang.items())}
    excluded = [
        {"name": g.group, "documents": g.documents, "tokens": g.tokens, "reason": "zero_weight"}
        for g in plan.groups if g.weight <= 0
    ]
    packing: dict[str, Any] = {"mode": spec.packing}
    if spec.packing == "none":
        packing["truncation"] = spec.truncation
    else:
        seqs = sum(g["packing"]["sequences"] for g in shipped if g.get("packing"))
        toks = sum(g["packing"]["tokens"] for g in shipped if g.get("packing"))
        least = sum(g["packing"].get("min_sequences", 0) for g in shipped if g.get("packing"))
        packing.update({
            "algorithm": "best_fit_decreasing (Ding et al. 2024), per group and shard",
            "sequences": seqs, "tokens": toks,
            "fill_rate": round(toks / (seqs * spec.seq_length), 6) if seqs else 1.0,
            "min_sequences": least,  # Σ ⌈shard tokens / seq_length⌉: no packing of these shards uses fewer
            "best_possible_fill_rate": round(toks / (least * spec.seq_length), 6) if least else 1.0,
        })
    return {
        "schema_version": SCHEMA_VERSION,
        "kind": MANIFEST_KIND,
        "phase": spec.name,
        "stage": spec.stage,
        "builder": spec.builder,
        "base_dir": "..",
        **provenance,
        "budget": {
            "spec": spec.budget.to_dict() if spec.budget is not None else {"tokens": plan.budget_tokens},
            "tokens": plan.budget_tokens,
            "nominal_tokens": plan.nominal_tokens,
            "unique_tokens": plan.unique_tokens,
            "planned_tokens": plan.planned_tokens,
            "met": plan.budget_met,
            "scale": round(plan.scale, 12),
            "recipe_scale": plan.recipe_scale,
            "full_scale_tokens": spec.tokens,
        },
        "seq_length": spec.seq_length,
        "packing": packing,
        "fim": dict(fim) if spec.fim else {"enabled": False},
        "repeats": repeats,
        "groups": shipped,
        "excluded_groups": excluded,
        "shortfalls": plan.shortfalls,
        "totals": {
            "documents": sum(g["documents"] for g in shipped),
            "tokens": sum(g["tokens"] for g in shipped),
            "shards": sum(len(g["shards"]) for g in shipped),
            "bytes": sum(s["bytes"] for g in shipped for s in g["shards"]),
            "replay_tokens": sum(g["replay_tokens"] for g in shipped),
        },
        "languages": lang_out,
        "warnings": list(warnings or []),
        "exports": {"megatron_data_path": megatron_blend(shipped), "interleave_datasets": interleave_export(shipped)},
    }


def validate_schema(manifest: Mapping[str, Any]) -> list[str]:
    """Schema errors of ``manifest`` (empty when valid)."""
    import jsonschema

    validator = jsonschema.Draft202012Validator(load_schema())
    return [f"{'/'.join(str(p) for p in e.absolute_path) or '<root>'}: {e.message}" for e in sorted(validator.iter_errors(manifest), key=str)]


def validate_sums(manifest: Mapping[str, Any]) -> list[str]:
    """Internal consistency: group sums = shard sums, totals = group sums, weights and probabilities sum to 1."""
    errors: list[str] = []
    for g in manifest["groups"]:
        for key in ("documents", "tokens"):
            total = sum(s[key] for s in g["shards"])
            if total != g[key]:
                errors.append(f"group {g['name']}: {key} {g[key]} != sum over its shards {total}")
        if g.get("packing"):
            files_tokens = sum(f["tokens"] for f in g["packing"]["files"])
            if files_tokens != g["packing"]["tokens"]:
                errors.append(f"group {g['name']}: packing tokens {g['packing']['tokens']} != sum over its files {files_tokens}")
    totals = manifest["totals"]
    for key in ("documents", "tokens"):
        total = sum(g[key] for g in manifest["groups"])
        if total != totals[key]:
            errors.append(f"totals.{key} {totals[key]} != sum over groups {total}")
    weights = sum(g["weight"] for g in manifest["groups"])
    if manifest["groups"] and any(g["weight"] > 0 for g in manifest["groups"]) and abs(weights - 1.0) > 1e-6:
        errors.append(f"group weights sum to {weights}, not 1")
    probs = manifest["exports"]["interleave_datasets"]["probabilities"]
    if probs and abs(sum(probs) - 1.0) > 1e-6:
        errors.append(f"interleave probabilities sum to {sum(probs)}, not 1")
    for g in manifest["groups"]:
        if g["cap"] is not None and g["epochs"] > g["cap"] + 1e-9:
            errors.append(f"group {g['name']}: epochs {g['epochs']} above its cap {g['cap']}")
    return errors


def validate_files(manifest: Mapping[str, Any], base: Path) -> list[str]:
    """Each shard and packing file: exists, bytes, sha256, rows and token sum as recorded."""
    errors: list[str] = []
    for g in manifest["groups"]:
        for s in g["shards"]:
            errors += _check_file(base, s, rows_key="documents", tokens_col="n_tokens", tokens_key="tokens")
        for f in (g.get("packing") or {}).get("files", []):
            file_errors = _check_file(base, f, rows_key=None, tokens_col="length", tokens_key="tokens")
            errors += file_errors
            if not file_errors:
                seqs = pq.read_table(base / f["path"], columns=["sequence"]).column("sequence")
                n = len(pc.unique(seqs)) if len(seqs) else 0
                if n != f["sequences"]:
                    errors.append(f"{f['path']}: {n} sequences, manifest says {f['sequences']}")
    return errors


def _check_file(base: Path, rec: Mapping[str, Any], rows_key: str | None, tokens_col: str, tokens_key: str) -> list[str]:
    path = (base / rec["path"]).resolve()
    if not path.is_relative_to(base.resolve()):
        return [f"{rec['path']}: outside the manifest's base folder"]
    if not path.is_file():
        return [f"{rec['path']}: missing"]
    errors = []
    size = path.stat().st_size
    if size != rec["bytes"]:
        errors.append(f"{rec['path']}: {size} bytes, manifest says {rec['bytes']}")
    digest = file_sha256(path)
    if digest != rec["sha256"]:
        errors.append(f"{rec['path']}: sha256 {digest[:12]}…, manifest says {rec['sha256'][:12]}…")
        return errors
    table = pq.read_table(path, columns=[tokens_col])
    if rows_key and table.num_rows != rec[rows_key]:
        errors.append(f"{rec['path']}: {table.num_rows} rows, manifest says {rec[rows_key]}")
    tokens = pc.sum(table.column(tokens_col)).as_py() or 0
    if tokens != rec[tokens_key]:
        errors.append(f"{rec['path']}: {tokens} tokens, manifest says {rec[tokens_key]}")
    return errors


def validate_manifest(path: Path, check_files: bool = True) -> list[str]:
    """Every problem with the manifest at ``path``: schema, sums, and (optionally) its files."""
    path = Path(path)
    try:
        manifest = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as exc:
        return [f"{path}: cannot be read as JSON ({exc})"]
    errors = validate_schema(manifest)
    if errors:
        return errors
    errors += validate_sums(manifest)
    if check_files:
        errors += validate_files(manifest, (path.parent / manifest["base_dir"]))
    return errors
