"""The minhash_dedup stage on 2-3 partition inputs: conservation, clusters, resume, CLI."""

import json
import os
import random
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from curation.config import ConfigError
from pipelines import cli
from pipelines.stages import minhash_parts, minhash_steps
from tests.helpers import assert_conservation, docs_frame, make_stage_dir, run_one

DATA = Path(os.environ.get("CURATION_SHARED_DATA") or Path(__file__).resolve().parents[2] / ".." / "shared" / "data")


def _corpus(n_base=24, seed=0):
    """Random-word documents; every third gets 1-3 edited copies (a chain of small edits)."""
    rng = random.Random(seed)
    words = [f"w{i}" for i in range(2000)]
    rows, groups = [], {}
    for i in range(n_base):
        base = [rng.choice(words) for _ in range(150)]
        rows.append({"doc_id": f"b{i:02d}", "text": " ".join(base), "source": "web" if i % 2 else "math_science"})
        groups[f"b{i:02d}"] = f"b{i:02d}"
        cur = list(base)
        for k in range(i % 4 if i % 3 == 0 else 0):
            cur = list(cur)
            cur[10 + 20 * k] = f"edit{k}"
            rows.append({"doc_id": f"b{i:02d}_{k}", "text": " ".join(cur) + " extra" * k, "source": "web"})
            groups[f"b{i:02d}_{k}"] = f"b{i:02d}"
    rng.shuffle(rows)
    return docs_frame(rows), groups


def _run(tmp_path, name, df=None, overrides=(), nparts=3):
    if df is None:
        df, _ = _corpus()
    inp = tmp_path / "in"
    if not inp.exists():
        make_stage_dir(inp, df, nparts=nparts)
    out = tmp_path / name / "out"
    res = run_one("minhash_dedup", inp, out, [f"minhash_dedup.{o}" for o in overrides])
    kept, ledger = assert_conservation(inp, out)
    return res, kept, ledger


def test_planted_near_duplicates_are_removed_with_clusters_and_detail(tmp_path):
    df, groups = _corpus()
    res, kept, ledger = _run(tmp_path, "a", df)
    dup_ids = {d for d, g in groups.items() if d != g}
    # keep=first: the earliest input row of each planted group stays, the others go.
    group_of_row = df["doc_id"].map(groups)
    firsts = set(df.loc[~group_of_row.duplicated(), "doc_id"])
    members = {d for d in df["doc_id"] if (group_of_row == groups[d]).sum() > 1}
    assert set(ledger["doc_id"]) == members - firsts
    assert set(ledger["reason"]) == {"near_duplicate"}
    # keep=first keeps the earliest input row of each cluster; detail names it.
    for _, row in ledger.iterrows():
        detail = json.loads(row["detail"])
        assert groups[detail["duplicate_of"]] == groups[row["doc_id"]]
        assert detail["cluster_size"] >= 2 and detail["jaccard_estimate"] > 0.6  # chains: the keeper may be 2 edits away
    clustered = kept[kept["minhash_cluster"].notna()]
    assert len(clustered) == len({groups[d] for d in dup_ids})
    assert kept.loc[kept["minhash_cluster"].isna(), "doc_id"].map(groups).nunique() == (kept["minhash_cluster"].isna()).sum()
    extra = res.stats["extra"]
    assert extra["lsh"]["bands"] * extra["lsh"]["rows"] <= 128
    assert set(extra["lsh"]["s_curve"]) >= {"0.5", "0.8", "0.95"}
    assert extra["clusters"]["removed"] == len(ledger)
    assert sum(extra["clusters"]["cluster_sizes"].values()) == extra["clusters"]["clusters"]
    assert sum(v["dropped"]["documents"] for v in res.stats["by_source"].values()) == len(ledger)


