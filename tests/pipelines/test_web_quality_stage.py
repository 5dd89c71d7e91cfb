"""The web_quality stage on 2-partition frames: conservation, pass-through, annotation only, cached re-bucketing."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from classifiers import web_quality
from curation.config import ConfigError
from tests.helpers import assert_conservation, docs_frame, make_stage_dir, read_parts, run_one

PROSE = [
    "The council approved the new library after a long debate. It will open next year, and the old "
    "building will become a museum of local history. Residents said they were pleased with the plan.",
    "Researchers measured the temperature of the lake every morning for three years. They found that "
    "the water warmed faster in spring than in autumn, which surprised them.",
    "The recipe needs flour, butter and two eggs. Mix them slowly, then bake the dough for twenty "
    "minutes until it is golden. Let it cool before you cut it.",
]
JUNK = [
    "Home\nProducts\nCART (0)\nLOGIN\nContact",
    "SALE SALE SALE\nclick here\n$$$ 50% OFF\nBUY NOW",
    "Menu\nAbout\nPrivacy Policy\nTerms of use\nSitemap",
]


def corpus(n: int = 40) -> pd.DataFrame:
    rows = []
    for i in range(n):
        text = (PROSE if i % 2 else JUNK)[i % 3] + f"\nref {i}"
        rows.append({"doc_id": f"w{i:02d}", "text": text, "source": "web", "lang": "en"})  # as ingest identified them
    rows += [{"doc_id": "c0", "text": "def f():\n    return 1\n", "source": "code"},
             {"doc_id": "m0", "text": "Let x be a prime.", "source": "math_science"}]
    return docs_frame(rows)


def run(tmp_path: Path, name: str, overrides: list[str] | None = None, df: pd.DataFrame | None = None):
    inp = tmp_path / "in"
    if not inp.exists():
        make_stage_dir(inp, corpus() if df is None else df, nparts=2)
    res = run_one("web_quality", inp, tmp_path / name, overrides)
    kept, ledger = assert_conservation(inp, tmp_path / name)
    return res, kept, ledger


def test_conserves_and_passes_other_sources_through(tmp_path: Path) -> None:
    res, kept, ledger = run(tmp_path, "out")
    others = kept[kept["source"] != "web"]
    assert sorted(others["doc_id"]) == ["c0", "m0"]
    assert others["quality_score_heuristics"].isna().all() and others["quality_level"].isna().all()
    assert others["quality_bucket"].isna().all() and "quality_repeat" not in kept.columns  # sampling is the mixture's
    web = kept[kept["source"] == "web"]
    assert web["quality_score_heuristics"].notna().all() and web["quality_score_linear"].notna().all()
    assert web["quality_bucket"].between(0, 19).all()
    assert "quality_signal_stop_word_frac" in kept.columns
    # the level and bucket columns agree with the recipe's mapping, the low level included
    for _, r in web.iterrows():
        b = int(r["quality_bucket"])
        assert r["quality_level"] == ("high" if b == 19 else "medium_high" if b == 18 else "medium" if b >= 12 else
                                      "medium_low" if b >= 7 else "low")
    assert len(ledger) == 0 and len(web) == 40  # a scorer annotates; the mixture policy excludes the low level
    assert "low" in set(web["quality_level"]) and res.stats["extra"]["levels"]["low"]["documents"] > 0


def test_signal_columns_are_kept_when_the_first_partition_has_no_web_page(tmp_path: Path) -> None:
    web = corpus()
    web = web[web["source"] == "web"]
    code = docs_frame([{"doc_id": f"c{i}", "text": f"def f{i}():\n    return {i}\n", "source": "code"} for i in range(len(web))])
    _, kept, _ = run(tmp_path, "out", df=pd.concat([code, web], ignore_index=True))  # partition 0: code only
    assert "quality_signal_stop_word_frac" in kept.columns
    assert kept.loc[kept["source"] == "web", "quality_signal_stop_word_frac"].notna().all()
    assert kept.loc[kept["source"] == "code", "quality_signal_stop_word_frac"].isna().all()


def test_prose_ranks_above_menus(tmp_path: Path) -> None:
    _, kept, _ = run(tmp_path, "out")
    menus = {f"w{i:02d}" for i in range(0, 40, 2)}
    levels = kept.set_index("doc_id")["quality_level"]
    # the menus hold ~20 % of the web tokens, below the 35 % that buckets 0-6 (low) take: all at the low level
    assert set(levels.loc[sorted(menus)]) == {"low"}
    s = kept.set_index("doc_id")["quality_score_heuristics"]
    prose = [d for d in s.index if d.startswith("w") and d not in menus]
    assert s.loc[prose].min() > s.loc[sorted(menus)].max()


def test_low_pages_keep_their_level_bucket_and_every_score(tmp_path: Path) -> None:
    _, kept, _ = run(tmp_path, "out")
    low = kept[kept["quality_level"] == "low"]
    assert len(low) and low["quality_bucket"].between(0, 6).all()
    assert low["quality_score_heuristics"].notna().all() and low["quality_score_linear"].notna().all()


def test_rebucketing_reuses_the_scores(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    res1, kept1, ledger1 = run(tmp_path, "out")
    assert res1.stats["extra"]["scored_documents"] == {"heuristics": 40, "linear": 40}

    def boom(*args, **kwargs):
        raise AssertionError("a model ran again although only decisions changed")

    monkeypatch.setattr(web_quality.HeuristicsScorer, "score_details", boom)
    monkeypatch.setattr(web_quality.LinearScorer, "score", boom)
    overrides = ["web_quality.levels={high: [17, 19], medium_high: [15, 16], medium: [10, 14], medium_low: [5, 9], low: [0, 4]}"]
    res2, kept2, ledger2 = run(tmp_path, "out2", overrides)
    # the reused step reports the figures it returned when it ran (the kit merges them either way)
    assert res2.stats["extra"]["scored_documents"] == res1.stats["extra"]["scored_documents"]
    scores1 = kept1.set_index("doc_id")["quality_score_linear"]
    all2 = pd.concat([kept2, read_parts(tmp_path / "out2" / "ledger")], ignore_index=True)
    assert set(all2["doc_id"]) == set(kept1["doc_id"]) | set(ledger1["doc_id"])
    same = kept2.set_index("doc_id")["quality_score_linear"].reindex(scores1.index).dropna()
    np.testing.assert_allclose(same, scores1.loc[same.index])
    b = kept2.dropna(subset=["quality_bucket"]).set_index("doc_id")
    assert (b.loc[b["quality_bucket"] >= 17, "quality_level"] == "high").all()  # the new mapping
    assert (b.loc[b["quality_bucket"] <= 4, "quality_level"] == "low").all() and len(ledger2) == len(ledger1) == 0


def test_fixed_thresholds_and_combine_max(tmp_path: Path) -> None:
    cuts = "[" + ", ".join(str(x) for x in np.linspace(-2.0, 2.0, 19)) + "]"
    res, kept, _ = run(tmp_path, "fixed", [f"web_quality.thresholds={{heuristics: {cuts}}}", "web_quality.scorers=[heuristics]",
                                           "web_quality.combine=max"])
    assert res.stats["extra"]["thresholds_fixed"] == ["heuristics"]
    web = kept[kept["source"] == "web"]
    expected = np.searchsorted(np.linspace(-2.0, 2.0, 19), web["quality_score_heuristics"].to_numpy(), side="right")
    np.testing.assert_array_equal(web["quality_bucket"].to_numpy(dtype=int), expected)
    fixed = "[" + ", ".join(str(x) for x in np.linspace(0.05, 0.95, 19)) + "]"
    res3, kept3, _ = run(tmp_path, "mean_fixed", [f"web_quality.thresholds={{combined: {fixed}}}"])
    web3 = kept3[kept3["source"] == "web"]
    expected3 = np.searchsorted(np.linspace(0.05, 0.95, 19), web3["quality_percentile"].to_numpy() / 100, side="right")
    np.testing.assert_array_equal(web3["quality_bucket"].to_numpy(dtype=int), expected3)
    assert res3.stats["extra"]["combined_thresholds"][0] == pytest.approx(0.05)
    res2, kept2, _ = run(tmp_path, "max", ["web_quality.combine=max"])
    assert res2.stats["config"]["combine"] == "max"
    web2 = kept2[kept2["source"] == "web"]
    th = res2.stats["extra"]["thresholds"]
    per = [np.searchsorted(np.asarray(th[n]), web2[f"quality_score_{n}"].to_numpy(), side="right") for n in ("heuristics", "linear")]
    np.testing.assert_array_equal(web2["quality_bucket"].to_numpy(dtype=int), np.maximum(*per))  # GLM-4.5 / Nemotron-CC: max


def test_token_share_per_level_in_stats(tmp_path: Path) -> None:
    res, _, _ = run(tmp_path, "out")
    levels = res.stats["extra"]["levels"]
    assert sum(v["token_share"] for v in levels.values()) == pytest.approx(1.0)
    assert sum(v["documents"] for v in levels.values()) == 40
    assert res.stats["extra"]["percentile_rank_error_bound"] == {"heuristics": 0.0, "linear": 0.0, "combined": 0.0}  # exact
    assert len(res.stats["extra"]["thresholds"]["linear"]) == 19
    assert sum(v["tokens"] for v in res.stats["extra"]["buckets"]["bucket_linear"].values()) == levels_tokens(levels)


def levels_tokens(levels: dict) -> int:
    return sum(v["tokens"] for v in levels.values())


def test_config_errors_say_what_to_change(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="belong to no level"):
        run(tmp_path, "bad", ["web_quality.levels={high: [19, 19], low: [0, 17]}"])
    with pytest.raises(ConfigError, match="repeat"):  # repeat factors live in the mixture section only
        run(tmp_path, "bad2", ["web_quality.repeat={high: 4.0}"])
    with pytest.raises(ConfigError, match="nor 'combined'"):
        run(tmp_path, "bad5", ["web_quality.thresholds={edu: [1.0]}"])
    with pytest.raises(ConfigError, match="not in scorers"):
        run(tmp_path, "bad3", ["web_quality.scorer_options={edu: {kind: hf}}"])
    with pytest.raises(FileNotFoundError, match="does not exist"):
        run(tmp_path, "bad4", ["web_quality.scorer_options={linear: {model: /nowhere}}"])
    # stats.json of a run with no English page holds 19 nulls for the English-only linear scorer
    with pytest.raises(ConfigError, match=r"thresholds.linear holds values that are not numbers.*leave linear out"):
        run(tmp_path, "bad6", ["web_quality.thresholds={linear: [" + ", ".join(["null"] * 19) + "]}"])



def _summing_head(tmp_path: Path):
    """A static-embedder head whose score is the sum of a vector's components (a unit vector
    along the first axis scores exactly 1.0): which vectors were used shows in the scores."""
    from classifiers.embedding import get_embedder

    settings = {"model": "minilm-static", "max_seq_length": 128, "mask_digits": False}
    emb = get_embedder(**settings)
    head = tmp_path / "head"
    head.mkdir()
    np.savez(head / "head.npz", weights=np.ones(emb.dim, dtype=np.float32), bias=np.array([0.0]))
    (head / "model.json").write_text(json.dumps({"embedder": settings}))
    return settings, emb, head

def test_embedding_head_uses_stored_vectors_and_embeds_the_rest(tmp_path: Path) -> None:
    from classifiers.embedding import write_embedding_part
    from classifiers.embedding_store import write_card
    from pipelines.runner import run_stage

    df = corpus(12)
    inp = make_stage_dir(tmp_path / "20_prev", df, nparts=2)
    settings, emb, head = _summing_head(tmp_path)
    # semdedup stored vectors for partition 0 only; partition 1 must be embedded here
    store = tmp_path / "30_semdedup" / "artifacts" / "embeddings"
    part0 = pd.read_parquet(inp / "docs" / "part-00000.parquet")
    fake = np.zeros((len(part0), emb.dim), dtype=np.float32)
    fake[:, 0] = 1.0  # a unit vector whose score is exactly 1.0
    write_embedding_part(store / "part-00000.parquet", part0["doc_id"].tolist(), fake)
    write_card(store, {"embedder": settings})
    (tmp_path / "30_semdedup" / "_SUCCESS").write_text("{}")  # a finished stage: the runner resolves its artifacts
    import dask

    from pipelines.recipe import load_recipe as load

    rec = load(None, ["web_quality.enabled=true", "web_quality.scorers=[embedding]",
                      f"web_quality.scorer_options={{embedding: {{model: {head}}}}}"])
    with dask.config.set(scheduler="synchronous"):
        run_stage("web_quality", rec, stage_dir=tmp_path / "40_web_quality", input_dir=inp, run_dir=tmp_path, quiet=True)
    kept = read_parts(tmp_path / "40_web_quality" / "docs")
    led = read_parts(tmp_path / "40_web_quality" / "ledger")
    both = pd.concat([kept, pd.DataFrame({"doc_id": led["doc_id"]})]) if len(led) else kept
    assert len(both) == len(df)
    scores = pd.read_parquet(next((tmp_path / "40_web_quality" / "artifacts" / "scores-embedding").glob("part-00000.parquet")))
    np.testing.assert_allclose(scores["score"], 1.0, rtol=1e-5)  # the stored vectors were used
    s1 = pd.read_parquet(tmp_path / "40_web_quality" / "artifacts" / "scores-embedding" / "part-00001.parquet")
    web1 = df.set_index("doc_id").loc[s1["doc_id"], "text"].tolist()
    np.testing.assert_allclose(s1["score"], emb.embed(web1).sum(axis=1), rtol=1e-4)  # freshly embedded


def test_single_stage_run_reuses_semdedup_vectors_without_embedding(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``curate web-quality --input <run>/30_semdedup --output <run>/40_web_quality``: no run folder is
    given, the runner finds SemDeDup's embeddings beside the input and nothing is embedded again."""
    import dask

    from classifiers.embedding import write_embedding_part
    from classifiers.embedding_store import write_card
    from pipelines.recipe import load_recipe as load
    from pipelines.runner import run_stage

    df = corpus(12)
    run_dir = tmp_path / "run"
    inp = make_stage_dir(run_dir / "30_semdedup", df, nparts=2)
    settings, emb, head = _summing_head(tmp_path)
    store = inp / "artifacts" / "embeddings"
    for n in (0, 1):  # semdedup embedded every document of both partitions
        part = pd.read_parquet(inp / "docs" / f"part-{n:05d}.parquet")
        fake = np.zeros((len(part), emb.dim), dtype=np.float32)
        fake[:, n] = 1.0  # unit vectors whose score is exactly 1.0
        write_embedding_part(store / f"part-{n:05d}.parquet", part["doc_id"].tolist(), fake)
    write_card(store, {"embedder": settings, "name": "fake", "count": len(df)})
    embedded: list[str] = []
    monkeypatch.setattr(type(emb), "embed", lambda self, texts: embedded.extend(texts) or np.zeros((len(texts), emb.dim)))
    rec = load(None, ["web_quality.enabled=true", "web_quality.scorers=[embedding]",
                      f"web_quality.scorer_options={{embedding: {{model: {head}}}}}"])
    with dask.config.set(scheduler="synchronous"):
        run_stage("web_quality", rec, stage_dir=run_dir / "40_web_quality", input_dir=inp, run_dir=None, quiet=True)
    assert embedded == []  # every vector came from SemDeDup's artifact
    scores = read_parts(run_dir / "40_web_quality" / "artifacts" / "scores-embedding")
    assert len(scores) == (df["source"] == "web").sum()
    np.testing.assert_allclose(scores["score"], 1.0, rtol=1e-5)


