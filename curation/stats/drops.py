"""Dropped documents: ledger details, and examples of what each stage dropped and why.

>>> parse_detail('{"duplicate_of": "a"}')
{'duplicate_of': 'a'}
>>> # drop_examples(open_run("runs/sample"), "exact_duplicate", n=3)   # with the kept duplicate's preview
"""

from __future__ import annotations

import json
from typing import Any

import pandas as pd

from curation.stats.funnel import drop_reasons
from curation.stats.run import Run

#: Ledger detail keys that name the document a duplicate was removed in favour of.
KEPT_KEYS = ("duplicate_of", "kept", "kept_id", "keeper", "kept_doc_id")


def parse_detail(detail: Any) -> dict[str, Any]:
    """A ledger ``detail`` JSON string as a dict ({} when null or not JSON).

    >>> parse_detail('{"duplicate_of": "a"}')
    {'duplicate_of': 'a'}
    """
    if not isinstance(detail, str) or not detail:
        return {}
    try:
        value = json.loads(detail)
    except json.JSONDecodeError:
        return {"detail": detail}
    return value if isinstance(value, dict) else {"detail": value}


def kept_id(detail: dict[str, Any]) -> str | None:
    """The kept document a removed duplicate points to, whatever key its stage used."""
    for key in KEPT_KEYS:
        value = detail.get(key)
        if isinstance(value, str):
            return value
    return None


def drop_examples(
    run: Run, reason: str, n: int = 5, stage: str | None = None, source: str | None = None, seed: int = 0
) -> pd.DataFrame:
    """A deterministic sample of ``n`` ledger rows with ``reason``, with the kept duplicate's preview.

    Columns: ``stage``, ``doc_id``, ``source``, ``n_tokens``, ``preview``, ``detail`` (dict),
    ``kept_id`` and ``kept_preview`` (the document a duplicate lost to, read from that stage's
    ``docs/``; null for reasons that are not duplicates).
    """
    ledger = run.ledger(stage)
    rows = ledger[ledger["reason"] == reason]
    if source is not None:
        rows = rows[rows["source"] == source]
    if len(rows) > n:
        rows = rows.sample(n=n, random_state=seed)
    rows = rows.sort_values(["stage", "doc_id"]).reset_index(drop=True)
    details = [parse_detail(d) for d in rows["detail"]]
    out = pd.DataFrame(
        {
            "stage": rows["stage"].astype(object),
            "doc_id": rows["doc_id"].astype(object),
            "source": rows["source"].astype(object),
            "n_tokens": rows["n_tokens"].astype("int64"),
            "preview": rows["preview"].astype(object) if "preview" in rows else None,
            "detail": details,
            "kept_id": [kept_id(d) for d in details],
        }
    )
    out["kept_preview"] = _kept_previews(run, out)
    return out


def _kept_previews(run: Run, rows: pd.DataFrame) -> list[str | None]:
    previews: dict[tuple[str, str], str] = {}
    for stage_name, group in rows.groupby("stage"):
        ids = sorted({i for i in group["kept_id"] if isinstance(i, str)})
        if not ids:
            continue
        found = run.docs(str(stage_name), ["doc_id", "text"], ids=ids)
        for doc_id, text in zip(found.get("doc_id", []), found.get("text", []), strict=True):
            previews[(str(stage_name), doc_id)] = text[:300] if isinstance(text, str) else None
    return [previews.get((s, k)) if isinstance(k, str) else None for s, k in zip(rows["stage"], rows["kept_id"], strict=True)]


def reason_examples(run: Run, n: int = 3, seed: int = 0) -> dict[tuple[str, str], pd.DataFrame]:
    """``drop_examples`` for every (stage, reason) of the run, in funnel order."""
    out = {}
    for row in drop_reasons(run).itertuples():
        out[(row.stage, row.reason)] = drop_examples(run, row.reason, n=n, stage=row.stage, seed=seed)
    return out