def test_changing_keep_reuses_signatures_and_edges(tmp_path, monkeypatch):
    _run(tmp_path, "a")

    def boom(*a, **k):
        raise AssertionError("signatures recomputed")

    monkeypatch.setattr(minhash_parts, "signatures", boom)
    monkeypatch.setattr(minhash_parts, "star_edges", boom)
    monkeypatch.setattr(minhash_parts, "verify_mask", boom)
    res, kept, ledger = _run(tmp_path, "a", overrides=["keep=longest"])
    for row in ledger["detail"].map(json.loads):
        assert row["duplicate_of"] in set(kept["doc_id"])
    assert res.stats["config"]["keep"] == "longest"


def test_interrupted_run_resumes_from_finished_sub_steps(tmp_path, monkeypatch):
    def fail(*a, **k):
        raise RuntimeError("killed")

    with monkeypatch.context() as m:
        m.setattr(minhash_parts, "pick_keepers", fail)
        with pytest.raises(RuntimeError, match="killed"):
            _run(tmp_path, "a")
    assert not (tmp_path / "a" / "out" / "_SUCCESS").exists()
    monkeypatch.setattr(minhash_parts, "signatures", fail)
    monkeypatch.setattr(minhash_steps, "union_find_components", fail)
    _, _, ledger = _run(tmp_path, "a")
    assert len(ledger) > 0


def test_distributed_components_equal_union_find(tmp_path):
    _, kept_a, led_a = _run(tmp_path / "x", "a")
    res_b, kept_b, led_b = _run(tmp_path / "y", "b", overrides=["union_find_max_edges=0"])
    assert res_b.stats["extra"]["components"]["method"] == "label_propagation"
    pd.testing.assert_frame_equal(
        led_a.sort_values("doc_id").reset_index(drop=True)[["doc_id", "detail"]],
        led_b.sort_values("doc_id").reset_index(drop=True)[["doc_id", "detail"]],
    )
    assert dict(zip(kept_a["doc_id"], kept_a["minhash_cluster"], strict=True)) == dict(
        zip(kept_b["doc_id"], kept_b["minhash_cluster"], strict=True)
    )


def test_verification_drops_false_candidates_that_lsh_pairs(tmp_path):
    # Pairs at Jaccard ~0.5: explicit wide bands make them LSH candidates.
    rng = random.Random(1)
    rows = []
    for i in range(6):
        base = [f"t{rng.randrange(10**6)}" for _ in range(120)]
        half = base[:80] + [f"u{rng.randrange(10**6)}" for _ in range(40)]
        rows += [{"doc_id": f"a{i}", "text": " ".join(base)}, {"doc_id": f"h{i}", "text": " ".join(half)}]
    df = docs_frame(rows)
    loose = ["bands=64", "rows=2"]
    res, _, ledger = _run(tmp_path, "v", df, overrides=loose)
    assert res.stats["extra"]["edges"]["rejected_pairs"] >= 6
    assert len(ledger) == 0
    _, _, exact = _run(tmp_path, "e", df, overrides=[*loose, "verify=exact"])
    assert len(exact) == 0
    _, _, unverified = _run(tmp_path, "n", df, overrides=[*loose, "verify=none"])
    assert len(unverified) == 6


def _edited_pair(seed, edits, n=200):
    rng = random.Random(seed)
    base = [f"t{rng.randrange(10**6)}" for _ in range(n)]
    other = list(base)
    for i in rng.sample(range(n), edits):
        other[i] = f"x{rng.randrange(10**6)}"
    return " ".join(base), " ".join(other)