def test_a_run_without_web_pages_passes_everything_through(tmp_path: Path) -> None:
    df = docs_frame([{"doc_id": f"c{i}", "text": f"def f{i}(): pass", "source": "code"} for i in range(6)])
    res, kept, ledger = run(tmp_path, "out", df=df)
    assert len(kept) == 6 and len(ledger) == 0
    assert kept["quality_level"].isna().all()
    assert res.stats["extra"]["levels"]["high"]["documents"] == 0


ZH_PROSE = [
    "数据库索引是一种数据结构，它可以加快查询的速度。我们在设计表的时候，需要根据查询的条件来选择合适的索引。",
    "缓存可以减少对数据库的访问。当数据发生变化的时候，我们需要及时更新缓存，否则用户会看到过期的数据。",
    "在分布式系统中，网络是不可靠的。因此我们要为每一次请求设置超时，并且在失败以后进行有限次数的重试。",
]
ZH_JUNK = ["好评", "首页\n登录\n购物车\n联系我们", "特价！特价！点击这里！"]


def zh_en_corpus(n: int = 60) -> pd.DataFrame:
    """English pages (prose and junk) and as many Chinese pages (prose of several lengths and junk)."""
    rows = []
    for i in range(n):
        en = (PROSE if i % 2 else JUNK)[i % 3] + f"\nref {i}"
        zh = "\n".join(ZH_PROSE[(i + k) % 3] for k in range(1 + i % 4)) if i % 2 else ZH_JUNK[i % 3] + f" {i}"
        rows += [{"doc_id": f"e{i:02d}", "text": en, "source": "web", "lang": "en"},
                 {"doc_id": f"z{i:02d}", "text": zh, "source": "web", "lang": "zh"}]
    return docs_frame(rows)


