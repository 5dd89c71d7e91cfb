"""``resiliparse_routed``: lines read off Resiliparse's minimal HTML, the shipped trees, the filter and the router."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from urllib.parse import urlsplit

import numpy as np
import pytest

from curation.ingest import extract_lines as el
from curation.ingest.extract import extract_text

PARAGRAPHS = [
    "The committee met on Tuesday to discuss how the river banks could be restored after the spring floods, "
    "and it agreed that willow planting should start before the end of the month.",
    "Volunteers from three villages will plant the cuttings along a two-kilometre stretch, while the water "
    "authority measures how fast the banks erode during the summer storms.",
    "Earlier projects upstream showed that planted banks lose less soil, although the effect took three years "
    "to become visible in the measurements, according to the engineers.",
    "The next meeting, in September, will look at the first results and decide whether the project should be "
    "extended to the tributaries north of the town.",
]
NAV = "".join(f"<li><a href='/{w.lower()}'>{w}</a></li>" for w in ("Home", "News", "Sport", "Weather", "Contact"))
PAGE = (
    "<html><body><header><ul>" + NAV + "</ul></header><main><article><h1>Willows for the river banks</h1>"
    + "".join(f"<p>{p}</p>" for p in PARAGRAPHS)
    + "<p><a href='/share/fb'>Share on Facebook</a> <a href='/share/tw'>Share on Twitter</a></p>"
    "<h3>Related articles</h3><ul>" + "".join(f"<li><a href='/a{i}'>Flood defences, part {i}</a></li>" for i in range(6)) + "</ul>"
    "</article></main><footer><p><a href='/newsletter'>Subscribe to our newsletter</a></p>"
    "<p>Copyright 2024 Example Media. All rights reserved.</p></footer></body></html>"
)


def test_lines_keep_tags_link_share_and_paragraph_starts() -> None:
    lines = el.page_lines('<h2>A &amp; B</h2>\n\n<p>See <a href="/x">this page</a> now.<br>\nsecond line</p>\n<ul>\n  <li>item</li>\n</ul>')
    assert [(x.text, x.link_chars, x.tag, x.depth, x.starts_block) for x in lines] == [
        ("A & B", 0, "h2", 0, True), ("See this page now.", 9, "p", 0, True), ("second line", 0, "p", 0, False),
        ("item", 0, "li", 1, True)]
    assert el.render(lines) == "A & B\n\nSee this page now.\nsecond line\n\n- item"


def test_forest_walks_every_tree_to_its_leaf() -> None:
    """Two stumps on features 0 and 1: raw score = baseline + one leaf of each."""
    trees = {"feature": [[0, 0, 0], [1, 0, 0]], "threshold": [[0.5, 0, 0], [2.0, 0, 0]], "left": [[1, 1, 2], [1, 1, 2]],
             "right": [[2, 1, 2], [2, 1, 2]], "value": [[0, -1.0, 1.0], [0, -2.0, 2.0]], "depth": 1, "baseline": 0.5}
    x = np.array([[0.0, 0.0], [1.0, 3.0], [1.0, 1.0]])
    raw = np.array([0.5 - 1 - 2, 0.5 + 1 + 2, 0.5 + 1 - 2])
    assert np.allclose(el.tree_scores(el.Forest.of(trees), x), 1 / (1 + np.exp(-raw)))


def test_filter_keeps_the_article_and_drops_menus_shares_and_related_links() -> None:
    text, doubtful = el.filtered_text(PAGE)
    for p in PARAGRAPHS:
        assert p in text
    for chrome in ("Weather", "Share on Facebook", "Flood defences, part 3", "Subscribe to our newsletter"):
        assert chrome not in text, chrome
    assert not doubtful
    assert extract_text(PAGE, "resiliparse_routed") == text


def test_pages_without_main_content_go_to_trafilatura() -> None:
    assert el.filtered_text("") == ("", True)
    assert el.filtered_text("<html><body><script>x()</script></body></html>") == ("", True)


def test_chinese_page_keeps_its_text() -> None:
    zh = "<html><body><article>" + "<p>数据库索引可以显著提高查询速度，但也会增加写入的开销。这是一个很常见的权衡。</p>" * 6 + "</article></body></html>"
    text, _ = el.filtered_text(zh)
    assert "数据库索引" in text
    assert "数据库索引" in extract_text(zh, "resiliparse_routed")


DATA = Path(os.environ.get("CURATION_SHARED_DATA", Path(__file__).resolve().parents[3] / "shared" / "data")) / "web" / "web_docs.parquet"


def _held_out(url: str) -> bool:  # the split of benchmarks/extract/train_line_filter.py
    return int(hashlib.sha1((urlsplit(url).hostname or "").removeprefix("www.").encode()).hexdigest(), 16) % 2 == 1


@pytest.mark.skipif(not DATA.exists(), reason="../shared/data is absent (real pages)")
def test_held_out_real_pages_keep_snippets_and_route_few() -> None:
    """60 real WCXB pages from hosts the trees never saw: most must-have snippets kept, few must-not
    ones, and only a minority of pages sent to trafilatura."""
    import pandas as pd

    from curation.ingest.extract import snippet_scores

    df = pd.read_parquet(DATA, columns=["source", "url", "html", "with_snippets", "without_snippets"])
    pages = df[(df["source"] == "wcxb") & df["url"].map(_held_out)].head(60)
    results = [el.filtered_text(h) for h in pages["html"]]
    scores = [snippet_scores(t, json.loads(w), json.loads(wo)) for (t, _), w, wo in
              zip(results, pages["with_snippets"], pages["without_snippets"], strict=True)]
    recall = pd.Series([r for r, _ in scores], dtype=float).mean()
    precision = pd.Series([p for _, p in scores], dtype=float).mean()
    routed = np.mean([d for _, d in results])
    assert recall > 0.7 and precision > 0.88 and routed < 0.3, (recall, precision, routed)


def test_a_page_sent_to_trafilatura_gives_its_tree_for_the_code_tags() -> None:
    """Pages the filter keeps give Resiliparse's tree; a routed page's tree is the one trafilatura read."""
    from resiliparse.parse.html import HTMLTree

    from curation.ingest.extract import extract_page

    text, tree = extract_page(PAGE, "resiliparse_routed")
    assert PARAGRAPHS[0] in text and isinstance(tree, HTMLTree)
    shell = "<html><body><div><span>Only a short line of text here.</span></div><pre>x = 1</pre></body></html>"
    assert el.filtered_text(shell)[1]  # doubtful: almost nothing kept
    text, tree = extract_page(shell, "resiliparse_routed")
    assert tree is not None and len(tree.xpath("//pre")) == 1


def test_the_first_h1_is_kept_whatever_its_score() -> None:
    lines = el.page_lines("<h1>Title one</h1>\n\n<p>Body text.</p>\n\n<h1>Title two</h1>")
    assert [x.text for x in el.kept_lines(lines, np.array([0.0, 0.9, 0.0]), 0.35)] == ["Title one", "Body text."]
    assert "Willows for the river banks" in el.filtered_text(PAGE)[0]


def _article(n: int, sentences: int) -> tuple[str, list[str]]:
    """``<article><h1>Chapter</h1>`` and ``n`` plain paragraphs of ``sentences`` varied sentences each."""
    import random

    who = ["The committee", "Each volunteer", "The water authority", "An engineer from the county", "The mayor", "Most residents"]
    did = ["measured", "described", "questioned", "planned", "reviewed", "compared", "recorded", "explained"]
    what = ["how fast the banks erode in summer", "the cost of planting willows along the stretch", "the results of earlier projects upstream",
            "why the soil moves after heavy rain", "the schedule for the next season", "the depth of the river at the old mill"]
    when = ["before the end of the month", "in a report to the council", "with help from the university", "during the spring floods"]
    paras = []
    for i in range(n):
        r = random.Random(i)
        paras.append(" ".join(f"{r.choice(who)} {r.choice(did)} {r.choice(what)} {r.choice(when)}." for _ in range(sentences)))
    return "<html><body><article><h1>Chapter</h1>" + "".join(f"<p>{p}</p>" for p in paras) + "</article></body></html>", paras


@pytest.mark.parametrize(("n", "sentences"), [(97, 4), (120, 3), (150, 5), (400, 5)])
def test_a_long_plain_article_keeps_its_body(n: int, sentences: int) -> None:
    """35k–190k characters of plain paragraphs: the trees keep only the title or a few of them (pages
    longer than most they were fitted on), so the page goes to trafilatura, which keeps them all."""
    page, paras = _article(n, sentences)
    kept_by_filter, doubtful, _ = el.filtered_page(page)
    text = extract_text(page, "resiliparse_routed")
    assert doubtful and len(kept_by_filter) < sum(map(len, paras)) / 2
    assert sum(p in text for p in paras) >= 0.98 * n and text.startswith("Chapter")


def test_only_the_title_kept_counts_as_nothing_kept() -> None:
    assert el.too_little_kept(10_000, 0) and el.too_little_kept(10_000, 499) and not el.too_little_kept(10_000, 500)
    assert el.too_little_kept(el.LONG_CHARS + 1, el.LONG_CHARS // 2) and not el.too_little_kept(el.LONG_CHARS, 0.4 * el.LONG_CHARS)
    assert el.too_little_kept(el.TOO_LONG_CHARS + 1, el.TOO_LONG_CHARS + 1)
    text, doubtful = el.filtered_text(PAGE)  # a short page that keeps its body stays with the filter
    assert not doubtful and PARAGRAPHS[3] in text


@pytest.mark.skipif(not DATA.exists(), reason="../shared/data is absent (real pages)")
def test_a_long_real_article_keeps_its_body() -> None:
    """pmc.ncbi.nlm.nih.gov/articles/PMC11298280 (held out, 45.6k characters of reference text)."""
    import pandas as pd

    df = pd.read_parquet(DATA, columns=["url", "html", "text"])
    page = df[df["url"].str.contains("PMC11298280", regex=False)].iloc[0]
    assert len(extract_text(page["html"], "resiliparse_routed")) > 0.9 * len(page["text"])
