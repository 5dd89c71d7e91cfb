"""``memberships`` pinned to the form it replaces (kept here as the reference) on varied partitions."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from curation.mixture.groups import (
    LONG_GROUP,
    MEMBER_COLUMNS,
    REPO_GROUP,
    THREADS_GROUP,
    UNPLACED_GROUP,
    _repo_units,
    long_source_kinds,
    memberships,
)
from curation.mixture.phases import DEFAULT_PHASES, PhaseSpec, merged_phases
from curation.mixture.policy import doc_groups
from tests.curation.test_mixture_reference import POLICY, SPECS, frame


def reference_memberships(df: pd.DataFrame, specs: Sequence[PhaseSpec], groups: pd.DataFrame) -> pd.DataFrame:
    """One row per (document, phase) the document enters: ``row`` is its position in ``df``."""
    kind = groups["kind"].to_numpy()
    group = groups["group"].to_numpy()
    repeat = groups["repeat"].to_numpy()
    lang = groups["lang"].to_numpy() if "lang" in groups.columns else np.full(len(df), "und", dtype=object)
    tokens = pd.to_numeric(df["n_tokens"], errors="coerce").fillna(0).astype("int64").to_numpy()
    chars = df["text"].astype(object).map(lambda t: len(t) if isinstance(t, str) else 0).to_numpy(dtype=np.int64)
    ids = df["doc_id"].astype(object).to_numpy()
    long_kinds = long_source_kinds(specs)
    frames: list[pd.DataFrame] = []

    def add(mask: np.ndarray, phase: str, grp: np.ndarray | str, unit: np.ndarray, rep: np.ndarray) -> None:
        if not mask.any():
            return
        frames.append(pd.DataFrame({
            "row": np.flatnonzero(mask).astype(np.int64),
            "phase": phase,
            "group": grp if isinstance(grp, str) else grp[mask],
            "unit": unit,
            "repeat": rep[mask] if isinstance(rep, np.ndarray) else rep,
            "n_tokens": tokens[mask],
            "chars": chars[mask],
            "lang": lang[mask],
        }))

    for spec in specs:
        mixed = {k for k, v in spec.mix.items() if v > 0}
        plain = np.isin(kind, list(mixed))
        if spec.builder == "repo_code":
            code = (kind == "code") & ("code" in mixed) & (repeat > 0)
            units = _repo_units(df, code)  # a file with no repository (doc:<id>) is accounted apart, with repeat 0
            named = np.array([not u.startswith("doc:") for u in units], dtype=bool)
            placed = code.copy()
            placed[code] = named
            add(placed, spec.name, REPO_GROUP, units[named], np.ones(len(df)))
            add(code & ~placed, spec.name, UNPLACED_GROUP, ids[code & ~placed], np.zeros(len(df)))
            threads = (kind == "issues_prs_commits") & ("issues_prs_commits" in mixed)
            add(threads, spec.name, THREADS_GROUP, _repo_units(df, threads), repeat)
            plain &= ~np.isin(kind, ["code", "issues_prs_commits"])
        elif spec.builder == "long_context" and "long_docs" in mixed:
            long = np.isin(kind, list(long_kinds)) & (repeat > 0) & (tokens >= spec.min_tokens)
            add(long, spec.name, LONG_GROUP, ids[long], np.ones(len(df)))
        add(plain, spec.name, group, ids[plain], repeat)
    if not frames:
        return pd.DataFrame({c: pd.Series(dtype=t) for c, t in MEMBER_COLUMNS.items()})
    return pd.concat(frames, ignore_index=True).astype(MEMBER_COLUMNS)



def test_memberships_match_the_reference() -> None:
    all_specs = [SPECS, merged_phases(DEFAULT_PHASES),
                 [PhaseSpec("r", builder="repo_code", mix={"code": 1.0, "issues_prs_commits": 1.0}, stage="midtrain"),
                  PhaseSpec("l", builder="long_context", min_tokens=100, mix={"long_docs": 1.0, "agent": 1.0}, stage="midtrain"),
                  PhaseSpec("p", mix={"web": 1.0, "code": 1.0, "math_science": 1.0})]]
    for seed, n, arrow in ((1, 0, False), (2, 1, True), (3, 50, False), (4, 300, True), (5, 300, False)):
        df = frame(n, seed, arrow)
        if n > 3:
            df.loc[df.index[1], "text"] = None
            df.loc[df.index[2], "source"] = "issues_prs_commits"
            df["meta"] = [None if i % 3 else '{"repo": "m1"}' for i in range(n)]
            df = df.set_axis(np.arange(n) * 2 + 7)
            if seed == 5:  # doc ids missing (None in an object column, NaN in a str column)
                df["doc_id"] = df["doc_id"].astype(object)
                df.loc[df.index[3:6], "doc_id"] = None
            if seed == 4:
                df.loc[df.index[3:6], "doc_id"] = None
        for specs in all_specs:
            groups = doc_groups(df, POLICY)
            new, ref = memberships(df, specs, groups), reference_memberships(df, specs, groups)
            pd.testing.assert_frame_equal(new, ref)
            assert new.dtypes.to_dict() == ref.dtypes.to_dict()
            for c in ("phase", "group", "unit", "lang"):  # missing as the reference has it (None and NaN compare equal above)
                assert [type(v) for v in new[c]] == [type(v) for v in ref[c]]
    text = pd.DataFrame({"doc_id": ["a", "b", "c"], "text": pd.array(["中文😀", None, ""], dtype="string[pyarrow]"),
                         "source": ["web", "web", "web"], "n_tokens": [1, 2, 3]})
    groups = doc_groups(text, POLICY)
    pd.testing.assert_frame_equal(memberships(text, SPECS, groups), reference_memberships(text, SPECS, groups))
    assert memberships(text, SPECS, groups)["chars"].tolist()[:1] == [3]