def test_each_language_gets_its_own_buckets_and_english_only_scorers_skip_chinese(tmp_path: Path) -> None:
    df = zh_en_corpus()
    _, kept, ledger = run(tmp_path, "lang", ["web_quality.language_min_docs=50"], df=df)
    res_all, kept_all, ledger_all = run(tmp_path, "global", ["web_quality.per_language=false"], df=df)
    assert len(ledger) == 0 and len(ledger_all) == 0  # annotation only: the mixture excludes the low level
    levels = kept[["doc_id", "quality_level"]]
    zh = levels[levels["doc_id"].str.startswith("z")]
    # Chinese prose reaches the top levels of its own buckets; the junk is what Chinese loses
    assert {"high", "medium_high"} & set(zh["quality_level"])
    lost = set(kept.loc[kept["quality_level"] == "low", "doc_id"])
    assert not any(d in lost for d in [f"z{i:02d}" for i in range(1, 60, 2) if i % 4 == 3])  # the longest Chinese prose
    # the English model does not score Chinese; the heuristics do
    zh_kept = kept[kept["doc_id"].str.startswith("z")]
    assert zh_kept["quality_score_linear"].isna().all() and zh_kept["quality_score_heuristics"].notna().all()
    # in one shared group Chinese lands lower: English sets the bar
    low_shared = set(kept_all.loc[kept_all["quality_level"] == "low", "doc_id"])
    zh_low_shared = np.mean([d in low_shared for d in zh["doc_id"]])
    zh_low_own = np.mean([d in lost for d in zh["doc_id"]])
    assert zh_low_own < zh_low_shared
    extra = json.loads((tmp_path / "lang" / "stats.json").read_text())["extra"]
    assert set(extra["language_groups"]) == {"en", "zh"} and set(extra["levels_by_lang"]) == {"en", "zh"}
    assert len(extra["thresholds_by_lang"]["zh"]["heuristics"]) == 19
    assert res_all.stats["extra"]["language_groups"] == {"*": 120}


