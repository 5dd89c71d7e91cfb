"""Phase manifests: build them from a plan and the written shards (validation in :mod:`.manifest_check`).

A manifest is the contract with the training job: one versioned JSON per phase, checked against
``curation/schemas/manifest.schema.json``, with the plan (budget, epochs, weights, caps) and what
the shards replay next to it (``replay_tokens``: Σ copies × tokens). The files a trainer loads
are written from it by ``curate export`` (:mod:`pipelines.export`). Paths are relative to
``base_dir`` (the stage folder), itself relative to the manifest's folder.

>>> shard = {"path": "shards/p/web/high/part-00000.parquet", "bytes": 1, "sha256": "0", "documents": 3, "tokens": 30,
...          "replay_documents": 6, "replay_tokens": 60}
>>> plan = GroupPlan("web/high", "web", 30, 3, 2.0, 1.0, 2.0, 4.0, epochs=2.0, planned_tokens=60, weight=1.0)
>>> entry = group_entry(plan, [shard], fim=None, packing=None)
>>> entry["tokens"], entry["replay_tokens"], entry["epochs"], entry["replay_epochs"]
(30, 60, 2.0, 2.0)
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from curation.mixture.phases import PhaseSpec
from curation.mixture.plan import GroupPlan, PhasePlan, lookup

SCHEMA_VERSION = "2.0"
MANIFEST_KIND = "curation.mixture.manifest"


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


#: How far a group's or a phase's replayed tokens may be from the plan (GLM-4.5's budgets are
#: token counts; a trainer that reads every copy of every shard sees the replay).
REPLAY_TOLERANCE = 0.02


def replay_tokens(shard: Mapping[str, Any]) -> int:
    """Tokens a shard holds at the plan's epochs (its rows × their ``copies``)."""
    return int(shard.get("replay_tokens", shard["tokens"]))


def group_entry(
    plan: GroupPlan, shards: list[dict[str, Any]], fim: dict[str, int] | None, packing: dict[str, Any] | None,
    text_tokens: tuple[int, int] | None = None,
) -> dict[str, Any]:
    """A manifest group from its plan and its shard records (sums taken from the shards).

    ``text_tokens`` is (unique, replayed) tokens of the documents' own text, before FIM's sentinels:
    ``replay_epochs`` is their ratio, so that it counts showings of the same documents in every phase
    (the quantity the cap bounds); without it, the shards' ``n_tokens`` are used."""
    unique = sum(s.get("unique_tokens", s["tokens"]) for s in shards)
    replay = sum(replay_tokens(s) for s in shards)
    e_unique, e_replay = text_tokens if text_tokens is not None else (unique, replay)
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
        "unique_tokens": unique,
        "replay_documents": sum(s.get("replay_documents", s["documents"]) for s in shards),
        "replay_tokens": replay,
        "replay_epochs": round(e_replay / e_unique, 9) if e_unique else 0.0,
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
    tokenizer: str,
    exclusion_reasons: Mapping[str, str] | None = None,
    languages: Mapping[str, Mapping[str, Mapping[str, int]]] | None = None,
    warnings: list[dict[str, Any]] | None = None,
    eod_tokens: int = 1,
    language_epochs: Mapping[str, Mapping[str, float]] | None = None,
) -> dict[str, Any]:
    """The manifest of one phase. ``groups`` come from :func:`group_entry`; ``exclusion_reasons``
    is group → the ledger's reason for a group the policy excludes; ``languages`` is group →
    language → unique documents/tokens (the plan's epochs give the planned tokens); ``language_epochs``
    is group → language → epochs for the groups whose languages have different repeat factors
    (:func:`~curation.mixture.doc_repeats.language_epochs`), the others' languages take the group's."""
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
            d["planned_tokens"] += (language_epochs or {}).get(gname, {}).get(lang, epochs[gname]) * int(v["tokens"])
    planned_all = sum(v["planned_tokens"] for v in per_lang.values()) or 1.0
    lang_out = {k: {"documents": int(v["documents"]), "tokens": int(v["tokens"]), "planned_tokens": int(round(v["planned_tokens"])),
                    "share": round(v["planned_tokens"] / planned_all, 6)} for k, v in sorted(per_lang.items())}
    excluded = [
        {"name": g.group, "documents": g.documents, "tokens": g.tokens,
         "reason": "epoch_cap" if g.capped_out else (exclusion_reasons or {}).get(g.group, "zero_weight")}
        for g in plan.groups if g.weight <= 0
    ]
    replay = sum(g["replay_tokens"] for g in shipped)
    packing: dict[str, Any] = {"mode": spec.packing, "eod_tokens": eod_tokens}
    if spec.packing == "none":
        packing["truncation"] = spec.truncation
    else:
        seqs = sum(g["packing"]["sequences"] for g in shipped if g.get("packing"))
        toks = sum(g["packing"]["tokens"] for g in shipped if g.get("packing"))
        least = sum(g["packing"].get("min_sequences", 0) for g in shipped if g.get("packing"))
        packing.update({
            "algorithm": "best_fit_decreasing (Ding et al. 2024), per group and shard",
            "sequences": seqs, "tokens": toks,
            "fill_rate": round(toks / (seqs * spec.seq_length), 6) if seqs else None,
            "min_sequences": least,  # Σ ⌈shard tokens / seq_length⌉: no packing of these shards uses fewer
            "best_possible_fill_rate": round(toks / (least * spec.seq_length), 6) if least else None,
        })
    return {
        "schema_version": SCHEMA_VERSION,
        "kind": MANIFEST_KIND,
        "phase": spec.name,
        "tokenizer": tokenizer,
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
            "replay_tokens": replay,
            "replay_ratio": round(replay / plan.planned_tokens, 9) if plan.planned_tokens else 0.0,
            "met": plan.budget_met and replay_within(replay, plan.planned_tokens),
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
    }


