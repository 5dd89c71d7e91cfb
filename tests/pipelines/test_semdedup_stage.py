import json
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from classifiers.embedding import embedding_card, load_embeddings, resolve_model_path
from curation.config import ConfigError
from pipelines.recipe import profile_overrides
from pipelines.stages.semdedup import SemDedupConfig
from tests.helpers import assert_conservation, docs_frame, make_stage_dir, run_one

STATIC = ["semdedup.model=minilm-static"]  # the fast distilled embedder; the transformer path is tested in classifiers/

TEMPLATE = (
    "{name} Stand Mixer - Kitchen Appliances | HomeShop\n"
    "Home > Kitchen > Small Appliances > Mixers > {name} Stand Mixer (item {num})\n"
    "Price: ${price}. Only {stock} left in stock. Ships from {city} within {days} business days.\n"
    "Product details: a {watts} watt motor, a {litres} litre stainless steel bowl, ten speed settings, a tilt head "
    "for easy bowl access, and a flat beater, a dough hook and a wire whip in the box. Dishwasher-safe attachments.\n"
    "Shipping and returns: free standard shipping on orders over $35. Express delivery is available at checkout. "
    "Returns are accepted within 30 days of delivery in the original packaging; refunds go to the original payment "
    "method within 5 business days after we receive the item.\n"
    "Warranty: 2 year limited manufacturer warranty covering parts and labour. Register your product online.\n"
    "Customers also viewed: splash guard, pouring shield, pasta roller attachment, glass bowl, ice cream maker bowl.\n"
    "Questions and answers: Is the bowl compatible with other models? See the compatibility chart in the manual. "
    "Sign in to write a review. Add to cart. Add to wish list. Compare with similar items. Share on social media."
)
TOPICS = [
    "The French Revolution began in 1789 and ended the absolute monarchy of Louis XVI.",
    "Photosynthesis converts light energy into chemical energy stored in glucose molecules.",
    "A binary search tree keeps keys ordered so that lookups take logarithmic time on average.",
    "The recipe calls for two cups of flour, a pinch of salt and butter softened at room temperature.",
    "Marathon training plans usually build weekly mileage slowly to avoid injuries to tendons.",
    "Volcanic eruptions release ash and sulfur dioxide that can cool the global climate for years.",
    "The court ruled that the contract was void because one party had been misled about the price.",
    "Jazz musicians improvise over chord progressions, trading solos between saxophone and trumpet.",
    "Coral reefs are built by colonies of tiny animals that secrete calcium carbonate skeletons.",
    "The city council approved a new budget for road repairs and public libraries next year.",
]
NAMES = ["Aurora", "Boreal", "Cinder", "Dahlia", "Ember", "Fjord"]


def template_page(i: int) -> str:
    return TEMPLATE.format(name=NAMES[i], num=1000 + 37 * i, price=f"{49 + 13 * i}.99", stock=3 + i,
                           city=["Leeds", "Porto", "Lyon", "Gent", "Graz", "Turku"][i], days=2 + i,
                           watts=500 + 50 * i, litres=4 + i)


def corpus() -> pd.DataFrame:
    rows = [{"doc_id": f"shop-{i}", "text": template_page(i), "source": "web"} for i in range(len(NAMES))]
    rows += [{"doc_id": f"topic-{i}", "text": t, "source": "web"} for i, t in enumerate(TOPICS)]
    # the same template text in math_science is embedded but not pruned (prune_sources = web)
    rows += [{"doc_id": f"math-{i}", "text": template_page(i), "source": "math_science"} for i in range(2)]
    rows += [{"doc_id": "code-0", "text": "def f(x):\n    return x + 1\n", "source": "code"}]
    return docs_frame(rows)


@pytest.fixture
def stage_input(tmp_path: Path) -> Path:
    return make_stage_dir(tmp_path / "in", corpus(), nparts=2)


