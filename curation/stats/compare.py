"""Compare two runs: what changed in each stage when a threshold moved.

>>> # a, b = open_run("runs/t08"), open_run("runs/t07")
>>> # config_changes(a, b)            # stage, key, a, b
>>> # compare_runs(a, b)              # kept documents and tokens per stage, side by side
>>> # changed_documents(a, b, "minhash_dedup")   # documents whose fate differs
>>> # input_difference(a, b)         # a sentence when the runs read different input files
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from curation.stats.funnel import drop_reasons, funnel
from curation.stats.run import Run
from curation.stats.run_state import MARKER, read_json

COMPARE_COLUMNS = [
    "stage", "in_a", "in_b", "config_changed",
    "docs_kept_a", "docs_kept_b", "docs_kept_delta", "tokens_kept_a", "tokens_kept_b", "tokens_kept_delta",
]


def flatten(config: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """Nested config → dotted keys.

    >>> flatten({"a": {"b": 1}, "c": [1, 2]})
    {'a.b': 1, 'c': [1, 2]}
    """
    out: dict[str, Any] = {}
    for key, value in config.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict) and value:
            out.update(flatten(value, f"{name}."))
        else:
            out[name] = value
    return out


def config_changes(a: Run, b: Run) -> pd.DataFrame:
    """Stage config keys whose value differs between the runs (from each stats.json), with the recipe keys
    outside a stage's section that it reads (``seed``)."""
    rows = []
    names = _stage_names(a, b)
    for name in names:
        sa, sb = a.stage(name), b.stage(name)
        ca = flatten({**(sa.stats.get("config") or {}), **(sa.stats.get("recipe_keys") or {})}) if sa else {}
        cb = flatten({**(sb.stats.get("config") or {}), **(sb.stats.get("recipe_keys") or {})}) if sb else {}
        if sa is None or sb is None:
            rows.append({"stage": name, "key": "(stage)", "a": "ran" if sa else "absent", "b": "ran" if sb else "absent"})
            continue
        for key in sorted(set(ca) | set(cb)):
            if ca.get(key) != cb.get(key):
                rows.append({"stage": name, "key": key, "a": ca.get(key), "b": cb.get(key)})
    return pd.DataFrame(rows, columns=["stage", "key", "a", "b"])


def input_difference(a: Run, b: Run) -> str | None:
    """A sentence when both runs start with the same stage but read different inputs (the input
    fingerprint in its ``_SUCCESS``): their kept counts then differ for that reason too, which no
    config change shows. None when the inputs are the same or cannot be compared."""
    if not a.stages or not b.stages or a.stages[0].name != b.stages[0].name:
        return None
    fa, fb = (_input_fingerprint(r) for r in (a, b))
    if not fa or not fb or fa == fb:
        return None
    first = a.stages[0].name
    return (f"{a.name} and {b.name} read different inputs ({first}'s input fingerprint {fa[:12]} against {fb[:12]}): "
            "differences in kept documents come from the inputs as well as from any config change; "
            "compare runs over the same --input to see a setting's effect alone")


def _input_fingerprint(run: Run) -> str | None:
    marker = read_json(run.stages[0].folder / MARKER)
    value = marker.get("input_fingerprint") if isinstance(marker, dict) else None
    return str(value) if value else None


def compare_runs(a: Run, b: Run) -> pd.DataFrame:
    """Kept documents and tokens per stage in each run and their difference (b − a)."""
    fa, fb = funnel(a).set_index("stage"), funnel(b).set_index("stage")
    changed = set(config_changes(a, b)["stage"])
    rows = []
    for name in _stage_names(a, b):
        row: dict[str, Any] = {"stage": name, "in_a": name in fa.index, "in_b": name in fb.index, "config_changed": name in changed}
        for col in ("docs_kept", "tokens_kept"):
            va = int(fa.at[name, col]) if name in fa.index else 0
            vb = int(fb.at[name, col]) if name in fb.index else 0
            row.update({f"{col}_a": va, f"{col}_b": vb, f"{col}_delta": vb - va})
        rows.append(row)
    return pd.DataFrame(rows, columns=COMPARE_COLUMNS)


def reason_changes(a: Run, b: Run) -> pd.DataFrame:
    """Dropped documents and tokens per stage and reason in each run, only where they differ."""
    ra = drop_reasons(a).set_index(["stage", "reason"])
    rb = drop_reasons(b).set_index(["stage", "reason"])
    both = ra.merge(rb, how="outer", left_index=True, right_index=True, suffixes=("_a", "_b")).fillna(0).astype("int64").reset_index()
    both["docs_delta"] = both["documents_b"] - both["documents_a"]
    both["tokens_delta"] = both["tokens_b"] - both["tokens_a"]
    both = both[(both["docs_delta"] != 0) | (both["tokens_delta"] != 0)]
    return both[["stage", "reason", "documents_a", "documents_b", "docs_delta", "tokens_a", "tokens_b", "tokens_delta"]].reset_index(drop=True)


def changed_documents(a: Run, b: Run, stage: str) -> pd.DataFrame:
    """Documents dropped by ``stage`` in one run and not the other, or for another reason.

    Columns: ``doc_id``, ``source``, ``n_tokens``, ``reason_a``, ``reason_b`` (null = not dropped
    there), ``preview``.
    """
    cols = ["doc_id", "reason", "source", "n_tokens", "preview"]
    la = a.ledger(stage, cols)[cols] if a.has(stage) else pd.DataFrame(columns=cols)
    lb = b.ledger(stage, cols)[cols] if b.has(stage) else pd.DataFrame(columns=cols)
    m = la.merge(lb, on="doc_id", how="outer", suffixes=("_a", "_b"))
    m = m[m["reason_a"].fillna("") != m["reason_b"].fillna("")]
    out = pd.DataFrame({
        "doc_id": m["doc_id"].astype(object),
        "source": m["source_a"].combine_first(m["source_b"]).astype(object),
        "n_tokens": m["n_tokens_a"].combine_first(m["n_tokens_b"]).astype("int64"),
        "reason_a": m["reason_a"].astype(object).where(m["reason_a"].notna(), None),
        "reason_b": m["reason_b"].astype(object).where(m["reason_b"].notna(), None),
        "preview": m["preview_a"].combine_first(m["preview_b"]).astype(object),
    })
    return out.sort_values("doc_id").reset_index(drop=True)


def _stage_names(a: Run, b: Run) -> list[str]:
    names = [s.name for s in a.stages]
    return names + [s.name for s in b.stages if s.name not in names]
