"""Stratified, deterministic sample of documents to annotate."""

from __future__ import annotations

import pandas as pd
import pytest

from classifiers.sampling import allocate, candidates, priority, select, stratified_sample, stratum_counts


def corpus(n_web: int = 300, n_math: int = 40) -> pd.DataFrame:
    rows = [{"doc_id": f"w{i}", "source": "web", "n_tokens": (i * 37) % 6000} for i in range(n_web)]
    rows += [{"doc_id": f"m{i}", "source": "math_science", "n_tokens": (i * 53) % 3000} for i in range(n_math)]
    return pd.DataFrame(rows)


def test_equal_allocation_fills_small_strata_first():
    q = allocate({"a": 100, "b": 3, "c": 50}, 30)
    assert q["b"] == 3 and sum(q.values()) == 30 and abs(q["a"] - q["c"]) <= 1


def test_allocation_never_exceeds_stratum_or_total():
    assert allocate({"a": 2, "b": 1}, 10) == {"a": 2, "b": 1}
    assert sum(allocate({"a": 5, "b": 5, "c": 5}, 4, "proportional").values()) == 4
    assert allocate({}, 5) == {}
    with pytest.raises(ValueError):
        allocate({"a": 1}, 1, "random")


def test_sample_covers_every_source_and_length_stratum():
    df = corpus()
    sample = stratified_sample(df, 24, edges=(256, 1024, 4096), seed=7)
    assert len(sample) == 24 and sample["doc_id"].is_unique
    counts = stratum_counts(df, (256, 1024, 4096))
    assert set(sample["stratum"]) == set(counts.index)


def test_sample_is_deterministic_and_independent_of_partitioning():
    df = corpus()
    whole = stratified_sample(df, 20, seed=3)
    edges, quotas_src = (256, 1024, 4096), stratum_counts(df, (256, 1024, 4096)).to_dict()
    quotas = allocate(quotas_src, 20)
    parts = [df.iloc[:100], df.iloc[100:250], df.iloc[250:]]
    cands = pd.concat([candidates(p, quotas, quotas_src, edges, 3) for p in parts])
    assert select(cands, quotas)["doc_id"].tolist() == whole["doc_id"].tolist()
    assert stratified_sample(df, 20, seed=4)["doc_id"].tolist() != whole["doc_id"].tolist()


def test_candidate_cut_keeps_far_fewer_rows_than_the_corpus():
    df = pd.DataFrame({"doc_id": [f"d{i}" for i in range(20000)], "source": "web", "n_tokens": 100})
    counts = stratum_counts(df, (256,)).to_dict()
    quotas = allocate(counts, 10)
    cands = candidates(df, quotas, counts, (256,), 0)
    assert 10 <= len(cands) < 200


def test_priority_is_uniform_and_stable():
    p = priority([f"d{i}" for i in range(4000)], 1)
    assert 0.45 < p.mean() < 0.55 and p.min() >= 0 and p.max() < 1
    assert priority(["a"], 1)[0] == priority(["a"], 1)[0] != priority(["a"], 2)[0]