def test_default_exact_verification_keeps_pairs_the_estimate_lets_through(tmp_path):
    # Seeds whose pair (7 words of 200 replaced) has an exact 5-gram Jaccard of 0.70-0.72 but a
    # 128-permutation estimate of 0.75-0.80, over the signature cut (0.747); seed 100 has 2 edits (J ~0.9).
    from curation.dedup.lsh import exact_jaccard
    from curation.dedup.minhash import MinHashParams, signatures
    from curation.dedup.shingle_batch import shingle_hashes
    from curation.dedup.shingles import ShingleSpec

    rows, low = [], []
    for seed, edits in ((7, 7), (11, 7), (33, 7), (37, 7), (100, 2)):
        a, b = _edited_pair(seed, edits)
        sig = signatures([a, b], MinHashParams())
        h, off = shingle_hashes([a, b], ShingleSpec.parse("script:5"))
        jac = exact_jaccard(h[off[0] : off[1]], h[off[1] : off[2]])
        if edits == 7:
            assert (sig[0] == sig[1]).mean() >= 0.747 and jac < 0.72, seed  # the premise of the test
            low.append(f"b{seed}")
        else:
            assert jac > 0.85
        rows += [{"doc_id": f"a{seed}", "text": a}, {"doc_id": f"b{seed}", "text": b}]
    df = docs_frame(rows)
    _, _, by_estimate = _run(tmp_path, "sig", df, overrides=["verify=signature"])
    assert set(by_estimate["doc_id"]) == {*low, "b100"}
    res, _, exact = _run(tmp_path, "default", df)
    assert res.stats["extra"]["lsh"]["verify"] == "exact"
    assert set(exact["doc_id"]) == {"b100"}
    assert res.stats["extra"]["edges"]["rejected_pairs"] >= 4


def test_sources_filter_passes_other_sources_through(tmp_path):
    df, groups = _corpus()
    _, kept, ledger = _run(tmp_path, "s", df, overrides=["sources=[math_science]"])
    math_ids = set(df.loc[df["source"] == "math_science", "doc_id"])
    assert set(ledger["doc_id"]) <= math_ids
    assert kept.loc[~kept["doc_id"].isin(math_ids), "minhash_cluster"].isna().all()


def test_documents_without_a_word_are_no_near_duplicates_of_each_other(tmp_path):
    # symbols, emoji and punctuation share no shingle (their only one would be ""), whatever the source
    blank = {"sym-web": ("!!!", "web"), "sym-emoji": ("😀😀😀", "web"), "sym-stars": ("★★★★★ → ← ↑ ↓", "web"),
             "sym-code": ("}}}\n)))", "code"), "sym-dash": ("—", "math_science"), "sym-zwsp": ("\u200b¡¡¡\u200b", "web")}
    df, groups = _corpus()
    df = pd.concat([docs_frame([{"doc_id": k, "text": t, "source": s} for k, (t, s) in blank.items()]), df], ignore_index=True)
    res, kept, ledger = _run(tmp_path, "blank", df)
    assert not set(blank) & set(ledger["doc_id"])
    assert kept.set_index("doc_id").loc[list(blank), "minhash_cluster"].isna().all()
    assert res.stats["extra"]["signatures"]["skipped_no_words"] == len(blank)
    assert res.stats["extra"]["signatures"]["documents"] == len(df) - len(blank)
    planted = df.loc[df["doc_id"].isin(list(groups)), "doc_id"]
    assert set(ledger["doc_id"]) == set(planted[planted.map(groups).duplicated()])  # the planted copies all go (keep=first)


def test_keep_lowest_column_keeps_the_smallest_value(tmp_path):
    df, _ = _corpus()
    df["n_tokens"] = range(len(df))
    _, kept, ledger = _run(tmp_path, "low", df, overrides=["keep=lowest:n_tokens"])
    assert len(ledger)
    by_id = df.set_index("doc_id")["n_tokens"]
    for _, row in ledger.iterrows():
        assert by_id[json.loads(row["detail"])["duplicate_of"]] < by_id[row["doc_id"]]


def test_large_buckets_are_reported_with_star_edges(tmp_path):
    rows = [{"doc_id": f"c{i}", "text": ["alpha beta gamma delta", "one two three four five six"][i % 2]} for i in range(12)]
    res, kept, ledger = _run(tmp_path, "l", docs_frame(rows), overrides=["large_bucket=4"])
    extra = res.stats["extra"]["buckets"]
    assert extra["large_bucket_count"] >= 1 and extra["large_buckets"][0]["size"] == 6
    assert len(kept) == 2 and len(ledger) == 10


