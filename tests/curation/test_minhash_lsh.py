"""LSH parameters and S-curve, star edges, verification, keeper rules, connected components."""

import json

import numpy as np
import pandas as pd
import pytest
from datasketch import MinHashLSH

from curation.dedup.components import initial_labels, propagate, union_find_components
from curation.dedup.lsh import (
    band_hashes,
    band_rows,
    exact_jaccard,
    lsh_params,
    pick_keepers,
    s_curve,
    star_edges,
    verify_mask,
)
from curation.dedup.minhash import MinHashParams, signatures
from curation.dedup.minhash_stats import size_histogram


@pytest.mark.parametrize("threshold", [0.5, 0.55, 0.7, 0.8, 0.9])
def test_lsh_params_are_datasketch_optimum(threshold):
    lsh = MinHashLSH(threshold=threshold, num_perm=128)
    assert lsh_params(threshold, 128) == (lsh.b, lsh.r)


def test_explicit_bands_rows_win_and_are_checked():
    assert lsh_params(0.8, 128, 16, 8) == (16, 8)
    with pytest.raises(ValueError, match="exceeds num_perm"):
        lsh_params(0.8, 128, 20, 8)
    with pytest.raises(ValueError, match="both bands and rows"):
        lsh_params(0.8, 128, 20, None)


def test_s_curve_is_the_banding_probability():
    curve = s_curve(21, 6)
    assert list(curve) == ["0.5", "0.55", "0.6", "0.65", "0.7", "0.75", "0.8", "0.85", "0.9", "0.95"]
    assert curve["0.8"] == pytest.approx(1 - (1 - 0.8**6) ** 21, abs=1e-6)
    assert all(a < b for a, b in zip(list(curve.values())[:-3], list(curve.values())[1:-2], strict=True))


def test_band_hashes_match_on_equal_bands_and_salt_separates_specs():
    sig = np.array([[1, 2, 3, 4], [1, 2, 3, 5], [1, 2, 3, 4]], dtype=np.uint32)
    h = band_hashes(sig, 2, 2, salt=np.array([1, 1, 2], dtype=np.uint64))
    assert h[0, 0] == h[1, 0] and h[0, 1] != h[1, 1]
    assert h[0, 0] != h[2, 0]  # same values, different shingle spec
    rows = band_rows(np.array([10, 11, 12]), sig, 2, 2)
    assert rows.shape == (6, 3) and rows["uid"].tolist() == [10, 10, 11, 11, 12, 12]


def test_star_edges_link_every_member_to_the_first_never_all_pairs():
    members = [5, 3, 9, 7, 4]
    buckets = pd.DataFrame({"band": 0, "band_hash": 42, "uid": members})
    edges, sizes = star_edges(buckets)
    assert edges.values.tolist() == [[3, 4], [3, 5], [3, 7], [3, 9]]  # k - 1 edges, not k(k-1)/2
    assert sizes.tolist() == [5]
    # Singleton buckets give no edges; the same pair in two bands gives one edge.
    two = pd.DataFrame({"band": [0, 0, 1, 1, 2], "band_hash": [1, 1, 2, 2, 3], "uid": [1, 2, 2, 1, 8]})
    edges, sizes = star_edges(two)
    assert edges.values.tolist() == [[1, 2]] and sizes.tolist() == [2, 2]


def test_size_histogram_bins():
    assert size_histogram(np.array([2, 3, 4, 5, 1000])) == {"2": 1, "3-4": 2, "5-8": 1, "513-1024": 1}


def test_verification_drops_false_candidates():
    base = " ".join(f"word{i}" for i in range(200))
    near = base.replace("word50 ", "other ")
    far = " ".join(f"word{i}" for i in range(100)) + " " + " ".join(f"x{i}" for i in range(100))
    sig = signatures([base, near, far], MinHashParams())
    est, keep = verify_mask(sig[[0, 0]], sig[[1, 2]], 0.8)
    assert keep.tolist() == [True, False]
    assert est[0] > 0.9 and est[1] < 0.6
    assert verify_mask(sig[[0]], sig[[2]], None)[1].tolist() == [True]
    assert exact_jaccard(np.array([1, 2, 3, 3]), np.array([3, 2, 9])) == pytest.approx(0.5)


