"""The documents of the input that no phase takes: their kind is in no phase's mix (ledger
``no_phase``), the outcome of dropping a phase or a kind from a phase's mix. The accounting counts
them (rows of phase :data:`~curation.mixture.accounting.UNPHASED`); a warning per kind says how many,
and the setting that gives the kind a phase again, in the manifests and ``stats.json``.
"""

from __future__ import annotations

import logging
from typing import Any

import pandas as pd

from curation.mixture.accounting import UNPHASED
from curation.mixture.phases import DEFAULT_PHASES, PhaseSpec

log = logging.getLogger(__name__)


def no_phase_warnings(agg: pd.DataFrame, specs: list[PhaseSpec]) -> list[dict[str, Any]]:
    """A warning (also logged) per kind of the input that no phase mixes (the accounting rows of
    phase :data:`~curation.mixture.accounting.UNPHASED`): its documents enter no shard (ledger
    ``no_phase``), the outcome of dropping a phase or a kind from a phase's mix.

    >>> agg = pd.DataFrame({"phase": ["", "", "p1"], "group": ["agent/all", "agent/all", "web/high"],
    ...                     "zero_documents": [2, 1, 0], "zero_tokens": [90, 10, 0]})
    >>> [(w["group"], w["documents"], w["tokens"]) for w in no_phase_warnings(agg, [PhaseSpec("p1", tokens=9, mix={"web": 1.0})])]
    [('agent', 3, 100)]
    """
    rows = agg[agg["phase"] == UNPHASED]
    kinds = (
        rows.assign(kind=rows["group"].str.split("/").str[0])
        .groupby("kind", sort=True)[["zero_documents", "zero_tokens"]]
        .sum()
    )
    out = []
    for kind, r in kinds.iterrows():
        n, tokens = int(r["zero_documents"]), int(r["zero_tokens"])
        if n:
            out.append(
                {
                    "check": "no_phase",
                    "phase": None,
                    "group": kind,
                    "value": n,
                    "limit": 0,
                    "documents": n,
                    "tokens": tokens,
                    "message": (
                        f"{n:,} document(s) of kind {kind} ({tokens:,} tokens) enter no phase, as no phase mixes "
                        f"{kind} (ledger reason no_phase): {_no_phase_advice(str(kind), specs)}"
                    ),
                }
            )
    for w in out:
        log.warning("mixture: %s", w["message"])
    return out


def _no_phase_advice(kind: str, specs: list[PhaseSpec]) -> str:
    """The setting that gives ``kind`` a phase again: the shipped phase that mixes it (dropped, or its
    share of the kind removed), else a share in a phase of the recipe's."""
    names = {s.name for s in specs}
    shipped = [(p, d["mix"][kind]) for p, d in DEFAULT_PHASES.items() if d["mix"].get(kind, 0) > 0]
    said = [
        f"keep phase {p} (the recipe drops it: mixture.phases.{p} is null or enabled: false)"
        if p not in names
        else f"give it a share in phase {p} again (mixture.phases.{p}.mix.{kind}={float(share)}, as shipped)"
        for p, share in shipped
    ]
    return (
        "; or ".join([*said, f"give it a share above 0 in a phase (mixture.phases.<phase>.mix.{kind}=1.0)"])
        + ", or leave it out of the input if that is the intent"
    )
