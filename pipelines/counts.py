"""The stats a stage's counts fold into (``stats.json``): totals in / kept / dropped by source,
language and reason, and kept tokens per output partition. The driver runs these after every
stage on the rows :func:`pipelines.io.partition_counts` returned for each partition."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd


def kept_tokens_by_part(counts: pd.DataFrame, nparts: int) -> dict[str, list[int]]:
    """Kept tokens per source and output partition (``stats.json``'s ``kept_tokens_by_part``: the
    next stage orders its steps' partitions by them, largest first)."""
    kept = counts[counts["kind"] == "kept"]
    out = {}
    for source, g in kept.groupby("source", sort=True):
        tokens = np.zeros(nparts, dtype=np.int64)
        np.add.at(tokens, g["part"].to_numpy(dtype=np.int64), g["tokens"].to_numpy(dtype=np.int64))
        out[str(source)] = tokens.tolist()
    return out


def summarise_counts(counts: pd.DataFrame) -> dict[str, Any]:
    """Fold per-partition counts into the stats.json layout.

    One groupby, then a loop over its few hundred rows: the driver runs this after every stage
    while the workers wait, and the per-group masks it replaced took 0.1 s a stage with ~60
    languages (benchmarks/recipe). Rows without a source or reason count in the totals only;
    a missing language is ``und``.
    """
    langs = counts["lang"].fillna("und") if "lang" in counts.columns else pd.Series("und", index=counts.index, dtype=object)
    keys = pd.DataFrame({"source": counts["source"], "kind": counts["kind"], "reason": counts["reason"], "lang": langs})
    sums = counts[["documents", "tokens"]].groupby([keys[c] for c in keys.columns], dropna=False, sort=False).sum()
    acc: dict[tuple[Any, ...], list[int]] = {}

    def add(key: tuple[Any, ...], docs: int, tokens: int) -> None:
        slot = acc.setdefault(key, [0, 0])
        slot[0] += docs
        slot[1] += tokens

    for (source, kind, reason, lang), docs, tokens in zip(sums.index, sums["documents"], sums["tokens"], strict=True):
        docs, tokens = int(docs), int(tokens)
        side = kind if kind in ("kept", "dropped") else None
        has_source, has_reason = not pd.isna(source), not pd.isna(reason)
        for key in [("all", "in"), ("lang", str(lang), "in")] + ([("source", str(source), "in")] if has_source else []):
            add(key, docs, tokens)
        if side:
            add(("all", side), docs, tokens)
            add(("lang", str(lang), side), docs, tokens)
            if has_source:
                add(("source", str(source), side), docs, tokens)
        if side == "dropped" and has_reason:
            add(("reason", str(reason)), docs, tokens)
            if has_source:
                add(("source_reason", str(source), str(reason)), docs, tokens)

    def tot(*key: str) -> dict[str, int]:
        docs, tokens = acc.get(key, (0, 0))
        return {"documents": docs, "tokens": tokens}

    def names(kind: str) -> list[str]:
        return sorted({k[1] for k in acc if k[0] == kind})

    reasons = names("reason")
    return {
        "in": tot("all", "in"),
        "kept": tot("all", "kept"),
        "dropped": tot("all", "dropped"),
        "dropped_by_reason": {r: tot("reason", r) for r in reasons},
        "by_source": {
            s: {
                "in": tot("source", s, "in"),
                "kept": tot("source", s, "kept"),
                "dropped": tot("source", s, "dropped"),
                "dropped_by_reason": {r: tot("source_reason", s, r) for r in reasons if ("source_reason", s, r) in acc},
            }
            for s in names("source")
        },
        "by_lang": {g: {"in": tot("lang", g, "in"), "kept": tot("lang", g, "kept"), "dropped": tot("lang", g, "dropped")} for g in names("lang")},
    }


def with_input_tokens(summary: dict[str, Any], recorded: dict[str, Any]) -> dict[str, Any]:
    """``summary`` with its tokens in as the input stage folder kept them (``recorded``: its
    ``stats.json``), where the stage counted some of its documents' tokens again.

    A stage's counts see its output rows, whose ``n_tokens`` a stage may change (``code_web`` counts
    the text it re-parses with code formatting). Left there, "tokens in" would be the re-counted
    figure and would not match the previous stage's kept tokens. So, in the totals and in each
    source and language whose documents are those the input kept, ``in.tokens`` is what came in and
    ``recounted.tokens`` the change: ``in + recounted = kept + dropped``. Without ``recorded``, or
    where the documents differ (an input no stage wrote), the summary is left as it is.

    >>> s = {"in": {"documents": 2, "tokens": 12}, "kept": {"documents": 2, "tokens": 12}, "by_source": {}, "by_lang": {}}
    >>> with_input_tokens(s, {"kept": {"documents": 2, "tokens": 10}})["recounted"]
    {'tokens': 2}
    >>> s["in"]
    {'documents': 2, 'tokens': 10}
    """
    def kept(block: Any) -> Any:
        return block.get("kept") if isinstance(block, dict) else None

    def settle(block: dict[str, Any], came: Any) -> None:
        if (not isinstance(came, dict) or came.get("documents") != block["in"]["documents"]
                or not isinstance(came.get("tokens"), int)):
            return
        change = int(block["in"]["tokens"]) - came["tokens"]
        if change:
            block["in"] = {"documents": block["in"]["documents"], "tokens": came["tokens"]}
            block["recounted"] = {"tokens": change}

    if not isinstance(recorded, dict) or not recorded:
        return summary
    settle(summary, kept(recorded))
    for part in ("by_source", "by_lang"):
        was = recorded.get(part)
        for key, block in summary.get(part, {}).items():
            settle(block, kept(was.get(key)) if isinstance(was, dict) else None)
    return summary
