"""Main-content extractors: the article stays, the menu and footer go, hostile pages give no text."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from curation.ingest.extract import EXTRACTORS, extract_text

BODY = " ".join(f"Sentence number {i} of the article explains one more detail about river restoration." for i in range(25))
PAGE = (
    "<html><head><title>River</title><script>var x = 1;</script></head><body>"
    "<header><nav><ul><li><a href='/'>Home</a></li><li><a href='/news'>News</a></li><li><a href='/about'>About us</a></li></ul></nav></header>"
    f"<main><article><h1>Restoring the river</h1><p>{BODY}</p><p>{BODY.replace('river', 'stream')}</p></article></main>"
    "<footer><p>Copyright 2024 Example Media. All rights reserved.</p><p><a href='/privacy'>Privacy policy</a></p></footer>"
    "</body></html>"
)


@pytest.mark.parametrize("name", sorted(EXTRACTORS))
def test_each_extractor_keeps_the_article_and_drops_the_chrome(name: str) -> None:
    text = extract_text(PAGE, name)
    assert "Sentence number 3 of the article" in text and "stream restoration" in text
    assert "var x" not in text and "Privacy policy" not in text


@pytest.mark.parametrize("name", sorted(EXTRACTORS))
@pytest.mark.parametrize("page", ["", "   ", "<html><body><script>x()</script></body></html>", "\x00\x01<<<>>>", "<" * 5000])
def test_hostile_or_empty_pages_never_raise(name: str, page: str) -> None:
    text = extract_text(page, name)
    assert isinstance(text, str) and "x()" not in text
    if not page.strip() or "<script>" in page:
        assert text == ""


def test_chinese_page_keeps_its_text() -> None:
    """jusText is left out: its stop-word density counts space-separated words, so Chinese is all boilerplate."""
    zh = "<html><body><article><p>" + "数据库索引可以显著提高查询速度，但也会增加写入的开销。" * 8 + "</p></article></body></html>"
    for name in ("trafilatura", "trafilatura_fast", "resiliparse", "hybrid"):
        assert "数据库索引" in extract_text(zh, name), name


def test_unknown_extractor_names_the_choices() -> None:
    with pytest.raises(ValueError, match="choose one of"):
        extract_text(PAGE, "boilerpipe")


DATA = Path(os.environ.get("CURATION_SHARED_DATA", Path(__file__).resolve().parents[3] / "shared" / "data")) / "web" / "web_docs.parquet"


@pytest.mark.skipif(not DATA.exists(), reason="../shared/data is absent (real pages)")
def test_default_extractor_finds_most_snippets_on_real_pages() -> None:
    """40 real WCXB pages: the recipe's default keeps most must-have snippets and few must-not ones."""
    import pandas as pd
    import yaml

    from curation.ingest.extract import snippet_scores

    default = yaml.safe_load((Path(__file__).resolve().parents[2] / "pipelines/configs/glm45.yaml").read_text())["stages"]["ingest"]["extractor"]
    df = pd.read_parquet(DATA, columns=["source", "html", "with_snippets", "without_snippets"])
    pages = df[df["source"] == "wcxb"].head(40)
    scores = [snippet_scores(extract_text(h, default), json.loads(w), json.loads(wo)) for h, w, wo in
              zip(pages["html"], pages["with_snippets"], pages["without_snippets"], strict=True)]
    recall = pd.Series([r for r, _ in scores], dtype=float).mean()
    precision = pd.Series([p for _, p in scores], dtype=float).mean()
    assert recall > 0.7 and precision > 0.85, (recall, precision)


@pytest.mark.parametrize("name", sorted(EXTRACTORS))
def test_a_page_of_too_many_elements_gets_resiliparse_text_in_a_second(name: str) -> None:
    """``"<p>ab</p>" * n`` in an ``<article>``: trafilatura is quadratic in elements (1M: ~20 minutes), the
    line filter and jusText are slow too; past MAX_ELEMENTS every extractor gives Resiliparse's text and tree."""
    import time

    from resiliparse.parse.html import HTMLTree

    from curation.ingest.extract import extract_page, resiliparse_text

    n = 30_001  # MAX_ELEMENTS + 1
    bomb = "<html><body><article>" + "<p>ab</p>" * n + "</article></body></html>"
    t0 = time.process_time()
    text, tree = extract_page(bomb, name)
    assert isinstance(tree, HTMLTree) and text == resiliparse_text(bomb) and text.count("ab") == n
    assert time.process_time() - t0 < 3, time.process_time() - t0
