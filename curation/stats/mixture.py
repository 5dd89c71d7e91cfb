"""Per-phase mixture composition from the manifests: tokens, weights and epochs by group.

>>> # mixture_phases(run)        # one row per phase: budget, planned tokens, shortfall, packing
>>> # mixture_composition(run)   # one row per phase × group: tokens, weight, epochs, cap
>>> # mixture_replay(run)        # one row per phase × group: planned against replayed tokens, shares, epochs, cap
>>> # mixture_by_kind(run)       # per phase and kind (source): tokens, share, epochs
>>> # pretrain_epochs(run)       # epochs of each group summed over the pre-training phases
>>> # mixture_languages(run)     # per phase and language: documents, tokens, planned tokens, share
>>> # mixture_exclusions(run)    # the mixture policy's exclusions: reason × group, documents, tokens
>>> # mixture_warnings(run)      # the plan's checks (top web level epochs, concentration)

Manifests follow ``curation/schemas/manifest.schema.json`` (written by the mixture stage to
``80_mixture/manifests/*.json``); every number here is a manifest field or a sum of them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd

from curation.errors import read_json_file
from curation.stats.run import Run

PHASE_COLUMNS = [
    "phase", "stage", "builder", "seq_length", "packing", "fill_rate", "full_scale_tokens", "recipe_scale", "budget_tokens",
    "planned_tokens", "replay_tokens", "unique_tokens", "budget_met", "documents", "tokens", "shards", "bytes", "shortfall_tokens",
]
GROUP_COLUMNS = [
    "phase", "group", "kind", "sub", "shipped", "documents", "tokens", "unique_tokens", "planned_tokens",
    "token_share", "weight", "repeat", "nominal_epochs", "epochs", "cap", "shortfall_tokens",
]


def manifest_paths(run: Run) -> list[Path]:
    """Manifest files of the run's current stages (``<stage folder>/manifests/*.json``), sorted by
    name. A mixture folder left out as stale (an earlier stage re-run since) has none here: its
    manifests describe another run's documents."""
    return sorted(p for s in run.stages for p in s.folder.glob("manifests/*.json"))


def manifests(run: Run) -> dict[str, dict[str, Any]]:
    """Phase name → manifest, in the order of the phases' files."""
    out = {}
    for path in manifest_paths(run):
        manifest = read_json_file(path)
        out[str(manifest.get("phase") or path.stem)] = manifest
    return out


def mixture_phases(run: Run) -> pd.DataFrame:
    """One row per phase: budget, planned and unique tokens, shipped totals, packing, shortfall."""
    rows = []
    for phase, m in manifests(run).items():
        budget, totals, packing = m.get("budget", {}), m.get("totals", {}), m.get("packing", {})
        rows.append({
            "phase": phase,
            "stage": m.get("stage"),
            "builder": m.get("builder"),
            "seq_length": m.get("seq_length"),
            "packing": packing.get("mode"),
            "fill_rate": packing.get("fill_rate"),
            "full_scale_tokens": budget.get("full_scale_tokens"),
            "recipe_scale": budget.get("recipe_scale"),
            "budget_tokens": budget.get("tokens"),
            "planned_tokens": budget.get("planned_tokens"),
            "replay_tokens": totals.get("replay_tokens"),
            "unique_tokens": budget.get("unique_tokens"),
            "budget_met": budget.get("met"),
            "documents": totals.get("documents"),
            "tokens": totals.get("tokens"),
            "shards": totals.get("shards"),
            "bytes": totals.get("bytes"),
            "shortfall_tokens": sum(int(s.get("tokens", 0)) for s in m.get("shortfalls", [])),
        })
    return pd.DataFrame(rows, columns=PHASE_COLUMNS)


