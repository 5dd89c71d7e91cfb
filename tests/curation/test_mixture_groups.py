import json

import pandas as pd

from curation.mixture.groups import LONG_GROUP, REPO_GROUP, THREADS_GROUP, assign_shards, doc_groups, memberships
from curation.mixture.phases import PhaseSpec
from curation.mixture.policy import Policy, exclusion


def frame(rows):
    df = pd.DataFrame(rows)
    df["n_tokens"] = df["text"].str.split().str.len().astype("int64")
    return df


def test_one_group_per_document_by_the_documented_precedence():
    df = frame([
        # a recalled code page that is also edu-rich and top level: code_web wins
        {"doc_id": "a", "text": "x", "source": "web", "quality_level": "high", "edu_band": "high", "code_web_recall": "html_tags", "code_tier": "high"},
        # an edu-rich page at the lowest web level: web_edu wins over the level (not excluded by it)
        {"doc_id": "b", "text": "x", "source": "web", "quality_level": "low", "edu_band": "high", "code_web_recall": None},
        {"doc_id": "c", "text": "x", "source": "web", "quality_level": "medium", "edu_band": "medium", "code_web_recall": None},
        {"doc_id": "d", "text": "x", "source": "code", "code_tier": "low"},
        {"doc_id": "e", "text": "x", "source": "math_science", "edu_band": "high"},
        {"doc_id": "f", "text": "x", "source": "agent"},
        {"doc_id": "g", "text": "x", "source": "web", "quality_level": None},
        {"doc_id": "h", "text": "x", "source": "web", "quality_level": "low", "edu_band": "low", "code_web_recall": None},
    ])
    repeat = {"web/low": 0.0, "code/low": 0.0, "code_web/high": 2.0, "web_edu/high": 2.0, "math_science/high": 2.5, "*": 1.0}
    g = doc_groups(df, repeat)
    assert g["group"].tolist() == ["code_web/high", "web_edu/high", "web/medium", "code/low", "math_science/high", "agent/all",
                                   "web/all", "web/low"]
    assert g["repeat"].tolist() == [2.0, 2.0, 1.0, 0.0, 2.5, 1.0, 1.0, 0.0]
    assert g["rule"].tolist()[:3] == ["code_web recall (html_tags)", "edu band", "web level"]
    assert set(g["lang"]) == {"und"}  # no lang column yet: unknown


def test_language_shares_are_configurable_for_web():
    df = frame([
        {"doc_id": "a", "text": "x", "source": "web", "quality_level": "high", "lang": "zh"},
        {"doc_id": "b", "text": "x", "source": "web", "quality_level": "high", "lang": "en"},
        {"doc_id": "c", "text": "x", "source": "web", "quality_level": "high", "lang": None},
        {"doc_id": "d", "text": "x", "source": "math_science", "lang": "zh"},
    ])
    policy = Policy(repeat={"web/high": 4.0, "*": 1.0}, language_repeat={"zh": 1.5, "und": 0.0, "*": 1.0})
    g = doc_groups(df, policy)
    assert g["repeat"].tolist() == [6.0, 4.0, 0.0, 1.0]  # only the web kinds take the language factor
    assert g["lang"].tolist() == ["zh", "en", "und", "zh"]
    reason, detail = exclusion(df.iloc[2].to_dict(), "web/high", "web", "web level", policy)
    assert reason == "zero_weight" and "language_repeat[und]" in detail


def test_exclusions_carry_the_recipe_reason_the_rule_and_the_scores():
    row = {"doc_id": "x", "source": "web", "quality_level": "low", "quality_bucket": 3, "quality_score_heuristics": -1.25,
           "quality_score_linear": float("nan"), "edu_score": 1.5, "text": "…"}
    policy = Policy(repeat={"web/low": 0.0, "code_web/low": 0.0})
    reason, detail = exclusion(row, "web/low", "web", "web level", policy)
    d = json.loads(detail)
    assert reason == "low_quality" and d["rule"] == "mixture.repeat[web/low] = 0" and d["precedence"] == "web level"
    assert d["scores"] == {"quality_level": "low", "quality_bucket": 3, "quality_score_heuristics": -1.25, "edu_score": 1.5}
    assert exclusion({}, "code_web/low", "code_web", "code_web recall (classifier)", policy)[0] == "code_web_low_tier"


def test_missing_columns_mean_defaults():
    df = frame([{"doc_id": "a", "text": "x", "source": "web"}, {"doc_id": "b", "text": "x", "source": "code"}])
    g = doc_groups(df, {"web/all": 2.0})
    assert g["group"].tolist() == ["web/all", "code/all"] and g["repeat"].tolist() == [2.0, 1.0]


def test_memberships_per_builder():
    df = frame([
        {"doc_id": "w", "text": "long " * 50, "source": "web", "repo": None, "meta": None},
        {"doc_id": "c1", "text": "import a", "source": "code", "repo": "o/r", "code_tier": "high", "meta": None},
        {"doc_id": "c2", "text": "junk", "source": "code", "repo": "o/r", "code_tier": "low", "meta": None},
        {"doc_id": "i", "text": "issue", "source": "issues_prs_commits", "repo": None, "meta": '{"repo": "o/r"}'},
        {"doc_id": "g", "text": "trace", "source": "agent", "repo": None, "meta": None},
    ])
    specs = [
        PhaseSpec("p1", tokens=1, mix={"web": 1.0, "code": 1.0}),
        PhaseSpec("repo", stage="midtrain", builder="repo_code", tokens=1, mix={"code": 1.0, "issues_prs_commits": 1.0}),
        PhaseSpec("long", stage="midtrain", builder="long_context", tokens=1, min_tokens=20, mix={"long_docs": 2.0, "agent": 1.0}),
    ]
    m = memberships(df, specs, doc_groups(df, {"code/high": 2.0, "code/low": 0.0}))
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


def test_papers_are_grouped_by_their_edu_band_with_the_math_science_factors():
    """The recipe scores papers (math & science material) with edu_score, but every paper went to
    papers/all at one epoch: the score never reached the mixture. They take their band, as math_science
    does, and the recipe's factors; a paper edu_score did not score stays papers/all."""
    from curation.mixture.phases import DEFAULT_REPEATS
    from pipelines.recipe import load_recipe

    df = frame([{"doc_id": f"p{b}", "text": "x", "source": "papers", "edu_band": b} for b in ("high", "medium", "low", None)])
    recipe = load_recipe("pipelines/configs/glm45.yaml")["stages"]["mixture"]["repeat"]
    for table in (DEFAULT_REPEATS, recipe):
        g = doc_groups(df, table)
        assert g["group"].tolist() == ["papers/high", "papers/medium", "papers/low", "papers/all"]
        assert g["repeat"].tolist() == [table["math_science/high"], table["math_science/medium"], table["math_science/low"], 1.0]