def test_english_levels_do_not_depend_on_other_languages_in_the_run(tmp_path: Path) -> None:
    df = zh_en_corpus()
    _, kept_mix, ledger_mix = run(tmp_path / "a", "mix", df=df)
    en_only = df[df["doc_id"].str.startswith("e")].reset_index(drop=True)
    _, kept_en, ledger_en = run(tmp_path / "b", "en", df=en_only)
    mix = kept_mix.set_index("doc_id")["quality_level"]
    alone = kept_en.set_index("doc_id")["quality_level"]
    assert set(ledger_en["doc_id"]) == {d for d in ledger_mix["doc_id"] if d.startswith("e")}
    assert alone.to_dict() == mix[mix.index.str.startswith("e")].to_dict()


@pytest.mark.slow
def test_real_chinese_sections_are_not_discarded_among_real_reviews(tmp_path: Path) -> None:
    import os

    data = Path(os.environ.get("CURATION_SHARED_DATA") or Path(__file__).resolve().parents[2].parent / "shared" / "data")
    if not (data / "zh").is_dir():
        pytest.skip("../shared/data is absent")
    notes = pd.read_json(data / "zh" / "zh_tech_notes.jsonl.gz", lines=True)
    reviews = pd.read_json(data / "zh" / "zh_reviews.jsonl.gz", lines=True).sample(n=1500, random_state=3)
    rows = [{"doc_id": f"n{i}", "text": t, "source": "web", "lang": "zh"} for i, t in enumerate(notes["text"])]
    rows += [{"doc_id": f"r{i}", "text": str(t), "source": "web", "lang": "zh"} for i, t in enumerate(reviews["text"])]
    df = docs_frame(rows)
    df["n_tokens"] = (df["text"].str.len() * 0.7).astype("int64")  # about Qwen's tokens per Chinese character
    _, kept, _ = run(tmp_path, "real", df=df)
    lost = set(kept.loc[kept["quality_level"] == "low", "doc_id"])
    assert np.mean([f"n{i}" in lost for i in range(len(notes))]) <= 0.2