def mixture_composition(run: Run) -> pd.DataFrame:
    """One row per phase × group (shipped groups, then excluded ones with weight 0).

    ``token_share`` is the group's share of the phase's planned tokens (what training sees).
    """
    rows = []
    for phase, m in manifests(run).items():
        planned_total = sum(int(g.get("planned_tokens", 0)) for g in m.get("groups", []))
        for g in m.get("groups", []):
            kind, _, sub = str(g["name"]).partition("/")
            rows.append({
                "phase": phase, "group": g["name"], "kind": g.get("kind", kind), "sub": sub, "shipped": True,
                "documents": g.get("documents"), "tokens": g.get("tokens"), "unique_tokens": g.get("unique_tokens"),
                "planned_tokens": g.get("planned_tokens"),
                "token_share": g.get("planned_tokens", 0) / planned_total if planned_total else 0.0,
                "weight": g.get("weight"), "repeat": g.get("repeat"), "nominal_epochs": g.get("nominal_epochs"),
                "epochs": g.get("epochs"), "cap": g.get("cap"), "shortfall_tokens": g.get("shortfall_tokens", 0),
            })
        for g in m.get("excluded_groups", []):
            kind, _, sub = str(g["name"]).partition("/")
            rows.append({
                "phase": phase, "group": g["name"], "kind": kind, "sub": sub, "shipped": False,
                "documents": g.get("documents"), "tokens": g.get("tokens"), "unique_tokens": g.get("tokens"),
                "planned_tokens": 0, "token_share": 0.0, "weight": 0.0, "repeat": None, "nominal_epochs": None,
                "epochs": 0.0, "cap": None, "shortfall_tokens": 0,
            })
    out = pd.DataFrame(rows, columns=GROUP_COLUMNS)
    out["shipped"] = out["shipped"].astype(bool)  # empty, it would be object: comp[comp["shipped"]] then selects columns
    return out


REPLAY_COLUMNS = ["phase", "group", "planned_tokens", "replay_tokens", "planned_share", "replay_share", "epochs", "replay_epochs",
                  "cap", "replay_cap", "off"]


def mixture_replay(run: Run) -> pd.DataFrame:
    """One row per phase × shipped group, then one ``(phase)`` row per phase: the plan (tokens,
    share, epochs) next to what the shards replay (Σ copies × tokens), the plan's cap and the replay's
    (the cap less the earlier pre-training phases' replayed epochs), and ``off``
    (replayed / planned − 1; within ±0.02 the manifest counts the plan as met)."""
    rows = []
    for phase, m in manifests(run).items():
        groups = m.get("groups", [])
        planned = sum(int(g.get("planned_tokens", 0)) for g in groups)
        replay = sum(int(g.get("replay_tokens", 0)) for g in groups)
        for g in groups:
            p, r = int(g.get("planned_tokens", 0)), int(g.get("replay_tokens", 0))
            rows.append({
                "phase": phase, "group": g["name"], "planned_tokens": p, "replay_tokens": r,
                "planned_share": p / planned if planned else 0.0, "replay_share": r / replay if replay else 0.0,
                "epochs": g.get("epochs"), "replay_epochs": g.get("replay_epochs"), "cap": g.get("cap"),
                "replay_cap": g.get("replay_cap", g.get("cap")), "off": r / p - 1 if p else None,
            })
        rows.append({"phase": phase, "group": "(phase)", "planned_tokens": planned, "replay_tokens": replay, "planned_share": 1.0 if planned else 0.0,
                     "replay_share": 1.0 if replay else 0.0, "epochs": None, "replay_epochs": None, "cap": None, "replay_cap": None, "off": replay / planned - 1 if planned else None})
    return pd.DataFrame(rows, columns=REPLAY_COLUMNS)


def mixture_by_kind(run: Run) -> pd.DataFrame:
    """Per phase and kind (source; ``web_edu`` for edu-rich web): unique and planned tokens, share, epochs.

    ``epochs`` is planned / unique tokens: how many times the kind's tokens are seen in the phase.
    """
    comp = mixture_composition(run)
    comp = comp[comp["shipped"]] if len(comp) else comp
    if comp.empty:
        return pd.DataFrame(columns=["phase", "kind", "documents", "tokens", "planned_tokens", "token_share", "epochs"])
    out = comp.groupby(["phase", "kind"], sort=False)[["documents", "tokens", "planned_tokens"]].sum().reset_index()
    out["token_share"] = out["planned_tokens"] / out.groupby("phase")["planned_tokens"].transform("sum")
    out["epochs"] = out["planned_tokens"] / out["tokens"].where(out["tokens"] > 0)
    return out


