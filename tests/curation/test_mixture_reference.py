"""The mixture's per-row helpers pinned to the row-by-row forms they replace (kept here as references)."""

from __future__ import annotations

import json
import random

import numpy as np
import pandas as pd

from curation.mixture.annotate import annotate
from curation.mixture.groups import PROVENANCE_COLUMNS, memberships
from curation.mixture.phases import PhaseSpec
from curation.mixture.policy import Policy, doc_groups, exclusion
from curation.mixture.shards import provenance
from curation.schema import DROP_DETAIL, DROP_REASON, DropReason, detail_json


def reference_provenance(df: pd.DataFrame) -> list[str]:
    cols = [c for c in PROVENANCE_COLUMNS if c in df.columns]
    values = {c: df[c].astype(object).tolist() for c in cols}
    out = []
    for i in range(len(df)):
        rec = {}
        for c in cols:
            v = values[c][i]
            if v is None or v is pd.NA or v is pd.NaT or (isinstance(v, float) and np.isnan(v)):
                continue
            rec[c] = v.item() if isinstance(v, np.generic) else v
        out.append(json.dumps(rec, sort_keys=True, ensure_ascii=False, default=str))
    return out


def reference_annotate(df: pd.DataFrame, specs: list[PhaseSpec], policy: Policy, live: set[tuple[str, str]]) -> pd.DataFrame:
    df = df.copy()
    groups = doc_groups(df, policy)
    m = memberships(df, specs, groups)
    in_live = np.array([(p, g) in live for p, g in zip(m["phase"], m["group"], strict=True)], dtype=bool) & (m["repeat"] > 0).to_numpy()
    phases: dict[int, list[str]] = {}
    for row, phase in zip(m["row"][in_live], m["phase"][in_live], strict=True):
        phases.setdefault(int(row), []).append(phase)
    listed = {int(r) for r in m["row"]}
    mixed = {k for s in specs for k, v in s.mix.items() if v > 0}
    reasons: list[str | None] = []
    details: list[str | None] = []
    records = df.to_dict("records") if len(df) else []
    for i, (grp, kind, rep, rule) in enumerate(zip(groups["group"], groups["kind"], groups["repeat"], groups["rule"], strict=True)):
        if i in phases:
            reasons.append(None)
            details.append(None)
        elif rep <= 0:
            reason, detail = exclusion(records[i], grp, kind, rule, policy)
            reasons.append(reason)
            details.append(detail)
        elif i in listed or kind in mixed:
            reasons.append(DropReason.ZERO_WEIGHT.value)
            details.append(detail_json(group=grp, repeat=float(rep), rule="no phase gives its group epochs at this scale"))
        else:
            reasons.append(DropReason.NO_PHASE.value)
            details.append(detail_json(group=grp, kind=kind, phases=[s.name for s in specs]))
    order = [s.name for s in specs]
    df["mixture_group"] = groups["group"].to_numpy()
    df["mixture_phases"] = [",".join(sorted(set(phases[i]), key=order.index)) if i in phases else None for i in range(len(df))]
    df[DROP_REASON] = pd.Series(reasons, index=df.index, dtype=object)
    df[DROP_DETAIL] = pd.Series(details, index=df.index, dtype=object)
    return df


def frame(n: int, seed: int, arrow_strings: bool = False) -> pd.DataFrame:
    rng = random.Random(seed)
    pick = lambda *xs: [rng.choice(xs) for _ in range(n)]  # noqa: E731
    floats = [rng.choice([rng.random() * 10, float("nan"), 1e-7, 3.0, -0.0, float("inf")]) for _ in range(n)]
    df = pd.DataFrame({
        "doc_id": [f"d{i}" for i in range(n)],
        "text": pick("x", "中文 text", "😀", ""),
        "source": pick("web", "code", "math_science", "agent", "reasoning"),
        "n_tokens": [rng.randint(0, 500) for _ in range(n)],
        "quality_level": pick("high", "medium", "low", None),
        "quality_bucket": pick(0, 3, 19),
        "quality_score_fasttext": floats,
        "code_tier": pick("high", "medium", "low", None),
        "code_score_structural": [rng.choice([rng.random() * 10, np.nan]) for _ in range(n)],
        "code_web_recall": pick(True, False, None),
        "edu_score": [rng.choice([rng.random() * 5, np.nan]) for _ in range(n)],
        "edu_band": pick("high", "low", None),
        "edu_rich": pick(True, False),
        "lang": pick("en", "zh", "ü\"\\", None),
        "lang_score": [rng.random() for _ in range(n)],
        "minhash_cluster": [rng.randint(-1, 5) for _ in range(n)],
        "repo": pick("r1", "r2", None),
        "path": pick("a.py", "b/c.go", None),
    })
    df["quality_bucket"] = df["quality_bucket"].astype("int32")
    df["edu_rich"] = df["edu_rich"].astype(bool)
    if arrow_strings:
        for c in ("text", "source", "quality_level", "code_tier", "lang", "edu_band"):
            df[c] = df[c].astype("string[pyarrow]")
    return df


POLICY = Policy(repeat={"web/high": 4.0, "web/medium": 1.0, "web/low": 0.0, "code/low": 0.0, "*": 1.0},
                language_repeat={"zh": 0.0}, language_kinds=("web",))
SPECS = [PhaseSpec("p1", tokens=1000, mix={"web": 1.0, "code": 1.0}), PhaseSpec("p2", tokens=500, mix={"web": 0.5, "agent": 1.0}, stage="midtrain")]


def test_provenance_matches_json_dumps_per_row() -> None:
    for seed, arrow in ((1, False), (2, True), (3, False)):
        df = frame(300, seed, arrow)
        assert provenance(df) == reference_provenance(df)
    for cols in ([], ["lang"], ["edu_score", "minhash_cluster"]):
        df = frame(20, 4)[cols] if cols else pd.DataFrame(index=range(3))
        assert provenance(df) == reference_provenance(df)
    empty = frame(0, 5)
    assert provenance(empty) == reference_provenance(empty) == []
    odd = pd.DataFrame({"lang": pd.Series(["en", pd.NA, None], dtype=object), "semdedup_cluster": pd.array([1, pd.NA, 3], dtype="Int64"),
                        "edu_score": [np.float32(1.5), np.float64(2.25), pd.NaT]})
    assert provenance(odd) == reference_provenance(odd)


def test_annotate_matches_the_per_row_records_form() -> None:
    for seed, arrow in ((1, False), (2, True)):
        df = frame(400, seed, arrow)
        for live in ({("p1", "web/high"), ("p2", "web/high"), ("p2", "agent/all")}, set(), {("p1", "code/high")}):
            pd.testing.assert_frame_equal(annotate(df, SPECS, POLICY, live), reference_annotate(df, SPECS, POLICY, live))
    empty = frame(0, 3)
    pd.testing.assert_frame_equal(annotate(empty, SPECS, POLICY, set()), reference_annotate(empty, SPECS, POLICY, set()))
