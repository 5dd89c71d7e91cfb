"""Manifest exports: how a training job reads a phase (Megatron-LM blend, Hugging Face ``interleave_datasets``).

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

from collections.abc import Mapping
from typing import Any


def replay_tokens(shard: Mapping[str, Any]) -> int:
    """Tokens a shard holds at the plan's epochs (its rows × their ``copies``)."""
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
        total = sum(replay_tokens(s) for s in g["shards"])
        if g["weight"] <= 0 or not total:
            continue
        for s in g["shards"]:
            w = g["weight"] * replay_tokens(s) / total
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