def replay_within(replay: int, planned: int, tolerance: float = REPLAY_TOLERANCE) -> bool:
    """Whether ``replay`` tokens are within ``tolerance`` of ``planned`` (both zero counts as within)."""
    return abs(replay - planned) <= tolerance * planned if planned else replay == 0


_RECORD_COLUMNS = ("path", "bytes", "sha256", "documents", "tokens", "unique_documents", "unique_tokens", "replay_documents",
                   "replay_tokens", "packing_path", "packing_bytes", "packing_sha256", "sequences", "packing_tokens", "min_sequences")


def group_entries(spec: PhaseSpec, plan: PhasePlan, records: pd.DataFrame) -> tuple[list[dict[str, Any]], dict[str, int]]:
    """The manifest groups of a phase from its shard records (one per written shard), and its FIM counts."""
    entries = []
    fim_total: dict[str, int] = {}
    for gp in plan.groups:
        g = records[records["group"] == gp.group]
        c = {k: g[k].tolist() for k in _RECORD_COLUMNS if k in g.columns}  # columns as lists: itertuples cost more than the rest
        shards = [
            {"path": path, "bytes": int(nbytes), "sha256": sha, "documents": int(docs), "tokens": int(toks),
             "unique_documents": int(udocs), "unique_tokens": int(utoks), "replay_documents": int(rdocs), "replay_tokens": int(rtoks)}
            for path, nbytes, sha, docs, toks, udocs, utoks, rdocs, rtoks in zip(
                c["path"], c["bytes"], c["sha256"], c["documents"], c["tokens"], c["unique_documents"], c["unique_tokens"],
                c["replay_documents"], c["replay_tokens"], strict=True)
        ]
        fim: dict[str, int] = {}
        for raw in g["fim"]:
            for mode, n in json.loads(raw).items():
                fim[mode] = fim.get(mode, 0) + int(n)
                fim_total[mode] = fim_total.get(mode, 0) + int(n)
        packing = None
        files = [
            {"path": path, "bytes": int(nbytes), "sha256": sha, "sequences": int(seqs), "tokens": int(toks), "min_sequences": int(mins)}
            for path, nbytes, sha, seqs, toks, mins in zip(
                c["packing_path"], c["packing_bytes"], c["packing_sha256"], c["sequences"], c["packing_tokens"], c["min_sequences"], strict=True)
            if isinstance(path, str) and path
        ]
        if files:
            seqs = sum(f["sequences"] for f in files)
            toks = sum(f["tokens"] for f in files)
            packing = {"sequences": seqs, "tokens": toks, "fill_rate": round(toks / (seqs * spec.seq_length), 6) if seqs else None,
                       "min_sequences": sum(f["min_sequences"] for f in files), "files": files}
        text = None
        if "text_unique_tokens" in g.columns:
            text = (int(g["text_unique_tokens"].sum()), int(g["text_replay_tokens"].sum()))
        entries.append(group_entry(gp, shards, fim or None, packing, text))
    return entries, fim_total


def with_replay_caps(entries: Mapping[str, tuple[list[dict[str, Any]], Any]], specs: Sequence[PhaseSpec], max_epochs: Mapping[str, float]) -> None:
    """Give every group entry its ``replay_cap``: the cap less what the earlier pre-training phases
    replayed of the group (a group's pre-training phases share one cap and the same documents).
    ``cap`` is the plan's (the cap less the earlier phases' planned epochs); a phase's whole copies
    may use what an earlier phase's copies left below its plan, never more than the cap."""
    used: dict[str, float] = {}
    for spec in specs:
        for g in entries[spec.name][0]:
            if spec.stage != "pretrain":
                g["replay_cap"] = g["cap"]
                continue
            cap = lookup(max_epochs, g["name"], math.inf)
            g["replay_cap"] = None if math.isinf(cap) else round(max(cap - used.get(g["name"], 0.0), 0.0), 9)
            used[g["name"]] = used.get(g["name"], 0.0) + g["replay_epochs"]


def phase_summary(plan: PhasePlan, manifest: Mapping[str, Any]) -> dict[str, Any]:
    """The figures of one phase that ``stats.json`` keeps (budget, tokens, shards, epochs and weights per group)."""
    replayed = {g["name"]: g["replay_tokens"] for g in manifest["groups"]}
    return {
        "budget_tokens": plan.budget_tokens, "planned_tokens": plan.planned_tokens, "budget_met": manifest["budget"]["met"],
        "replay_tokens": manifest["totals"]["replay_tokens"], "languages": manifest["languages"],
        "shard_tokens": manifest["totals"]["tokens"], "shards": manifest["totals"]["shards"],
        "fill_rate": manifest["packing"].get("fill_rate"), "shortfalls": plan.shortfalls,
        "groups": {g.group: {"epochs": round(g.epochs, 6), "weight": round(g.weight, 6), "tokens": g.tokens, "planned_tokens": g.planned_tokens,
                             "replay_tokens": replayed.get(g.group, 0), "cap": None if math.isinf(g.cap) else round(g.cap, 9)}
                   for g in plan.groups},
    }
