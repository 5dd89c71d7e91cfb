"""minhash_dedup removes a document only when its own Jaccard with its keeper reaches the threshold.

A cluster is a connected component of verified pairs, so traces of "the sum of the primes up to n"
for growing n chain into one cluster although the first and the last share little. The tests
build such a chain (real text, real Parquet, the stage run synchronously and on a LocalCluster).
"""

import json
import re

import numpy as np
import pandas as pd
import pytest

from curation.dedup.lsh import pick_keepers
from tests.helpers import assert_conservation, docs_frame, make_stage_dir, run_one

NS = (1000, 1060, 1120, 1220, 1320, 1480)


def _primes(n: int) -> list[int]:
    sieve = np.ones(n + 1, dtype=bool)
    sieve[:2] = False
    for p in range(2, int(n**0.5) + 1):
        if sieve[p]:
            sieve[p * p :: p] = False
    return np.flatnonzero(sieve).tolist()


def _trace(n: int) -> str:
    ps = _primes(n)
    return (f"<think>We need the sum of all primes up to {n}. Sieve of Eratosthenes, then list them: "
            + ", ".join(map(str, ps)) + f". Adding them gives {sum(ps)}.</think> Final answer: {sum(ps)}")


def _jaccard(a: str, b: str) -> float:
    """Word 5-gram Jaccard of the folded texts (the stage's script:5 on ASCII text), written here independently."""
    def grams(t: str) -> set[tuple[str, ...]]:
        w = re.sub(r"[\W_]+", " ", t.lower()).split()
        return {tuple(w[i : i + 5]) for i in range(len(w) - 4)}
    x, y = grams(a), grams(b)
    return len(x & y) / len(x | y)


def _corpus(source: str = "web") -> pd.DataFrame:
    rows = [{"doc_id": f"p{n}", "text": _trace(n), "source": source} for n in NS]
    near = _trace(NS[0]).replace("Adding them gives", "Summing them gives")  # a true near-copy of p1000
    rows.append({"doc_id": "p1000_copy", "text": near, "source": source})
    return docs_frame(rows)


def test_the_chain_is_one_cluster_whose_ends_are_far_apart():
    texts = {n: _trace(n) for n in NS}
    assert all(_jaccard(texts[a], texts[b]) >= 0.8 for a, b in zip(NS, NS[1:], strict=False))
    assert _jaccard(texts[NS[0]], texts[NS[-1]]) < 0.7
    assert _jaccard(texts[NS[0]], _corpus()["text"].iloc[-1]) >= 0.9


@pytest.mark.parametrize("nparts", [1, 3])
def test_members_far_from_their_keeper_stay_and_near_copies_go(tmp_path, nparts):
    df = _corpus()
    inp = make_stage_dir(tmp_path / "in", df, nparts=nparts)
    res = run_one("minhash_dedup", inp, tmp_path / "out", ["minhash_dedup.sources=[]"])
    kept, ledger = assert_conservation(inp, tmp_path / "out")
    # The true copy goes; greedy keepers in input order: p1000 takes p1060, p1120 takes p1220, p1320 takes p1480.
    assert set(ledger["doc_id"]) == {"p1000_copy", "p1060", "p1220", "p1480"}
    assert set(kept["doc_id"]) == {"p1000", "p1120", "p1320"}
    assert {json.loads(d)["duplicate_of"] for d in ledger["detail"]} == {"p1000", "p1120", "p1320"}
    text = dict(zip(df["doc_id"], df["text"], strict=True))
    # Every removal is within the threshold of the document it is removed against, exactly.
    for _, row in ledger.iterrows():
        detail = json.loads(row["detail"])
        assert _jaccard(text[row["doc_id"]], text[detail["duplicate_of"]]) >= 0.8
        assert detail["jaccard"] == pytest.approx(_jaccard(text[row["doc_id"]], text[detail["duplicate_of"]]), abs=1e-4)
        assert detail["duplicate_of"] in set(kept["doc_id"])
    # One cluster (the connected component) named by its first member, with three keepers.
    assert set(kept["minhash_cluster"]) == {"p1000"}
    assert res.stats["extra"]["clusters"]["clusters"] == 1 and res.stats["extra"]["clusters"]["keepers"] == 3