def test_char_shingles_per_source_and_keep_highest(tmp_path):
    df, _ = _corpus()
    df["n_tokens"] = range(len(df))
    res, kept, ledger = _run(tmp_path, "c", df, overrides=["source_shingle={web: 'char:6'}", "keep=highest:n_tokens"])
    assert res.stats["extra"]["signatures"]["by_shingle"] == {"shingle:char:6": 24, "shingle:script:5": 12}
    for _, row in ledger.iterrows():
        keeper = json.loads(row["detail"])["duplicate_of"]
        assert df.set_index("doc_id").loc[keeper, "n_tokens"] > df.set_index("doc_id").loc[row["doc_id"], "n_tokens"]


def test_config_errors_say_what_to_change(tmp_path):
    with pytest.raises(ConfigError, match="keep = 'highest:quality' needs column 'quality'"):
        _run(tmp_path, "k", overrides=["keep=highest:quality"])
    with pytest.raises(ConfigError, match="word:5"):
        _run(tmp_path, "k2", overrides=["shingle=words"])
    with pytest.raises(ConfigError, match="verify"):
        _run(tmp_path, "k3", overrides=["verify=maybe"])


def test_cli_runs_the_stage(tmp_path, capsys):
    df, _ = _corpus()
    inp = make_stage_dir(tmp_path / "in", df, nparts=2)
    out = tmp_path / "cli"
    rc = cli.main(["minhash-dedup", "--input", str(inp), "--output", str(out), "--scheduler", "synchronous", "--quiet", "keep=longest"])
    assert rc == 0
    assert "minhash_dedup" in capsys.readouterr().out
    assert_conservation(inp, out)
    stats = json.loads((out / "stats.json").read_text())
    assert stats["config"]["keep"] == "longest" and stats["dropped"]["documents"] > 0
    assert (out / "artifacts" / "signatures" / "signatures.json").exists()


@pytest.mark.slow
def test_distributed_client_gives_the_same_result(tmp_path):
    from distributed import Client, LocalCluster

    _, _, led_sync = _run(tmp_path / "s", "a")
    df, _ = _corpus()
    inp = make_stage_dir(tmp_path / "d" / "in", df, nparts=3)
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=":0") as cluster, Client(cluster) as client:
        run_one("minhash_dedup", inp, tmp_path / "d" / "out", ["minhash_dedup.union_find_max_edges=0"], client=client)
    _, led_dist = assert_conservation(inp, tmp_path / "d" / "out")
    assert sorted(led_sync["detail"]) == sorted(led_dist["detail"])


@pytest.mark.slow
def test_real_web_documents_with_a_planted_copy(tmp_path):
    path = DATA / "web" / "web_docs.parquet"
    if not path.exists():
        pytest.skip("../shared/data is absent")
    web = pd.read_parquet(path, columns=["doc_id", "text"])
    web = web[web["text"].str.len() > 2000].head(150).reset_index(drop=True)
    copy = web.iloc[[3]].assign(doc_id="planted", text=lambda d: d["text"].str.replace(" the ", " a ", n=2, regex=False))
    df = docs_frame(pd.concat([web, copy], ignore_index=True).to_dict("records"))
    _, _, ledger = _run(tmp_path, "r", df)
    assert "planted" in set(ledger["doc_id"]) or web.loc[3, "doc_id"] in set(ledger["doc_id"])


def _sample_through_minhash(tmp_path: Path, name: str) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame, dict]:
    """``curate ingest`` then ``curate minhash-dedup`` on ``sample_data/web/<name>``: kept, ledger, input, metas."""
    sample = Path(__file__).resolve().parents[2] / "sample_data" / "web" / name
    if not sample.exists():
        pytest.skip(f"sample_data/web/{name} is not generated")
    common = ["--scheduler", "synchronous", "--quiet"]
    assert cli.main(["ingest", "--input", str(sample), "--output", str(tmp_path / "00"), *common]) == 0
    assert cli.main(["minhash-dedup", "--input", str(tmp_path / "00"), "--output", str(tmp_path / "20"), *common]) == 0
    kept, ledger = assert_conservation(tmp_path / "00", tmp_path / "20")
    inp = pd.concat([pd.read_parquet(p) for p in sorted((tmp_path / "00" / "docs").glob("*.parquet"))], ignore_index=True)
    return kept, ledger, inp, dict(zip(inp["doc_id"], inp["meta"].map(json.loads), strict=True))


