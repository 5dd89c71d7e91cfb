import numpy as np
import pandas as pd

from curation.mixture import PhaseSpec
from curation.mixture_groups import LONG_GROUP, REPO_GROUP, THREADS_GROUP, assign_shards, doc_groups, memberships


def frame(rows):
    df = pd.DataFrame(rows)
    df["n_tokens"] = df["text"].str.split().str.len().astype("int64")
    return df


def test_groups_from_levels_tiers_bands_and_edu_rich():
    df = frame([
        {"doc_id": "a", "text": "x", "source": "web", "quality_level": "high", "quality_repeat": 3.5, "edu_rich": True},
        {"doc_id": "b", "text": "x", "source": "web", "quality_level": "medium", "quality_repeat": 1.0, "edu_rich": False},
        {"doc_id": "c", "text": "x", "source": "code", "code_tier": "low", "code_repeat": 0.0},
        {"doc_id": "d", "text": "x", "source": "math_science", "edu_band": "high", "edu_repeat": np.nan},
        {"doc_id": "e", "text": "x", "source": "agent"},
        {"doc_id": "f", "text": "x", "source": "web", "quality_level": None, "quality_repeat": np.nan, "edu_rich": None},
    ])
    g = doc_groups(df, {"math_science/high": 2.5, "*": 1.0})
    assert g["group"].tolist() == ["web_edu/high", "web/medium", "code/low", "math_science/high", "agent/all", "web/all"]
    assert g["repeat"].tolist() == [3.5, 1.0, 0.0, 2.5, 1.0, 1.0]  # a missing value falls back to the recipe's table


def test_missing_columns_mean_defaults():
    df = frame([{"doc_id": "a", "text": "x", "source": "web"}, {"doc_id": "b", "text": "x", "source": "code"}])
    g = doc_groups(df, {"web/all": 2.0})
    assert g["group"].tolist() == ["web/all", "code/all"] and g["repeat"].tolist() == [2.0, 1.0]


def test_memberships_per_builder():
    df = frame([
        {"doc_id": "w", "text": "long " * 50, "source": "web", "repo": None, "meta": None},
        {"doc_id": "c1", "text": "import a", "source": "code", "repo": "o/r", "code_tier": "high", "code_repeat": 2.0, "meta": None},
        {"doc_id": "c2", "text": "junk", "source": "code", "repo": "o/r", "code_tier": "low", "code_repeat": 0.0, "meta": None},
        {"doc_id": "i", "text": "issue", "source": "issues_prs_commits", "repo": None, "meta": '{"repo": "o/r"}'},
        {"doc_id": "g", "text": "trace", "source": "agent", "repo": None, "meta": None},
    ])
    specs = [
        PhaseSpec("p1", mix={"web": 1.0, "code": 1.0}),
        PhaseSpec("repo", stage="midtrain", builder="repo_code", mix={"code": 1.0, "issues_prs_commits": 1.0}),
        PhaseSpec("long", stage="midtrain", builder="long_context", min_tokens=20, mix={"long_docs": 2.0, "agent": 1.0}),
    ]
    m = memberships(df, specs, doc_groups(df, {}))
    rows = {(p, df["doc_id"].iloc[r]): (g, u, rep) for r, p, g, u, rep in m[["row", "phase", "group", "unit", "repeat"]].itertuples(index=False)}
    assert rows[("p1", "c2")] == ("code/low", "c2", 0.0)  # kept in the accounting, weight 0
    assert rows[("repo", "c1")] == (REPO_GROUP, "repo:o/r", 1.0)
    assert ("repo", "c2") not in rows  # the low tier stays out of repository documents
    assert rows[("repo", "i")] == (THREADS_GROUP, "repo:o/r", 1.0)  # repository from meta
    assert rows[("long", "w")] == (LONG_GROUP, "w", 1.0)
    assert rows[("long", "g")] == ("agent/all", "g", 1.0)
    assert ("long", "c1") not in rows  # too short
    assert ("p1", "g") not in rows and ("p1", "i") not in rows


def test_shard_assignment_is_stable_and_keeps_a_unit_together():
    m = pd.DataFrame({"phase": "p", "group": "code/repo_level", "unit": ["repo:a", "repo:a", "repo:b", "repo:c"] * 50})
    s1 = assign_shards(m, {("p", "code/repo_level"): 7}, seed=1)
    s2 = assign_shards(m.iloc[::-1].reset_index(drop=True), {("p", "code/repo_level"): 7}, seed=1)[::-1]
    assert (s1 == s2).all() and s1.max() < 7
    assert len(set(s1[m["unit"] == "repo:a"])) == 1
