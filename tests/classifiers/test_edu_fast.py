"""The shipped CPU edu scorer (``classifiers/models/edu_fast``): it loads without a transformer, ranks
math/science text above other text in English and in Chinese, and spreads Chinese over the bands."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import numpy as np
import pytest

from classifiers.edu import HashedEduScorer, fast_model_dir, get_edu_scorer
from classifiers.edu_train import roc_auc
from classifiers.scorer import Batch

from .edu_texts import OTHER, SCIENCE

SAMPLE = Path(__file__).resolve().parents[2] / "sample_data"

EN_EDU = SCIENCE[:3]
EN_OTHER = OTHER[:3]
ZH_EDU = [
    "函数的导数描述了输出随输入变化的快慢。对于函数 f(x) = x^2，差商 (f(x+h) - f(x))/h 等于 2x + h，"
    "令 h 趋于零，得到导数 f'(x) = 2x。练习：求函数 g(x) = 3x^3 - x 的导数，并求切线水平的点。",
    "牛顿第二定律指出，物体所受的合力等于其质量与加速度的乘积，即 F = ma。例如，质量为 2 千克的小车在 6 牛的"
    "合力作用下，加速度为 3 米每二次方秒。摩擦力的方向与运动方向相反。",
    "TCP 协议通过三次握手建立连接：客户端发送 SYN 报文，服务器回复 SYN+ACK，客户端再发送 ACK。"
    "为了保证可靠传输，TCP 使用序列号、确认应答和超时重传机制，并通过滑动窗口实现流量控制。",
]
ZH_OTHER = [
    "房间很干净，服务员态度也很好，早餐品种有点少，下次还会再来。",
    "快递很快，包装完好，东西和图片一样，给个好评！",
    "特价！全场一折起！点击链接马上抢购，加微信领取优惠券，数量有限先到先得！",
]


@pytest.fixture(scope="module")
def fast():
    return get_edu_scorer(fast_model_dir())


def _sample(path: Path) -> list[dict]:
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        return [json.loads(line) for line in fh]


def test_fast_model_loads_as_a_text_only_scorer_with_its_card(fast):
    assert isinstance(fast, HashedEduScorer) and fast.needs == frozenset({"text"})
    card = json.loads((fast_model_dir() / "model.json").read_text())
    assert card["name"] == "edu_fast" and card["kind"] == "hashed_linear"
    held = card["metrics"]["heldout"]
    assert held["spearman_vs_teacher_en"] >= 0.8 and held["auc_en"] >= 0.95
    assert held["auc_zh_notes_vs_reviews"] >= 0.9
    assert sum(f.stat().st_size for f in fast_model_dir().rglob("*") if f.is_file()) < 5 * 2**20
    assert not list(fast_model_dir().rglob("*.pkl"))


def test_fast_ranks_math_and_science_above_other_text_in_english_and_chinese(fast):
    en = fast.score(Batch(EN_EDU + EN_OTHER))
    zh = fast.score(Batch(ZH_EDU + ZH_OTHER))
    assert ((en >= 0) & (en <= 5)).all() and ((zh >= 0) & (zh <= 5)).all()
    assert en[:3].min() > en[3:].max() and zh[:3].min() > zh[3:].max()
    assert (en[:3] >= 3.0).all() and (en[3:] < 2.0).all()
    # Chinese is not squeezed into one band: the lessons average above "low", the reviews and the ad stay in it
    assert zh[:3].mean() >= 2.0 and zh[:3].max() >= 3.0 and (zh[3:] < 2.0).all()


def test_fast_orders_the_samples_generated_pages_in_both_languages(fast):
    """``sample_data`` (never trained on): Chinese tutorial articles above Chinese reviews, product pages and
    spam, spread over more than one band; English math/science documents follow their generator's label."""
    zh = [r for r in _sample(SAMPLE / "web" / "web_zh.jsonl.gz") if r["meta"].get("kind") in ("article", "review", "template", "spam")]
    s = fast.score(Batch([r["text"] for r in zh]))
    article = np.array([r["meta"]["kind"] == "article" for r in zh])
    assert roc_auc(article, s) >= 0.95
    assert (s[article] >= 2.0).mean() >= 0.5 and (s[~article] < 2.0).mean() >= 0.9  # articles reach medium, the rest stays low
    math = [r for path in sorted((SAMPLE / "math_science").glob("*.jsonl.gz")) for r in _sample(path)
            if isinstance(r.get("meta"), dict) and "edu_label" in r["meta"]]
    assert len(math) >= 100
    m = fast.score(Batch([r["text"] for r in math]))
    label = np.array([r["meta"]["edu_label"] for r in math])
    assert np.corrcoef(np.argsort(np.argsort(label)), np.argsort(np.argsort(m)))[0, 1] >= 0.7