@pytest.mark.slow
def test_cli_on_sample_data_finds_the_planted_near_copies(tmp_path):
    from curation.dedup.shingles import ShingleSpec, shingles

    kept, ledger, inp, meta = _sample_through_minhash(tmp_path, "web.jsonl.gz")
    docs = pd.concat([kept, ledger.rename(columns={"preview": "text"})], ignore_index=True)
    text = dict(zip(inp["doc_id"], inp["text"], strict=True))
    dropped = set(ledger["doc_id"])

    def jaccard(a, b):
        sa, sb = set(shingles(text[a], ShingleSpec())), set(shingles(text[b], ShingleSpec()))
        return len(sa & sb) / len(sa | sb)

    copies = [(d, m["near_duplicate_of"]) for d, m in meta.items() if m.get("kind") == "near_copy" and m.get("near_duplicate_of") in text]
    high = [(d, o) for d, o in copies if jaccard(d, o) >= 0.8]
    assert len(high) >= 15
    assert all(d in dropped or o in dropped for d, o in high)
    # Template pages (5-gram Jaccard 0.43-0.63) are SemDeDup's job, not MinHash's.
    assert not any(meta[d].get("kind") == "template" for d in dropped)
    assert len(docs) == len(inp)


@pytest.mark.slow
def test_distributed_label_propagation_on_chains_and_stars(tmp_path):
    import dask
    import numpy as np

    from curation.dedup.components import union_find_components
    from pipelines.stages.minhash_steps import label_propagation

    chain, u, v, files = _chains_and_stars(tmp_path)
    with dask.config.set(scheduler="synchronous"):
        labels, iterations = label_propagation(files, _ctx(tmp_path, None), 64)
        got = labels.compute().set_index("node")["label"].to_dict()
    nodes, ref = union_find_components(np.array(u), np.array(v))
    assert got == dict(zip(nodes.tolist(), ref.tolist(), strict=True))
    assert set(got[int(n)] for n in chain) == {0} and got[1008] == 1000 and got[2002] == 2000
    assert iterations < 40  # pointer jumping: fewer rounds than the path length


def _chains_and_stars(tmp_path):
    """A 40-node path in random id order, a star of 9 and a path of 3, as three edge files."""
    import numpy as np

    from pipelines.io import write_frame

    rng = np.random.default_rng(0)
    chain = np.arange(40)[rng.permutation(40)]
    u = list(chain[:-1]) + [1000] * 8 + [2000, 2001]
    v = list(chain[1:]) + list(range(1001, 1009)) + [2001, 2002]
    files = []
    for k, idx in enumerate(np.array_split(np.arange(len(u)), 3)):
        path = tmp_path / f"part-{k:05d}.parquet"
        write_frame(pd.DataFrame({"u": np.array(u)[idx], "v": np.array(v)[idx]}), path)
        files.append(str(path))
    return chain, u, v, files


def _ctx(tmp_path, client):
    from pipelines.kit import StageContext

    return StageContext(name="minhash_dedup", work_dir=tmp_path / "w", cache_dir=tmp_path / "c", input_fingerprint="x",
                        client=client, quiet=True)


@pytest.mark.timeout(120)
def test_label_propagation_on_a_cluster_left_with_no_worker_stops(tmp_path, monkeypatch):
    """The rounds' counts are computed as every step's are, their wait watched: on a LocalCluster left
    with no worker the step ends with NoWorkerLeftError (exit 3) instead of waiting for ever."""
    from distributed import Client, LocalCluster

    from pipelines import worker_loss
    from pipelines.stages.minhash_steps import label_propagation

    monkeypatch.setattr(worker_loss, "WATCH_EVERY_S", 0.1)
    monkeypatch.setattr(worker_loss, "STALL_S", 0.5)
    files = _chains_and_stars(tmp_path)[3]
    with (LocalCluster(n_workers=0, processes=False, dashboard_address=":0") as lc, Client(lc) as client,
          pytest.raises(worker_loss.NoWorkerLeftError, match=r"minhash_dedup: components \(round 1\): every worker")):
        label_propagation(files, _ctx(tmp_path, client), 64)