def test_explanatory_members_join_the_ensemble_when_configured_on_a_local_cluster(tmp_path: Path) -> None:
    from distributed import Client, LocalCluster

    df = zh_en_corpus()
    _, base, _ = run(tmp_path, "default", df=df)
    inp = tmp_path / "in"
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0") as cluster, Client(cluster) as client:
        res = run_one("web_quality", inp, tmp_path / "four", ["web_quality.scorers=[heuristics,linear,explanatory,explanatory_zh]"],
                      client=client)
    kept, ledger = assert_conservation(inp, tmp_path / "four")
    assert len(ledger) == 0
    kept, base = kept.set_index("doc_id").sort_index(), base.set_index("doc_id").sort_index()
    en, zh = kept.index.str.startswith("e"), kept.index.str.startswith("z")
    # each member scores the language its model learned (no scorer_languages entry needed)
    assert kept.loc[en, "quality_score_explanatory"].notna().all() and kept.loc[zh, "quality_score_explanatory"].isna().all()
    assert kept.loc[zh, "quality_score_explanatory_zh"].notna().all() and kept.loc[en, "quality_score_explanatory_zh"].isna().all()
    th = res.stats["extra"]["thresholds_by_lang"]
    assert len(th["en"]["explanatory"]) == 19 and len(th["zh"]["explanatory_zh"]) == 19
    # the combination uses them: the percentiles move in both languages, and prose still beats menus
    assert not np.allclose(kept.loc[en, "quality_percentile"], base.loc[en, "quality_percentile"])
    assert not np.allclose(kept.loc[zh, "quality_percentile"], base.loc[zh, "quality_percentile"])
    menus = [d for d in kept.index[en] if int(d[1:]) % 2 == 0]
    prose = [d for d in kept.index[en] if int(d[1:]) % 2 == 1]
    assert kept.loc[prose, "quality_percentile"].min() > kept.loc[menus, "quality_percentile"].max()
    assert kept.loc[prose, "quality_score_explanatory"].min() > kept.loc[menus, "quality_score_explanatory"].max()