def test_keep_longest_and_a_local_cluster_give_the_same_rule(tmp_path):
    from dask.distributed import Client, LocalCluster

    df = _corpus()
    inp = make_stage_dir(tmp_path / "in", df, nparts=2)
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None) as cluster, Client(cluster) as client:
        run_one("minhash_dedup", inp, tmp_path / "out", ["minhash_dedup.sources=[]", "minhash_dedup.keep=longest"], client=client)
    kept, ledger = assert_conservation(inp, tmp_path / "out")
    # The longest (n = 1480) keeps first and takes p1320; then p1220 takes p1120, p1060 takes p1000 and its copy.
    assert set(kept["doc_id"]) == {"p1480", "p1220", "p1060"}
    text = dict(zip(df["doc_id"], df["text"], strict=True))
    assert all(_jaccard(text[d], text[json.loads(x)["duplicate_of"]]) >= 0.8 for d, x in zip(ledger["doc_id"], ledger["detail"], strict=True))


def test_the_shipped_recipe_leaves_reasoning_and_agent_traces_to_exact_dedup(tmp_path):
    df = pd.concat([_corpus("reasoning"), _corpus("agent").assign(doc_id=lambda d: "a" + d["doc_id"]),
                    _corpus("web").assign(doc_id=lambda d: "w" + d["doc_id"])], ignore_index=True)
    inp = make_stage_dir(tmp_path / "in", df, nparts=2)
    run_one("minhash_dedup", inp, tmp_path / "out")
    kept, ledger = assert_conservation(inp, tmp_path / "out")
    assert set(ledger["source"]) == {"web"} and "wp1000_copy" in set(ledger["doc_id"])
    traces = kept[kept["source"].isin(["reasoning", "agent"])]
    assert len(traces) == 2 * len(NS) + 2 and traces["minhash_cluster"].isna().all()


def test_pick_keepers_with_a_threshold_keeps_each_member_far_from_its_keeper():
    # Signatures of 10 values: a-b and b-c agree on 8 of 10, a-c on 6 of 10.
    a = np.arange(10, dtype=np.uint32)
    b, c = a.copy(), a.copy()
    b[:2] = 100
    c[:4] = 100
    m = pd.DataFrame({"label": [0, 0, 0], "uid": [0, 1, 2], "doc_id": ["a", "b", "c"], "key": [1.0, 2.0, 3.0],
                      "sig": [a.tobytes(), b.tobytes(), c.tobytes()]})
    one = pick_keepers(m, "first")  # no threshold: the whole cluster against its one keeper
    assert one["drop_reason"].notna().tolist() == [False, True, True]
    star = pick_keepers(m, "first", 0.8)
    assert star["drop_reason"].notna().tolist() == [False, True, False]
    longest = pick_keepers(m, "longest", 0.8)  # c keeps, takes b; a is 0.6 from c and stays
    assert longest["drop_reason"].notna().tolist() == [False, True, False]
    assert json.loads(longest["drop_detail"].iloc[1])["duplicate_of"] == "c"


def test_a_cluster_is_split_into_at_most_max_keepers_and_the_rest_keep_themselves():
    """A template cluster whose members sit just under the threshold of each other made one keeper
    each, one comparison with every member left per keeper: time quadratic in its size. Past
    MAX_KEEPERS keepers, the members left keep themselves (none is removed unverified)."""
    import numpy as np

    from curation.dedup.lsh import MAX_KEEPERS, star_keepers

    n = MAX_KEEPERS + 10
    distinct = [np.arange(i * 1000, i * 1000 + 100, dtype=np.uint64) for i in range(n)]  # Jaccard 0 to each other
    sets = list(distinct)
    sets[n - 1] = distinct[n - 2].copy()  # the last two are copies, both past the cap
    sig = np.ones((n, 4), dtype=np.uint32)  # every estimate 1.0: every pair is compared exactly
    keeper, jac = star_keepers(np.zeros(n), np.arange(n), sig, sets, 0.8)
    assert keeper.tolist() == list(range(n))  # the copy past the cap is kept, not removed against no keeper
    assert np.isnan(jac[n - 1]) or jac[n - 1] < 0.8
    small = sets[MAX_KEEPERS - 2 :]  # the same copies inside the cap: removed against their keeper
    k2, j2 = star_keepers(np.zeros(len(small)), np.arange(len(small)), sig[: len(small)], small, 0.8)
    assert k2[-1] == len(small) - 2 and j2[-1] == 1.0