def _members(keys, label=1):
    sig = np.arange(8, dtype=np.uint32)
    other = sig.copy()
    other[:2] = 99
    return pd.DataFrame(
        {
            "label": label,
            "uid": np.arange(len(keys), dtype=np.int64) + label,
            "doc_id": [f"d{i}" for i in range(len(keys))],
            "key": keys,
            "sig": [sig.tobytes()] + [other.tobytes()] * (len(keys) - 1),
        }
    )


def test_keeper_rules_and_ledger_detail():
    m = _members([10.0, 30.0, np.nan])
    first = pick_keepers(m, "first")
    assert first.loc[first["drop_reason"].isna(), "doc_id"].tolist() == ["d0"]
    detail = json.loads(first["drop_detail"].iloc[1])
    assert detail == {"cluster": "d0", "cluster_size": 3, "duplicate_of": "d0", "jaccard_estimate": 0.75}
    assert set(first["minhash_cluster"]) == {"d0"}
    longest = pick_keepers(m, "longest")
    assert longest.loc[longest["drop_reason"].isna(), "doc_id"].tolist() == ["d1"]
    assert json.loads(longest["drop_detail"].iloc[0])["duplicate_of"] == "d1"
    # Ties keep the first; NaN never wins.
    tie = pick_keepers(_members([np.nan, 5.0, 5.0]), "highest:score")
    assert tie.loc[tie["drop_reason"].isna(), "doc_id"].tolist() == ["d1"]
    assert set(tie["drop_reason"].dropna()) == {"near_duplicate"}
    with pytest.raises(ValueError, match="keep must be"):
        pick_keepers(m, "shortest")


def test_keepers_are_per_cluster():
    m = pd.concat([_members([1.0, 2.0], label=1), _members([5.0, 1.0], label=100)], ignore_index=True)
    out = pick_keepers(m, "longest")
    assert out.loc[out["drop_reason"].isna(), "uid"].tolist() == [2, 100]


def test_union_find_on_chains_and_stars():
    chain_u, chain_v = np.arange(0, 9), np.arange(1, 10)
    star_u, star_v = np.full(5, 100), np.arange(101, 106)
    nodes, labels = union_find_components(np.r_[chain_v, star_v], np.r_[chain_u, star_u])
    got = dict(zip(nodes.tolist(), labels.tolist(), strict=True))
    assert all(got[i] == 0 for i in range(10))
    assert all(got[i] == 100 for i in range(100, 106))
    assert union_find_components(np.array([]), np.array([]))[0].size == 0


def test_min_label_propagation_reaches_union_find_on_a_chain():
    u, v = np.arange(6, 0, -1), np.arange(5, -1, -1)  # chain 6-5-4-3-2-1-0
    edges = pd.DataFrame({"u": np.r_[u, v], "v": np.r_[v, u]})
    labels = pd.DataFrame({"node": np.arange(7), "label": np.arange(7)})
    for _ in range(10):
        labels = propagate(edges, labels)
        if (labels["label"] == labels["old"]).all():
            break
        labels = labels[["node", "label"]]
    assert labels["label"].tolist() == [0] * 7


def test_propagation_rounds_reach_union_find_on_chains_and_stars():
    rng = np.random.default_rng(0)
    chain = np.arange(40)[rng.permutation(40)]  # a 40-node path in random id order
    u = np.r_[chain[:-1], [1000] * 8, [2000, 2001]]
    v = np.r_[chain[1:], np.arange(1001, 1009), [2001, 2002]]
    sym = pd.DataFrame({"u": np.r_[u, v], "v": np.r_[v, u]})
    labels, rounds, changed = initial_labels(sym), 0, True
    while changed and rounds < 64:
        new = propagate(sym, labels)
        labels, rounds, changed = new[["node", "label"]], rounds + 1, bool((new["label"] != new["old"]).any())
    nodes, ref = union_find_components(u, v)
    assert labels.set_index("node")["label"].to_dict() == dict(zip(nodes.tolist(), ref.tolist(), strict=True))
    assert rounds < 40  # pointer jumping: fewer rounds than the path length
