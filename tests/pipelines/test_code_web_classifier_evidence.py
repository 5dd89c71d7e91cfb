"""A classifier-only recall needs code evidence: short CJK reviews that the shipped code-content
model scores over the threshold (its negatives were English prose) stay web pages, while pages
with code in their text, Chinese ones included, are recalled as before."""

from __future__ import annotations

import pandas as pd
import pytest

from classifiers.code_content import CodeContentClassifier
from curation.quality.code_pages import code_evidence, recall_method
from pipelines.stages.code_web import CodeWebConfig
from tests.helpers import assert_conservation, docs_frame, make_stage_dir, run_one

#: short reviews written for this test; the shipped model gives each P >= 0.7
REVIEWS = ["很好", "前台服务不好", "服务好，位置佳", "东西收到了，质量很好，物流也快", "味道一般，价格偏贵", "非常满意，五星好评", "좋아요"]
CODE_TEXT = ("Here is how to read the config:\n" + "\n".join(
    f"def load_{i}(path):\n    with open(path) as fh:\n        return json.load(fh)" for i in range(4)))
ZH_CODE = ("下面的脚本读取配置文件，并打印每一个键和值：\n"
           "import json\n\nwith open('config.json') as fh:\n    cfg = json.load(fh)\n"
           "for key, value in cfg.items():\n    print(key, value)\n"
           "运行之前先确认文件存在，否则会抛出异常。")


def _rows() -> list[dict]:
    rows = [{"doc_id": f"review{i}", "text": t, "source": "web"} for i, t in enumerate(REVIEWS)]
    rows += [{"doc_id": "code_en", "text": CODE_TEXT, "source": "web"}, {"doc_id": "code_zh", "text": ZH_CODE, "source": "web"}]
    return rows


def test_the_reviews_are_over_the_threshold_for_the_model_alone() -> None:
    probs = CodeContentClassifier().predict(REVIEWS)
    assert (probs >= CodeWebConfig().classifier_threshold).all()  # the gate below is what keeps them out


@pytest.mark.parametrize("min_chars, recalled_reviews", [(None, 0), (0, len(REVIEWS))])
def test_classifier_recall_needs_code_like_characters(tmp_path, min_chars: int | None, recalled_reviews: int) -> None:
    inp = make_stage_dir(tmp_path / "in", docs_frame(_rows()), nparts=2)
    overrides = ["ingest.tokenizer=whitespace", "code_web.tier_low=0", "code_web.tier_min_files=1"]
    if min_chars is not None:  # None: the recipe's default
        overrides.append(f"code_web.classifier_min_code_chars={min_chars}")
    res = run_one("code_web", inp, tmp_path / "out", overrides)
    kept, ledger = assert_conservation(inp, tmp_path / "out")
    assert ledger.empty
    by_id = kept.set_index("doc_id")
    reviews = by_id.loc[[f"review{i}" for i in range(len(REVIEWS))]]
    assert int(reviews["code_web_recall"].notna().sum()) == recalled_reviews
    assert (reviews["source"] == "web").all()
    for doc in ("code_en", "code_zh"):  # code in the text: recalled whatever the gate
        assert by_id.loc[doc, "code_web_recall"] == "classifier"
    assert res.stats["extra"]["recalled_pages"] == 2 + recalled_reviews


def test_code_evidence_counts_code_like_characters_and_their_lines() -> None:
    assert code_evidence(["很好，推荐！ ＡＢＣ（）"], [0.9], 0.7) == (0, 0)  # CJK, full-width and spaces do not count
    assert code_evidence(["x = f(1)\n\ty\n说明"], [0.9], 0.7) == (7, 2)
    assert code_evidence(["print('你好')"], [0.7], 0.7) == (9, 1)  # the code around a Chinese string counts
    assert code_evidence(["x = 1"], [0.69], 0.7) == (0, 0)  # only windows at the threshold


@pytest.mark.parametrize("chars, lines, ok", [(40, 1, True), (39, 1, False), (20, 2, True), (19, 4, False), (0, 0, False)])
def test_one_line_needs_the_minimum_and_two_lines_half(chars: int, lines: int, ok: bool) -> None:
    s = pd.DataFrame({"pre_blocks": [0], "highlighted": [0], "code_chars": [0], "content_prob": [0.9],
                      "content_code_chars": [chars], "content_code_lines": [lines], "score": [5.0]})
    assert recall_method(s, ("html_tags", "classifier"), 1, 40, 0.7, 40).tolist() == (["classifier"] if ok else [None])
    assert recall_method(s, ("html_tags", "classifier"), 1, 40, 0.7, 0).tolist() == ["classifier"]  # 0: the probability alone


def test_the_gate_is_part_of_the_scores_key() -> None:
    a, b = CodeWebConfig().score_params("whitespace"), CodeWebConfig(classifier_min_code_chars=10).score_params("whitespace")
    assert a["classifier_min_code_chars"] == 40 and a != b
    with pytest.raises(Exception, match="classifier_min_code_chars"):
        CodeWebConfig(classifier_min_code_chars=-1).validate()


def test_the_recipe_names_the_gate() -> None:
    from pipelines.recipe import load_recipe, stage_config

    cfg = stage_config(load_recipe(None), "code_web", CodeWebConfig)
    assert isinstance(cfg, CodeWebConfig) and cfg.classifier_min_code_chars == 40