def test_template_twins_are_removed_and_everything_is_accounted_for(tmp_path, stage_input):
    out = tmp_path / "out"
    res = run_one("semdedup", stage_input, out, STATIC)
    kept, ledger = assert_conservation(stage_input, out)
    shop = sorted(d for d in kept["doc_id"] if d.startswith("shop-"))
    assert len(shop) == 1, "one page of the template family survives"
    assert sorted(ledger["doc_id"]) == sorted(set(f"shop-{i}" for i in range(6)) - set(shop))
    assert set(ledger["reason"]) == {"semantic_duplicate"} and set(ledger["source"]) == {"web"}
    for detail in ledger["detail"].map(json.loads):
        assert detail["duplicate_of"] == shop[0]
        assert 0.9 < detail["similarity"] <= 1.0 and isinstance(detail["cluster"], int)
    # distinct topics, math_science (not pruned) and code (not embedded) are all kept
    assert {f"topic-{i}" for i in range(10)} | {"math-0", "math-1", "code-0"} <= set(kept["doc_id"])
    clusters = kept.set_index("doc_id")["semdedup_cluster"]
    assert clusters.dtype == np.int64 and clusters["code-0"] == -1 and clusters["topic-0"] >= 0
    extra = res.stats["extra"]
    assert extra["removed"] == 5 and extra["k"] == 1
    assert extra["eps_sweep"]["web"]["documents"] == 16
    assert extra["eps_sweep"]["web"]["removed"]["0.1"] == 5
    sweep = extra["eps_sweep"]["web"]["removed"]
    assert sweep["0.01"] <= sweep["0.1"] <= sweep["0.3"]


def test_embeddings_artifact_is_readable_by_later_stages(tmp_path, stage_input):
    out = tmp_path / "out"
    run_one("semdedup", stage_input, out, STATIC)
    folder = out / "artifacts" / "embeddings"
    ids, vecs = load_embeddings(folder)
    assert set(ids) == {f"shop-{i}" for i in range(6)} | {f"topic-{i}" for i in range(10)} | {"math-0", "math-1"}
    np.testing.assert_allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-5)
    card = embedding_card(folder)
    assert card["embedder"] == {"model": "minilm-static", "batch_size": 64, "max_seq_length": 256, "mask_digits": True}
    assert card["dim"] == vecs.shape[1] and card["count"] == 18 and card["dtype"] == "float16"
    assert np.load(out / "artifacts" / "centroids" / "centroids.npy", allow_pickle=False).shape == (1, card["dim"])


def test_changed_eps_reuses_embeddings_and_similarity_pass(tmp_path, stage_input):
    out = tmp_path / "out"
    run_one("semdedup", stage_input, out, STATIC)
    cache = tmp_path / ".cache" / "semdedup"
    before = {p.name: p.stat().st_mtime_ns for p in cache.iterdir() if not p.name.startswith(".")}
    res = run_one("semdedup", stage_input, out, [*STATIC, "semdedup.eps=0.01"])
    after = {p.name: p.stat().st_mtime_ns for p in cache.iterdir() if not p.name.startswith(".")}
    for step in ("embeddings", "centroids", "clusters", "similarity"):
        [name] = [n for n in before if n.startswith(step + "-")]
        assert after[name] == before[name], f"{step} was recomputed"
    assert len([n for n in after if n.startswith("removals-")]) == 2  # only the decision re-ran
    assert res.stats["extra"]["removed"] == res.stats["extra"]["eps_sweep"]["web"]["removed"]["0.01"]
    assert_conservation(stage_input, out)
    # an interrupted run left nothing behind that looks complete
    assert not list(cache.glob(".*.tmp"))


def test_keep_rule_from_a_column_and_pruning_every_source(tmp_path, stage_input):
    df = corpus()
    df.loc[df["doc_id"] == "shop-3", "n_tokens"] = 10_000
    inp = make_stage_dir(tmp_path / "in2", df, nparts=3)
    out = tmp_path / "out"
    run_one("semdedup", inp, out, [*STATIC, "semdedup.keep=highest:n_tokens", "semdedup.prune_sources=[web, math_science]"])
    kept, ledger = assert_conservation(inp, out)
    assert "shop-3" in set(kept["doc_id"])
    assert len([d for d in kept["doc_id"] if d.startswith("math-")]) == 1  # pruned within math_science only
    assert {json.loads(d)["duplicate_of"] for d in ledger[ledger["source"] == "web"]["detail"]} == {"shop-3"}


def test_no_embedded_source_keeps_everything(tmp_path):
    df = docs_frame([{"doc_id": f"c{i}", "text": f"print({i})", "source": "code"} for i in range(4)])
    inp = make_stage_dir(tmp_path / "in", df)
    run_one("semdedup", inp, tmp_path / "out", STATIC)
    kept, ledger = assert_conservation(inp, tmp_path / "out")
    assert len(kept) == 4 and ledger.empty and set(kept["semdedup_cluster"]) == {-1}


