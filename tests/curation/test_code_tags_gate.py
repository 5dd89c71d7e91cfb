"""Code tags of the pages ``resiliparse_routed`` keeps, told from Resiliparse's own parse
(:func:`curation.quality.page_code.codeless`) instead of a second parse with lxml: the same counts
as lxml's on real pages and on markup the two parsers read differently."""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd
import pytest
from resiliparse.parse.html import HTMLTree

from curation.ingest.extract import extract_page
from curation.quality.html_code import CodeTagStats, reparse_html
from curation.quality.page_code import codeless, page_code, page_code_tags, same_parse

DATA = Path(os.environ.get("CURATION_SHARED_DATA", Path(__file__).resolve().parents[3] / "shared" / "data")) / "web" / "web_docs.parquet"
ZERO = CodeTagStats(0, 0, 0, 0)

SAME = [
    "<html><body><p>Just prose, no code at all.</p></body></html>",
    "<html><body><PRE>x = 1\ny = 2\nprint(x + y)</PRE></body></html>",
    "<p>Use <code>len(x)</code> here.</p>",
    "<template><pre>x = 1\nprint(x)\nprint(x)\nprint(x)\nprint(x)\nprint(x)</pre></template><p>Text</p>",  # apart in Resiliparse
    "<noscript><pre>a\nb</pre></noscript><p>Text</p>",
    "<div class='HLJS language-python'>def f():\n    return 1</div>",
    "<div data-x='a>b' class='highlight'>q</div><p>Text</p>",  # a '>' inside a quoted attribute
    "<div class='sourcecode'>q</div>",
    "<table class='blob-code'><tr><td>x</td></tr></table>",
    "<div class='hlj\u017f'>q</div><p>Text</p>",  # a long s: Python's case-insensitive match reads it as s
    "<div class='\u212aode'>q</div><p>Stra\u00dfe</p>",  # a Kelvin sign
    "<?xml version='1.0' encoding='utf-8'?><html><body><p>XHTML page</p></body></html>",
    "<div class='nav-highlight'>Menu</div><p>A page whose menu is highlighted, no code.</p>",
    "<script>document.write('<pre>')</script><p>Text</p>",
]


@pytest.mark.parametrize("html", SAME)
def test_codeless_pages_count_as_lxml_does(html: str) -> None:
    tree = HTMLTree.parse(html)
    assert page_code_tags(html, tree) == page_code_tags(html)
    if codeless(html, tree):
        assert page_code_tags(html) == (True, ZERO)


def test_a_page_with_code_markup_is_never_codeless() -> None:
    for html in SAME[1:11]:
        assert not codeless(html, HTMLTree.parse(html)), html
    assert codeless(SAME[0], HTMLTree.parse(SAME[0]))


def test_a_highlighter_class_lexbor_drops_is_the_one_difference_and_recalls_nothing() -> None:
    """A stray ``<td>`` outside a table: libxml2 keeps it, an HTML5 parser drops it. Only the
    highlighter count can differ; no pre, code or code characters, so no recall reads it."""
    html = "<html><body><td class='highlight'>x</td><p>Text</p></body></html>"
    assert codeless(html, HTMLTree.parse(html))
    parsed, lxml_tags = page_code_tags(html)
    assert parsed and lxml_tags == CodeTagStats(0, 0, 1, 0)
    assert not lxml_tags.recalled() and not lxml_tags.recalled(min_blocks=1, min_chars=1)


def test_routed_extraction_gives_resiliparse_tree_for_kept_pages() -> None:
    body = "<p>" + "A real sentence about rivers and their restoration. " * 12 + "</p>"
    page = "<html><body><article>" + body * 3 + "</article></body></html>"
    text, tree = extract_page(page, "resiliparse_routed")
    assert text.startswith("A real sentence") and isinstance(tree, HTMLTree)
    assert page_code_tags(page, tree) == (True, ZERO) == page_code_tags(page)


@pytest.mark.parametrize("html", SAME)
def test_plain_resiliparse_gives_its_tree_and_the_same_tags(html: str) -> None:
    text, tree = extract_page(html, "resiliparse")
    assert isinstance(tree, HTMLTree)
    if text:
        assert page_code_tags(html, tree) == page_code_tags(html)


@pytest.mark.skipif(not DATA.exists(), reason="shared real web pages not present")
def test_real_pages_count_the_same_code_tags_with_fewer_parses() -> None:
    pages = [p for p in pd.read_parquet(DATA, columns=["html"])["html"].dropna().tolist() if p.strip()][:400]
    skipped, compared, rendered = 0, 0, 0
    for html in pages:
        text, tree = extract_page(html, "resiliparse_routed")
        if not text:
            continue
        compared += 1
        parsed, tags, code_text = page_code(html, tree)
        assert (parsed, tags) == page_code_tags(html, tree) == page_code_tags(html)
        skipped += isinstance(tree, HTMLTree) and codeless(html, tree)
        # the pages it parsed itself with code in a block: their re-parse, as code_web would make it
        lxml_tree = tree is not None and not isinstance(tree, HTMLTree) and same_parse(html)
        assert code_text == (reparse_html(html) if tags.may_recall() and not lxml_tree else None)
        rendered += code_text is not None
    assert compared >= 350 and skipped >= 0.4 * compared and rendered >= 3, (compared, skipped, rendered)


def test_page_code_renders_only_pages_it_parsed_that_hold_code() -> None:
    from curation.ingest.extract import page_tree

    code = "<html><body><p>Use it:</p><pre>for i in range(3):\n    print(i)</pre></body></html>"
    assert page_code(code)[2] == reparse_html(code) and "```" in page_code(code)[2]
    assert page_code(code, HTMLTree.parse(code))[2] == reparse_html(code)  # not codeless: parsed with lxml here
    assert page_code(code, page_tree(code))[2] is None  # trafilatura's tree: code_web parses the page itself
    assert page_code(SAME[0], HTMLTree.parse(SAME[0])) == (True, ZERO, None)
    assert page_code("<p>Use <code>len(x)</code>.</p>")[2] is None  # inline code only: no block to recall by


def test_a_render_that_fails_leaves_the_page_to_code_web(monkeypatch: pytest.MonkeyPatch) -> None:
    """Ingest counts the tags and goes on; code_web parses the page itself (no rendered text)."""
    import curation.quality.page_code as pc

    def broken(html: object, root: object = None) -> str:
        raise RecursionError("deep page")

    monkeypatch.setattr(pc, "reparse_html", broken)
    code = "<p>Use it:</p><pre>for i in range(3):\n    print(i)</pre>"
    parsed, tags, text = pc.page_code(code)
    assert parsed and tags.pre_blocks == 1 and text is None
