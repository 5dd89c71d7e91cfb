import json

import numpy as np
import pandas as pd
import pytest

from curation.dedup.semantic import (
    decide,
    eps_sweep,
    is_duplicate,
    keep_key,
    max_similarity_to_earlier,
    parse_keep,
    similarity_pass,
)


def unit(rows):
    x = np.asarray(rows, dtype=np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def members(ids, keys, source="web", cluster=0, part=0):
    return pd.DataFrame({"doc_id": ids, "_part": part, "source": source, "cluster": cluster, "keep_key": keys})


def test_blocked_pass_equals_dense_triu():
    rng = np.random.default_rng(3)
    x = unit(rng.standard_normal((57, 16)))
    x[40] = x[3]  # a planted exact duplicate
    dense = x @ x.T
    dense[np.tril_indices(len(x))] = -np.inf  # keep j < i only, as triu(X Xᵀ, 1) column-wise
    want_sim = np.concatenate([[-1.0], dense[:, 1:].max(axis=0)])
    want_arg = np.concatenate([[-1], dense[:, 1:].argmax(axis=0)])
    for rows in (1, 7, 64, 1000):
        sim, arg = max_similarity_to_earlier(x, block_rows=rows)
        np.testing.assert_allclose(sim, want_sim, atol=1e-6)
        np.testing.assert_array_equal(arg, want_arg)
    # the memory cap shrinks blocks but not the answer
    sim, arg = max_similarity_to_earlier(x, block_rows=1000, max_elements=100)
    np.testing.assert_array_equal(arg, want_arg)
    assert arg[40] == 3 and sim[40] == pytest.approx(1.0)


def test_keep_rule_farthest_from_centroid_survives():
    # a, b, c are the same page; b is farthest from the centroid (lowest centroid similarity) → kept
    docs = pd.DataFrame({"text": ["x", "y", "z"], "n_tokens": [5, 9, 7]})
    centroid_sim = np.array([0.9, 0.4, 0.7])
    vecs = unit([[1, 0], [1, 0.001], [1, 0.002]])
    for rule, survivor in [("farthest", "b"), ("closest", "a"), ("highest:n_tokens", "b"), ("lowest:n_tokens", "a")]:
        m = members(["a", "b", "c"], keep_key(docs, centroid_sim, rule))
        removed = decide(similarity_pass(m, vecs), eps=0.05)
        assert sorted(removed["doc_id"]) == sorted({"a", "b", "c"} - {survivor}), rule
        assert {json.loads(d)["duplicate_of"] for d in removed["drop_detail"]} == {survivor}


def test_keep_rule_longest_and_nan_loses():
    docs = pd.DataFrame({"text": ["short", "the longest text", "mid text"], "score": [np.nan, 1.0, 2.0]})
    vecs = unit([[1, 0], [1, 0], [1, 0]])
    m = members(["a", "b", "c"], keep_key(docs, np.zeros(3), "longest"))
    assert set(decide(similarity_pass(m, vecs), 0.1)["doc_id"]) == {"a", "c"}
    m = members(["a", "b", "c"], keep_key(docs, np.zeros(3), "highest:score"))
    assert set(decide(similarity_pass(m, vecs), 0.1)["doc_id"]) == {"a", "b"}  # c has the highest score
    m = members(["a", "b", "c"], keep_key(docs, np.zeros(3), "lowest:score"))
    assert set(decide(similarity_pass(m, vecs), 0.1)["doc_id"]) == {"a", "c"}  # NaN never wins


def test_ties_break_by_doc_id_whatever_the_row_order():
    vecs = unit([[1, 0], [1, 0]])
    for ids in (["b", "a"], ["a", "b"]):
        removed = decide(similarity_pass(members(ids, [0.0, 0.0]), vecs), 0.1)
        assert removed["doc_id"].tolist() == ["b"]


def test_tied_keys_keep_the_longer_text_before_doc_id():
    # one vector (a page and its copy cut after the embedder's window); the transformer's cosines to the
    # centroid differ in the last float bits (0.2694425 / 0.26944244 measured), the static model's not at all
    vecs = unit([[1, 0], [1, 0]])
    for keys in ([0.2694425, 0.26944244], [0.5, 0.5], [0.26944244, 0.2694425]):
        m = members(["a-half", "b-page"], keys).assign(length=[500, 1000])
        removed = decide(similarity_pass(m, vecs), 0.1)
        assert removed["doc_id"].tolist() == ["a-half"], keys
        assert json.loads(removed["drop_detail"].iloc[0])["duplicate_of"] == "b-page"
    # keys further apart than the tie decide by themselves
    m = members(["a-half", "b-page"], [0.26, 0.27]).assign(length=[500, 1000])
    assert decide(similarity_pass(m, vecs), 0.1)["doc_id"].tolist() == ["b-page"]


def test_eps_decision_is_strictly_above_one_minus_eps():
    assert is_duplicate(np.array([0.9, 0.9000001, 0.89]), 0.1).tolist() == [False, True, False]
    with pytest.raises(ValueError):
        is_duplicate(np.array([0.5]), 0.0)


def test_decision_follows_chains_to_the_kept_member():
    # keep order a, b, c: b ~ a (0.96), c ~ b (0.96) but c · a = 0.84
    a = np.array([1.0, 0.0])
    b = np.array([np.cos(0.28), np.sin(0.28)])
    c = np.array([np.cos(0.56), np.sin(0.56)])
    sims = similarity_pass(members(["a", "b", "c"], [0.0, 1.0, 2.0]), unit([a, b, c]))
    assert sims.set_index("doc_id").loc["c", "nearest"] == "b"
    removed = decide(sims, eps=0.05).set_index("doc_id")
    assert set(removed.index) == {"b", "c"}
    detail = json.loads(removed.loc["c", "drop_detail"])
    assert detail["duplicate_of"] == "a" and detail["nearest"] == "b"
    assert detail["similarity"] == pytest.approx(np.cos(0.28), abs=1e-3)
    assert detail["cluster"] == 0 and removed.loc["c", "drop_reason"] == "semantic_duplicate"
    # a smaller eps keeps everything: the decision only reads max_sim
    assert decide(sims, eps=0.01).empty


def test_groups_are_source_and_cluster():
    vecs = unit([[1, 0]] * 4)
    m = pd.DataFrame({
        "doc_id": ["w1", "w2", "m1", "w3"], "_part": [0, 1, 0, 1],
        "source": ["web", "web", "math_science", "web"], "cluster": [0, 0, 0, 1], "keep_key": 0.0,
    })
    sims = similarity_pass(m, vecs)
    removed = decide(sims, 0.1)
    # w2 duplicates w1; m1 is alone in (math_science, 0); w3 is alone in cluster 1
    assert removed[["doc_id", "_part"]].values.tolist() == [["w2", 1]]
    assert sims.groupby(["source", "cluster"])["rank"].max().to_dict() == {
        ("math_science", 0): 0, ("web", 0): 1, ("web", 1): 0}


def test_eps_sweep_counts_match_decisions():
    rng = np.random.default_rng(0)
    x = unit(rng.standard_normal((40, 4)))
    sims = similarity_pass(members([f"d{i:02d}" for i in range(40)], rng.random(40)), x)
    sweep = eps_sweep(sims["max_sim"].to_numpy(), [0.01, 0.1, 0.3])
    assert sweep == {f"{e:g}": len(decide(sims, e)) for e in (0.01, 0.1, 0.3)}
    assert sweep["0.01"] <= sweep["0.1"] <= sweep["0.3"]


def test_unknown_keep_rule_and_missing_column():
    with pytest.raises(ValueError, match="keep rule"):
        parse_keep("highest")
    with pytest.raises(KeyError, match="needs column"):
        keep_key(pd.DataFrame({"text": ["a"]}), np.zeros(1), "highest:quality")