def test_config_is_validated_with_actionable_messages():
    with pytest.raises(ConfigError, match="subset"):
        SemDedupConfig.from_dict({"sources": ["web"], "prune_sources": ["math_science"]})
    with pytest.raises(ConfigError, match="keep rule"):
        SemDedupConfig.from_dict({"keep": "random"})
    with pytest.raises(ConfigError, match="eps"):
        SemDedupConfig.from_dict({"eps": 1.5})
    with pytest.raises(ConfigError, match="unknown sources"):
        SemDedupConfig.from_dict({"sources": ["webb"]})
    assert SemDedupConfig.from_dict({"k": "12"}).k == 12
    with pytest.raises(ConfigError, match=r"eps_by_language\['zh'\]"):
        SemDedupConfig.from_dict({"eps_by_language": {"zh": 0}})
    with pytest.raises(ConfigError, match="text_check_jaccard"):
        SemDedupConfig.from_dict({"text_check_jaccard": 1.5})
    with pytest.raises(ConfigError, match="a number"):
        SemDedupConfig.from_dict({"eps_by_language": {"zh": "wide"}})


def test_keep_column_must_exist(tmp_path, stage_input):
    with pytest.raises(ConfigError, match="needs column"):
        run_one("semdedup", stage_input, tmp_path / "out", [*STATIC, "semdedup.keep=highest:quality_score_x"])


def test_combined_criterion_mixes_the_two_cosines(tmp_path, stage_input):
    # a second static model (no common-direction removal) stands in for the transformer, to stay fast
    other = tmp_path / "static2"
    shutil.copytree(resolve_model_path("minilm-static"), other)
    np.save(other / "components.npy", np.zeros((0, 128), np.float32), allow_pickle=False)
    out = tmp_path / "out"
    res = run_one("semdedup", stage_input, out, [f"semdedup.model={other}", "semdedup.static_weight=0.5"])
    kept, ledger = assert_conservation(stage_input, out)
    ids_a, vec_a = load_embeddings(out / "artifacts" / "embeddings")
    ids_b, vec_b = load_embeddings(out / "artifacts" / "static_embeddings")
    assert ids_a.tolist() == ids_b.tolist() and embedding_card(out / "artifacts" / "embeddings")["embedder"]["model"] == str(other)
    pos = {d: i for i, d in enumerate(ids_a)}
    assert len(ledger) >= 4 and "static_embedding" in res.stats["extra"]
    for doc, detail in zip(ledger["doc_id"], ledger["detail"].map(json.loads), strict=True):
        i, j = pos[doc], pos[detail["nearest"]]
        want = 0.5 * vec_a[i] @ vec_a[j] + 0.5 * vec_b[i] @ vec_b[j]
        assert detail["similarity"] == pytest.approx(want, abs=3e-3)


@pytest.mark.slow
def test_default_transformer_on_a_dask_cluster_through_the_cli(tmp_path, stage_input):
    from pipelines.cli import main

    out = tmp_path / "cli"
    rc = main(["semdedup", "--input", str(stage_input), "--output", str(out), "--workers", "1", "--quiet", "--profile", "gpu", "k=3"])  # the GPU settings: the transformer
    assert rc == 0
    kept, ledger = assert_conservation(stage_input, out)
    stats = json.loads((out / "stats.json").read_text())
    assert stats["extra"]["k"] == 3 and stats["extra"]["embedding"]["dim"] == 384
    assert stats["extra"]["embedding"]["name"] == "all-MiniLM-L6-v2@seq256+mask_digits"
    assert set(ledger["doc_id"]) <= {f"shop-{i}" for i in range(6)}  # only template pages can go
    assert set(kept["semdedup_cluster"]) - {-1} <= {0, 1, 2}


ZH_TOPICS = [
    "法国大革命爆发于一七八九年，结束了路易十六的君主专制。",
    "光合作用把光能转化为储存在葡萄糖分子中的化学能。",
    "二叉搜索树让键保持有序，因此平均查找时间是对数级的。",
    "马拉松训练计划通常会慢慢增加每周的跑量，以免肌腱受伤。",
    "火山喷发释放的火山灰和二氧化硫可以让全球气候变冷好几年。",
    "爵士乐手在和弦进行上即兴演奏，萨克斯和小号轮流独奏。",
]