def pretrain_epochs(run: Run) -> pd.DataFrame:
    """Epochs of each group per pre-training phase and in total (the recipe's 'over pre-training').

    Columns: ``group``, one column per pre-training phase, ``total``.
    """
    comp = mixture_composition(run)
    phases = mixture_phases(run)
    pre = phases.loc[phases["stage"] == "pretrain", "phase"].tolist()
    comp = comp[comp["phase"].isin(pre) & comp["shipped"]]
    if comp.empty:
        return pd.DataFrame(columns=["group", *pre, "total"])
    table = comp.pivot_table(index="group", columns="phase", values="epochs", aggfunc="sum", fill_value=0.0)
    table = table.reindex(columns=[p for p in pre if p in table.columns])
    table["total"] = table.sum(axis=1)
    return table.sort_values("total", ascending=False).reset_index().rename_axis(columns=None)


def mixture_shortfalls(run: Run) -> pd.DataFrame:
    """Every shortfall every manifest states: phase, group, reason, tokens, cap, wanted epochs."""
    rows = [
        {"phase": phase, "group": s.get("group"), "reason": s.get("reason"), "tokens": s.get("tokens"),
         "cap": s.get("cap"), "wanted_epochs": s.get("wanted_epochs")}
        for phase, m in manifests(run).items() for s in m.get("shortfalls", [])
    ]
    return pd.DataFrame(rows, columns=["phase", "group", "reason", "tokens", "cap", "wanted_epochs"])


def mixture_languages(run: Run) -> pd.DataFrame:
    """Per phase and language (``lang``, ``und`` when unknown): unique documents and tokens, planned tokens, share."""
    rows = [
        {"phase": phase, "lang": lang, **{k: v.get(k) for k in ("documents", "tokens", "planned_tokens", "share")}}
        for phase, m in manifests(run).items() for lang, v in (m.get("languages") or {}).items()
    ]
    return pd.DataFrame(rows, columns=["phase", "lang", "documents", "tokens", "planned_tokens", "share"])


def mixture_warnings(run: Run) -> pd.DataFrame:
    """The plan's checks every manifest states (a run-wide check appears once)."""
    seen, rows = set(), []
    for m in manifests(run).values():
        for w in m.get("warnings") or []:
            key = (w.get("check"), w.get("phase"), w.get("group"))
            if key in seen:
                continue
            seen.add(key)
            rows.append({"check": w.get("check"), "phase": w.get("phase") or "pre-training", "group": w.get("group"),
                         "value": w.get("value"), "limit": w.get("limit"), "message": w.get("message")})
    return pd.DataFrame(rows, columns=["check", "phase", "group", "value", "limit", "message"])


def mixture_exclusions(run: Run) -> pd.DataFrame:
    """What the mixture policy excluded: per reason and group, documents and tokens, and the rule."""
    ledger = run.ledger("mixture", ["doc_id", "reason", "detail", "n_tokens"]) if run.has("mixture") else pd.DataFrame()
    cols = ["reason", "group", "rule", "documents", "tokens"]
    if ledger.empty:
        return pd.DataFrame(columns=cols)
    details = [json.loads(d) if isinstance(d, str) and d.startswith("{") else {} for d in ledger["detail"]]
    frame = pd.DataFrame({
        "reason": ledger["reason"].to_numpy(), "group": [d.get("group") for d in details], "rule": [d.get("rule") for d in details],
        "documents": 1, "tokens": pd.to_numeric(ledger["n_tokens"], errors="coerce").fillna(0).astype("int64").to_numpy(),
    })
    out = frame.groupby(["reason", "group", "rule"], dropna=False, sort=True)[["documents", "tokens"]].sum().reset_index()
    return out.sort_values("tokens", ascending=False).reset_index(drop=True)[cols]
