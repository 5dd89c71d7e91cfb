"""Language identification: codes, scores and the rules for short, mixed, code and empty texts."""

import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from classifiers import langid

DATA = Path(os.environ.get("CURATION_SHARED_DATA") or Path(__file__).resolve().parents[2].parent / "shared" / "data")


def test_languages_and_scripts_get_their_iso_codes():
    texts = [
        "数据库索引是一种数据结构，可以加快查询的速度，但是会占用额外的存储空间。",
        "An index is a data structure that speeds up lookups at the cost of extra storage.",
        "インデックスはデータベースの検索を速くするためのデータ構造です。",
        "인덱스는 데이터베이스 검색 속도를 높이는 자료 구조입니다.",
        "Ein Index ist eine Datenstruktur, die Abfragen in einer Datenbank beschleunigt.",
        "Индекс — это структура данных, которая ускоряет поиск в базе данных.",
    ]
    codes, scores = langid.identify(texts)
    assert codes == ["zh", "en", "ja", "ko", "de", "ru"]
    assert np.all(scores > 0.5) and np.all(scores <= 1.0)


def test_short_chinese_and_code_heavy_chinese_sections_are_chinese():
    section = "```java\nSocketChannel ch = server.accept();\nch.configureBlocking(false);\n```\n" * 20
    section += "// 服务器会为每个新连接创建一个 SocketChannel，这个新连接主要用于从客户端读取数据\n"
    codes, _ = langid.identify(["好评", "质量C级，末有下次！", "CBD中心,周围没什么店铺", section])
    assert codes == ["zh", "zh", "zh", "zh"]


def test_korean_with_hanja_and_english_with_chinese_glosses_keep_their_language():
    korean = ("대한민국 헌법(大韓民國 憲法)은 대한민국의 최고 법규범이다. 헌법 제1조(第1條)는 국민 주권(國民主權)의 원리를 "
              "규정하고 있으며, 모든 권력은 국민으로부터 나온다. 헌법재판소는 여러 판례에서 이 원리를 확인하였다.")
    english = ("Mapo tofu (麻婆豆腐) is a Sichuan classic. You need soft tofu (嫩豆腐), doubanjiang (豆瓣酱), fermented "
               "black beans (豆豉), Sichuan peppercorns (花椒), chilli flakes (辣椒面) and minced pork (猪肉末). Cut the "
               "tofu into cubes and blanch them in salted water for a minute so they hold together. Fry the pork until "
               "crisp, add the bean paste and cook until the oil turns red, then add stock, tofu and black beans.")
    codes, scores = langid.identify([korean, english])
    assert codes == ["ko", "en"]
    assert np.all(scores > 0.8)  # the model's own probabilities, not a share of Han characters
    assert langid.identify(["质量C级，末有下次ㅠㅠ", "三星手机（삼성）质量不错，屏幕很清楚"])[0] == ["zh", "zh"]  # emoticon jamo, a name


def test_empty_symbols_and_source_code_are_undetermined_with_zero_score():
    codes, scores = langid.identify(["", "   ", "1234 5678 !!", None])
    assert codes == ["und"] * 4 and scores.tolist() == [0.0] * 4
    codes, scores = langid.identify_docs(["print('hello world')", "hello world, how are you today"], ["code", "web"])
    assert codes == ["und", "en"] and scores[0] == 0.0


def test_annotate_marks_only_the_given_rows():
    df = pd.DataFrame({"text": ["今天天气很好，我们去公园散步吧", None], "source": ["web", "web"]})
    langid.annotate(df, np.array([True, False]))
    assert df["lang"].tolist() == ["zh", "und"] and df["lang_score"].iloc[1] == 0.0


@pytest.mark.skipif(not (DATA / "zh").is_dir(), reason="needs ../shared/data (real Chinese text)")
def test_real_chinese_sections_and_reviews_and_english_pages_are_identified():
    notes = pd.read_json(DATA / "zh" / "zh_tech_notes.jsonl.gz", lines=True)["text"].tolist()
    reviews = pd.read_json(DATA / "zh" / "zh_reviews.jsonl.gz", lines=True)["text"].astype(str).head(500).tolist()
    web = pd.read_parquet(DATA / "web" / "web_docs.parquet", columns=["source", "text"])
    english = web[(web["source"] == "wcxb") & (web["text"].str.len() > 200)]["text"].head(300).tolist()
    for texts, code in ((notes, "zh"), (reviews, "zh"), (english, "en")):
        found, _ = langid.identify(texts)
        assert np.mean([c == code for c in found]) >= 0.95, code