def test_pages_in_languages_the_embedder_was_not_trained_on_are_never_pruned(tmp_path):
    rows = [{"doc_id": f"zh-{i}", "text": t, "source": "web", "lang": "zh"} for i, t in enumerate(ZH_TOPICS)]
    rows += [{"doc_id": f"shop-{i}", "text": template_page(i), "source": "web", "lang": "en"} for i in range(4)]
    rows += [{"doc_id": f"topic-{i}", "text": t, "source": "web", "lang": "en"} for i, t in enumerate(TOPICS)]
    inp = make_stage_dir(tmp_path / "in", docs_frame(rows))
    # every language pruned (the English static model sees six unrelated Chinese sentences as near copies)
    # (model_languages=[]: taken at its word as knowing every language, so no pair needs shared text)
    run_one("semdedup", inp, tmp_path / "all", [*STATIC, "semdedup.prune_languages=[]", "semdedup.static_languages=[]",
                                                 "semdedup.model_languages=[]", "semdedup.eps=0.3"])
    _, ledger_all = assert_conservation(inp, tmp_path / "all")
    run_one("semdedup", inp, tmp_path / "en", [*STATIC, "semdedup.prune_languages=[en]", "semdedup.eps=0.3"])
    kept, ledger = assert_conservation(inp, tmp_path / "en")
    assert not any(d.startswith("zh-") for d in ledger["doc_id"])
    assert {d for d in ledger["doc_id"] if d.startswith("shop-")}  # English template twins are still found
    assert any(d.startswith("zh-") for d in ledger_all["doc_id"])


ZH_TEMPLATE = (
    "{name}不锈钢保温杯 - 厨房用品 | 优选商城\n首页 > 厨房 > 杯壶 > 保温杯 > {name}（商品编号 {num}）\n"
    "价格：{price} 元，库存仅剩 {stock} 件，从{city}发货，{days} 个工作日内送达。\n"
    "商品详情：{litres} 升双层真空内胆，食品级不锈钢，十二小时保温，杯盖可拆洗，附赠杯刷和杯套。\n"
    "配送与退换：订单满 99 元包邮，支持七天无理由退换，退款将在收到商品后五个工作日内原路返回。\n"
    "保修：两年有限保修，请在官网注册您的产品。看过本商品的顾客还看了：水杯、茶壶、咖啡杯、焖烧罐。"
)
#: The bilingual static embedder at the CPU profile's English bar (the profile's own settings: CPU below).
BILINGUAL = ["semdedup.model=minilm-static-bi", "semdedup.static_model=minilm-static-bi", "semdedup.eps=0.05"]
#: The CPU profile's semdedup settings as shipped (pipelines/configs/profiles/cpu.yaml).
CPU = [f"semdedup.{o}" for o in profile_overrides("cpu", "semdedup")]
#: Real-style hotel reviews: one topic, no shared template. The static model puts reviews 1 and 6 at cosine 0.91.
ZH_REVIEWS = [
    "酒店位置很好，离地铁站只有五分钟，房间干净整洁，前台服务热情，早餐品种丰富，下次出差还会再来。",
    "房间有点小，隔音不好，晚上能听到走廊的声音，早餐一般，服务员态度还可以，性价比不高。",
    "入住的是大床房，床很舒服，卫生间也很干净，就是空调声音有点大，总体来说还不错，值得推荐。",
    "前台办理入住很慢，等了半个多小时，房间里有烟味，换了一间才好一些，早餐的品种太少了。",
    "酒店环境安静，服务周到，房间宽敞明亮，窗外就是湖景，早餐很丰盛，价格也合理，很满意的一次入住。",
    "位置比较偏，打车不太方便，不过房间设施很新，热水很足，服务员很有礼貌，停车也方便。",
    "这家酒店的性价比很高，房间虽然不大但是很温馨，床单被罩都很干净，前台小姐姐很热情。",
    "设施比较陈旧，卫生间的水龙头一直漏水，反映给前台也没人来修，早餐只有几样，不会再住了。",
]


def _bilingual_rows(zh_prefix: str, zh_texts: list[str]) -> list[dict]:
    """Four Chinese product pages of one template, ``zh_texts`` as unrelated Chinese pages, four English
    template pages and the English topics."""
    names, cities = ["云帆", "青松", "星河", "晨光"], ["杭州", "成都", "武汉", "苏州"]
    rows = [{"doc_id": f"zhshop-{i}", "source": "web", "lang": "zh",
             "text": ZH_TEMPLATE.format(name=names[i], num=1000 + 37 * i, price=59 + 20 * i, stock=3 + i, city=cities[i],
                                        days=2 + i, litres=i + 1)} for i in range(4)]
    rows += [{"doc_id": f"{zh_prefix}-{i}", "text": t, "source": "web", "lang": "zh"} for i, t in enumerate(zh_texts)]
    rows += [{"doc_id": f"shop-{i}", "text": template_page(i), "source": "web", "lang": "en"} for i in range(4)]
    rows += [{"doc_id": f"topic-{i}", "text": t, "source": "web", "lang": "en"} for i, t in enumerate(TOPICS)]
    return rows


