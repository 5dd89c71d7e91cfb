"""The shipped explanatory members (DCLM / Nemotron-CC-style hashed n-gram classifiers): they load from
their folders, stay small, know their languages and rank explanatory text above boilerplate."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from classifiers.linear import HashedLinearModel
from classifiers.scorer import Batch
from classifiers.web_quality import SHIPPED_LINEAR, get_scorer

EXPLAINS = [
    "To find the derivative of a product, apply the product rule: the derivative of f times g equals f' g plus f g'. "
    "For example, if f(x) = x^2 and g(x) = sin x, then the derivative is 2x sin x + x^2 cos x. Check the result by "
    "expanding a small case and comparing the slopes.",
    "A hash table stores each key in the bucket given by its hash. When two keys collide, the table keeps both in a "
    "short list, so a lookup hashes the key, walks that list and compares keys. Resizing the table when it grows "
    "keeps the lists short and the average lookup constant.",
    "Photosynthesis converts light energy into chemical energy. In the light reactions, chlorophyll absorbs photons "
    "and splits water, releasing oxygen; the Calvin cycle then uses the resulting ATP and NADPH to fix carbon "
    "dioxide into sugars.",
]
BOILERPLATE = [
    "Home | Shop | Cart (0) | Login\nAccept all cookies\nPrivacy Policy\nTerms of use\n© 2024 All rights reserved",
    "Menu\nSearch\nSign in\nSubscribe to our newsletter\nFollow us on Facebook Twitter Instagram\nContact us",
    "SALE 50% OFF\nFree shipping on orders over $50\nAdd to cart\nCustomers also bought\nView all products\nSize guide",
]
ZH_EXPLAINS = [
    "索引是一种数据结构，用来加快数据库的查询速度。MySQL 的 InnoDB 存储引擎使用 B+ 树实现索引，叶子节点按顺序保存数据，"
    "所以范围查询只需要顺序扫描叶子节点。建立索引时要考虑字段的区分度，区分度越高，索引的效果越好。",
    "TCP 通过三次握手建立连接：客户端发送 SYN，服务器回复 SYN 和 ACK，客户端再发送 ACK。这样双方都确认了对方的收发能力，"
    "并且同步了初始序列号。断开连接时需要四次挥手，因为每个方向的数据流都要单独关闭。",
]
ZH_REVIEWS = ["酒店不错，服务很好，下次还来。", "东西收到了，质量一般，物流太慢了。", "很好用，五星好评！", "房间有点小，早餐还可以。"]


def test_members_load_from_their_folders_and_stay_small() -> None:
    for kind in ("explanatory", "explanatory_zh"):
        folder = SHIPPED_LINEAR[kind]
        size = sum(f.stat().st_size for f in Path(folder).iterdir())
        assert size < 3_000_000, f"{folder} is {size} bytes"
        s = get_scorer(kind)
        assert s.kind == "linear" and s.path == folder and s.version.startswith("linear-")
        assert isinstance(s.model, HashedLinearModel) and s.model.card["name"] == f"web_{kind}"
    assert get_scorer("explanatory").languages == ("en",) and get_scorer("explanatory_zh").languages == ("zh",)
    assert get_scorer("linear").languages is None  # the recipe's scorer_languages says English


def test_explanatory_text_ranks_above_boilerplate() -> None:
    p = get_scorer("explanatory").score(Batch(EXPLAINS + BOILERPLATE))
    assert p[:3].min() > p[3:].max()
    assert ((p >= 0) & (p <= 1)).all()


def test_chinese_member_ranks_technical_notes_above_reviews() -> None:
    p = get_scorer("explanatory_zh").score(Batch(ZH_EXPLAINS + ZH_REVIEWS))
    assert p[:2].min() > p[2:].max()


def test_a_model_path_overrides_the_shipped_folder_and_its_languages(tmp_path: Path) -> None:
    from classifiers.linear_train import fit_linear

    m = fit_linear(HashedLinearModel(n_features=2**10), ["alpha beta"] * 10 + ["gamma delta"] * 10, [1] * 10 + [0] * 10, epochs=5)
    m.save(tmp_path / "mine", name="mine")
    s = get_scorer("own", {"kind": "explanatory", "model": str(tmp_path / "mine")})
    assert s.path == tmp_path / "mine" and s.languages is None
    p = s.score(Batch(["alpha beta", "gamma delta"]))
    assert p[0] > 0.5 > p[1]
    with pytest.raises(FileNotFoundError):
        get_scorer("gone", {"kind": "explanatory", "model": str(tmp_path / "nope")})
    assert np.isfinite(get_scorer("explanatory").score(Batch([""]))).all()


SHARED = Path(os.environ.get("CURATION_SHARED_DATA") or Path(__file__).resolve().parents[2].parent / "shared" / "data")
BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "web_quality"


@pytest.mark.slow
@pytest.mark.skipif(not (SHARED / "web" / "web_docs.parquet").exists(), reason="../shared/data is not available")
def test_training_sets_hold_no_judged_page_and_the_member_ranks_judged_english_pages() -> None:
    import sys

    import pandas as pd
    from scipy.stats import rankdata

    from classifiers.langid import identify_docs

    sys.path.insert(0, str(BENCH))
    import explanatory_data

    docs = pd.read_parquet(SHARED / "web" / "web_docs.parquet", columns=["doc_id", "url", "text", "source"])
    judged = docs[docs["source"] == "dolma_cc_raw_wet"].merge(pd.read_csv(BENCH / "wet_judgements.csv"), on="doc_id")
    sets, counts = explanatory_data.english_sets()
    assert counts["dropped_overlapping_judged_pages"] >= 0 and set(sets["split"]) == {"train", "tune"}
    assert not set(sets["url"]) & set(judged["url"].dropna())
    judged_lines = {ln.strip() for t in judged["text"] for ln in t.split("\n") if len(ln.strip()) >= 60}
    assert not any(ln.strip() in judged_lines for t in sets["text"] for ln in t.split("\n") if len(ln.strip()) >= 60)
    judged = judged.drop_duplicates("text")
    en = judged[[lang == "en" for lang in identify_docs(judged["text"].tolist(), ["web"] * len(judged))[0]]]
    good = (en["rating"] >= 4).to_numpy()
    r = rankdata(get_scorer("explanatory").score(Batch(en["text"].tolist())))
    auc = (r[good].sum() - good.sum() * (good.sum() + 1) / 2) / (good.sum() * (~good).sum())
    assert auc > 0.8, auc  # 0.87 on the 137 pages the language identifier calls English (RESULTS.md)