def _han_corpus(n_base=20, seed=1):
    """Chinese-script documents (clauses of ideographs between commas) and one copy of each with 2 % of
    its characters replaced; returns (frame, {copy: original})."""
    rng = random.Random(seed)
    han = [chr(0x4E00 + i) for i in range(3000)]
    rows, pairs = [], {}
    for i in range(n_base):
        chars = [rng.choice(han) for _ in range(600)]
        text = "，".join("".join(chars[j : j + 15]) for j in range(0, 600, 15)) + "。"
        rows.append({"doc_id": f"z{i:02d}", "text": text})
        copy = list(text)
        for p in rng.sample([k for k, c in enumerate(copy) if c not in "，。"], 12):
            copy[p] = rng.choice(han)
        rows.append({"doc_id": f"z{i:02d}~", "text": "".join(copy)})
        pairs[f"z{i:02d}~"] = f"z{i:02d}"
    return docs_frame(rows), pairs


@pytest.mark.parametrize(("spec", "low", "high"), [("script:5", 1.0, 1.0), ("word:5", 0.0, 0.5)])
def test_chinese_near_copies_need_script_shingles(tmp_path, spec, low, high):
    df, pairs = _han_corpus()
    _, _, ledger = _run(tmp_path, spec.replace(":", "_"), df, overrides=[f"shingle={spec}"], nparts=2)
    removed = set(ledger["doc_id"])
    found = np.mean([c in removed or o in removed for c, o in pairs.items()])
    assert low <= found <= high
    assert len(removed) <= len(pairs)  # no two unrelated documents merged


@pytest.mark.slow
def test_real_chinese_sections_with_planted_near_copies_are_found(tmp_path):
    path = DATA / "zh" / "zh_tech_notes.jsonl.gz"
    if not path.exists():
        pytest.skip("../shared/data is absent")
    notes = pd.read_json(path, lines=True).head(30)
    rng = random.Random(0)
    rows, pairs = [], {}
    for r in notes.itertuples():
        rows.append({"doc_id": f"n{r.Index}", "text": r.text})
        han = [k for k, c in enumerate(r.text) if "\u4e00" <= c <= "\u9fff"]
        copy = list(r.text)
        for p in rng.sample(han, max(1, len(han) // 50)):
            copy[p] = rng.choice([r.text[k] for k in han[:200]])
        rows.append({"doc_id": f"n{r.Index}~", "text": "".join(copy)})
        pairs[f"n{r.Index}~"] = f"n{r.Index}"
    _, _, ledger = _run(tmp_path, "zh", docs_frame(rows))
    removed = set(ledger["doc_id"])
    assert np.mean([c in removed or o in removed for c, o in pairs.items()]) >= 0.9


@pytest.mark.slow
def test_cli_on_the_chinese_sample_pages_finds_their_near_copies(tmp_path):
    _, ledger, inp, meta = _sample_through_minhash(tmp_path, "web_zh.jsonl.gz")
    assert (inp["lang"] == "zh").all()
    removed = set(ledger["doc_id"])
    pairs = [(d, m["near_duplicate_of"]) for d, m in meta.items() if m.get("kind") == "near_copy"]
    assert len(pairs) >= 10
    assert np.mean([d in removed or o in removed for d, o in pairs]) >= 0.9
    originals = {m.get("near_duplicate_of") for m in meta.values()} | {m.get("duplicate_of") for m in meta.values()}
    # no article or template page is merged unless it has a planted copy (templates are SemDeDup's job)
    assert not [d for d in removed if meta[d]["kind"] in ("article", "template") and d not in originals]