def test_the_bilingual_static_model_prunes_chinese_template_pages_when_its_languages_include_chinese(tmp_path):
    rows = _bilingual_rows("zh", ZH_TOPICS)
    inp = make_stage_dir(tmp_path / "in", docs_frame(rows))
    run_one("semdedup", inp, tmp_path / "both", [*BILINGUAL, "semdedup.static_languages=[en,zh]"])
    _, ledger = assert_conservation(inp, tmp_path / "both")
    removed = set(ledger["doc_id"])
    assert len({d for d in removed if d.startswith("zhshop-")}) == 3  # one product page of the site is kept
    assert len({d for d in removed if d.startswith("shop-")}) == 3
    assert not {d for d in removed if d.startswith(("zh-", "topic-"))}  # unrelated pages, either language, are kept
    run_one("semdedup", inp, tmp_path / "en", BILINGUAL)  # static_languages as the recipe has it: English only
    _, ledger = assert_conservation(inp, tmp_path / "en")
    assert not any(d.startswith("zh") for d in ledger["doc_id"]) and any(d.startswith("shop-") for d in ledger["doc_id"])


def test_the_cpu_profile_prunes_chinese_template_pages_and_keeps_reviews_on_one_topic(tmp_path):
    from distributed import Client, LocalCluster

    rows = _bilingual_rows("zhr", ZH_REVIEWS)
    inp = make_stage_dir(tmp_path / "in", docs_frame(rows), nparts=2)
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=":0") as cluster, Client(cluster) as client:
        run_one("semdedup", inp, tmp_path / "cpu", CPU, client=client)
    _, ledger = assert_conservation(inp, tmp_path / "cpu")
    removed = set(ledger["doc_id"])
    assert len({d for d in removed if d.startswith("zhshop-")}) == 3  # one product page of the site is kept
    assert len({d for d in removed if d.startswith("shop-")}) == 3
    assert not {d for d in removed if d.startswith(("zhr-", "topic-"))}  # reviews of one topic share no text: all kept
    detail = ledger.set_index("doc_id")["detail"]
    assert all('"eps": 0.12' in detail[d] for d in removed if d.startswith("zhshop-"))
    assert all('"eps": 0.05' in detail[d] for d in removed if d.startswith("shop-"))
    # the check is what keeps the reviews: on the static cosine alone at 0.88 two of them are one page
    off = ["semdedup.text_check_languages=[]", "semdedup.model_languages=[]"]  # in place of the profile's (a key given twice is refused)
    run_one("semdedup", inp, tmp_path / "cosine", [o for o in CPU if o.split("=")[0] not in {k.split("=")[0] for k in off}] + off)
    _, ledger = assert_conservation(inp, tmp_path / "cosine")
    assert {d for d in ledger["doc_id"] if d.startswith("zhr-")} & {"zhr-1", "zhr-6"}


def test_the_static_model_is_mixed_in_only_for_its_languages(tmp_path):
    from classifiers.embedding_store import write_embedding_part
    from pipelines.kit import Artifact
    from pipelines.stages.semdedup_steps import Vectors, read_vectors

    ids = ["a", "b"]
    (tmp_path / "t").mkdir()
    (tmp_path / "s").mkdir()
    write_embedding_part(tmp_path / "t" / "part-00000.parquet", ids, np.array([[1.0, 0.0], [1.0, 0.0]], dtype=np.float32))
    write_embedding_part(tmp_path / "s" / "part-00000.parquet", ids, np.array([[0.0, 1.0], [0.0, 1.0]], dtype=np.float32))
    spec = Vectors(Artifact(tmp_path / "t"), Artifact(tmp_path / "s"), 0.4, ("en",))
    _, vecs = read_vectors(spec, 0, np.array(["en", "zh"], dtype=object))
    np.testing.assert_allclose(np.linalg.norm(vecs, axis=1), 1.0, rtol=1e-5)
    assert vecs[0, 2:].sum() > 0 and vecs[1, 2:].sum() == 0  # zh: the transformer alone
    _, both = read_vectors(Vectors(spec.main, spec.static, 0.4), 0, np.array(["en", "zh"], dtype=object))  # no language list: mixed for all
    assert both[1, 2:].sum() > 0
