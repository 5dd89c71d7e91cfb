"""The re-parse of code pages (lxml's plain parser, walks over the tree instead of XPath queries,
class tests remembered) against the lxml.html + XPath implementation it replaced, kept here as the
reference: same text, same code tags, on real pages and on edge cases."""

from __future__ import annotations

import dataclasses
import os
import re
from pathlib import Path
from typing import Any

import lxml.html
import pandas as pd
import pytest
from lxml import etree

from curation.quality.html_code import (
    _GUTTER,
    _SKIP,
    BLOCK_TAGS,
    HIGHLIGHT_CLASS,
    _code_language,
    code_tag_stats,
    parse,
    reparse_html,
)
from curation.quality.html_main import BOILERPLATE, CONTAINERS, DROP_TAGS, strip_boilerplate

DATA = Path(os.environ.get("CURATION_SHARED_DATA", Path(__file__).resolve().parents[3] / "shared" / "data")) / "web" / "web_docs.parquet"

# ---- reference: the lxml.html + XPath implementation ------------------------------------------

# the patterns and tag sets are the module's own (unchanged); the functions below are the old ones


def ref_parse(html: str) -> Any:
    """An lxml tree of ``html`` or None when it cannot be parsed."""
    if not html or not html.strip():
        return None
    try:
        return lxml.html.fromstring(html.encode("utf-8", "surrogatepass") if html.lstrip().startswith("<?xml") else html)
    except (etree.ParserError, ValueError, etree.XMLSyntaxError):
        return None




def ref_code_tag_stats(html: str | None, root: Any = None) -> tuple[int, int, int, int]:
    """Code blocks of a page, from its HTML.

    >>> code_tag_stats('<p>x</p><pre>for i in range(3):\\n    print(i)</pre>').pre_blocks
    1
    """
    root = root if root is not None else ref_parse(html or "")
    if root is None:
        return (0, 0, 0, 0)
    pres = root.xpath("//pre")
    codes = root.xpath("//code")
    highlighted = sum(1 for el in root.xpath("//*[@class]") if el.tag in ("div", "pre", "code", "table", "td")
                      and HIGHLIGHT_CLASS.search(el.get("class", "")))
    chars = sum(len(p.text_content()) for p in pres)
    # block-level <code> outside <pre> (e.g. <code style="display:block">) with line breaks
    chars += sum(len(c.text_content()) for c in codes if c.getparent() is not None and c.getparent().tag != "pre"
                 and "\n" in (c.text_content() or ""))
    return (len(pres), len(codes), highlighted, chars)


def ref_reparse_html(html: str | None, root: Any = None) -> str:
    """Main text of a page with fenced code blocks; "" when the HTML cannot be parsed."""
    root = root if root is not None else ref_parse(html or "")
    if root is None:
        return ""
    root = _strip_boilerplate(root)
    main = _main_container(root)
    out: list[str] = []
    _render(main, out)
    text = "".join(out)
    text = re.sub(r"[ \t]+\n", "\n", text)
    return re.sub(r"\n{3,}", "\n\n", text).strip()


def _strip_boilerplate(root: Any) -> Any:
    for el in root.xpath("|".join(f"//{t}" for t in DROP_TAGS)):
        if el.getparent() is None or el.xpath(".//pre"):
            continue
        # an article's own <header>/<footer> holds its title and intro (MDN, many blogs): keep those
        if el.tag in ("header", "footer") and el.xpath("ancestor::article|ancestor::main"):
            continue
        el.drop_tree()
    for el in root.xpath("//comment()"):
        if el.getparent() is not None:
            el.getparent().remove(el)
    for el in root.xpath("//*[@class or @id or @role or @aria-hidden]"):
        if el.getparent() is None or el.tag not in CONTAINERS:
            continue
        marker = f"{el.get('class', '')} {el.get('id', '')}"
        role = (el.get("role") or "").lower()
        hidden = el.get("aria-hidden") == "true" or "display:none" in (el.get("style") or "").replace(" ", "")
        boiler = role in ("navigation", "banner", "contentinfo", "complementary", "dialog") or hidden
        # the tree walks last, and only for an element that is a candidate (most are not)
        if not (boiler or BOILERPLATE.search(marker)) or el.xpath("ancestor::pre|ancestor::h1|ancestor::h2|ancestor::h3"):
            continue
        if boiler or (not el.xpath(".//pre") and len(el.text_content()) < 3000 and not _holds_content(el)):
            el.drop_tree()
    return root


def _holds_content(el: Any) -> bool:
    """A title or a real paragraph inside the main content: a ``layout__header`` holding the h1 and intro."""
    if not el.xpath("ancestor::main|ancestor::article|ancestor::*[@role='main']"):
        return False
    return bool(el.xpath(".//h1")) or any(len(p.text_content()) >= 150 for p in el.xpath(".//p"))


def _main_container(root: Any) -> Any:
    for xp in ("//main", "//*[@role='main']", "//article", "//*[@itemprop='articleBody']",
               "//*[contains(concat(' ', normalize-space(@class), ' '), ' content ')]", "//*[@id='content']"):
        found = root.xpath(xp)
        if found:
            best = max(found, key=lambda e: len(e.text_content()))
            # a short <article> teaser is not the page's main content
            if len(best.text_content()) > 0.3 * len(root.text_content()):
                return best
    body = root.xpath("//body")
    return body[0] if body else root


def _render(el: Any, out: list[str]) -> None:
    tag = el.tag if isinstance(el.tag, str) else ""
    if tag and _SKIP.search(f"{el.get('class', '')} {el.get('id', '')}"):
        if el.tail:
            out.append(_fold(el.tail))
        return
    if tag == "pre" or (tag == "div" and _is_code_div(el)):
        code = _code_text(el)
        if code.strip():
            out.append(f"\n\n```{_code_language(el)}\n{code.strip(chr(10))}\n```\n\n")
        if el.tail:
            out.append(_fold(el.tail))
        return
    if tag == "br":
        out.append("\n")
    elif tag in ("h1", "h2", "h3", "h4", "h5", "h6"):
        out.append("\n\n" + "#" * int(tag[1]) + " ")
    elif tag == "li":
        out.append("\n- ")
    elif tag in ("td", "th"):
        out.append(" | ")
    elif tag in BLOCK_TAGS:
        out.append("\n\n" if tag not in ("tr", "dt", "dd") else "\n")
    if tag == "code":
        inner = el.text_content()
        if inner.strip():
            out.append(f"`{inner.strip()}`" if "\n" not in inner.strip() else f"\n\n```\n{inner.strip(chr(10))}\n```\n\n")
    else:
        if el.text:
            out.append(_fold(el.text))
        for child in el:
            _render(child, out)
    if tag in BLOCK_TAGS and tag not in ("br", "li", "td", "th"):
        out.append("\n\n" if tag not in ("tr", "dt", "dd") else "\n")
    if el.tail:
        out.append(_fold(el.tail))


def _fold(s: str) -> str:
    return re.sub(r"\s+", " ", s)


def _is_code_div(el: Any) -> bool:
    cls = el.get("class") or ""
    return bool(HIGHLIGHT_CLASS.search(cls)) and not el.xpath(".//pre") and "\n" in el.text_content()


def _code_text(el: Any) -> str:
    """The text of a code block, line numbers left out and ``<br>`` read as a newline."""
    parts: list[str] = []

    def walk(node: Any) -> None:
        tag = node.tag if isinstance(node.tag, str) else ""
        if tag and _GUTTER.search(f"{node.get('class', '')} {node.get('id', '')}"):
            if node.tail:
                parts.append(node.tail)
            return
        if tag == "br":
            parts.append("\n")
        if node.text and tag not in ("script", "style"):
            parts.append(node.text)
        for child in node:
            walk(child)
        if tag in ("div", "p", "tr") and parts and not parts[-1].endswith("\n"):
            parts.append("\n")  # line-per-div highlighters (e.g. <div class="line">)
        if node.tail and node is not el:
            parts.append(node.tail)

    walk(el)
    return "".join(parts).replace("\r\n", "\n").replace("\xa0", " ")


EDGE = [
    "", "   ", "<p>x</p>", "plain text, no tags", "<pre>a\n  b</pre>",
    "<html><body><nav>Home</nav><p>Use it:</p><pre><code class='language-py'>if x:\n    y()</code></pre></body></html>",
    "<p>中文内容，代码如下：</p><pre>print('你好')\nx = 1</pre><p>😀 emoji 🎉</p>",
    "<p>lone \ud800 surrogate</p><pre>x\ud83d = 1\n</pre>",
    "<?xml version='1.0' encoding='utf-8'?><html><body><pre>é = 1\nb = 2</pre></body></html>",
    "<div>a</div></body><body><p>b</p><pre>x\ny</pre>",  # a fragment with two <body>s
    "<head><title>t</title></head><body>a</body><body>b<pre>c\nd</pre></body>",
    "<body><div class='sidebar'><div class='menu'><pre>kept\ncode</pre></div><p>x</p></div>"
    "<div class='nav'><span class='share'>s</span>tail</div>after<!-- c -->text</body>",
    "<body><main><header class='site-header'><h1>Title</h1></header><div class='related'><p>" + "long " * 40 + "</p></div>"
    "<div class='toc'><h1>h</h1></div><div role='navigation'>n</div><div aria-hidden='true'>h</div>"
    "<div style='display: none' class='x'>hidden</div><h2><span class='menu'>in h2</span></h2></main>"
    "<div role='main'><div class='ads'><p>" + "para " * 40 + "</p></div></div>"
    "<article><footer>foot</footer><section class='comments'>c</section></article><footer>page foot</footer></body>",
    "<body><div class='highlight'><div class='line'>a = 1</div><div class='line'>b = 2</div>\n</div>"
    "<table class='highlighttable'><tr><td class='linenos'><pre>1\n2</pre></td><td><pre class='language-go'>x\ny</pre></td></tr></table>"
    "<p>A <code>inline</code> and <code>multi\nline</code><br>x<a class='headerlink'>¶</a>\u2028\u3000 \x85end</p></body>",
    "<body><?php echo 1; ?><p>\xa0\t\n x \u2003 y\x1c\x1f </p><script>var a;</script><svg><pre>in svg\nx</pre></svg></body>",
    "<div><span>only inline</span></div>", "<span>a</span><span>b</span>",
]


@pytest.mark.parametrize("html", EDGE)
def test_edge_cases_match_reference(html):
    assert reparse_html(html) == ref_reparse_html(html)
    assert dataclasses.astuple(code_tag_stats(html)) == ref_code_tag_stats(html)


def test_parse_is_lxml_html_fromstring_tree():
    for html in EDGE[2:]:
        ours, ref = parse(html), ref_parse(html)
        assert (ours is None) == (ref is None)
        if ref is not None:
            assert etree.tostring(ours) == etree.tostring(ref) and ours.tag == ref.tag


def test_stripped_tree_matches_reference():
    for html in EDGE[2:]:
        ref = ref_parse(html)
        if ref is not None:
            assert etree.tostring(strip_boilerplate(parse(html)).getroottree()) == etree.tostring(_strip_boilerplate(ref).getroottree())


def test_whitespace_folding_matches_regex():
    from curation.quality.html_code import _fold

    spaces = " \t\n\r\x0b\x0c\x1c\x1d\x1e\x1f\x85\xa0\u1680\u2000\u200a\u2028\u2029\u202f\u205f\u3000\u200b\ufeff"
    samples = [" ", "a", "中文", "😀", "\ud800"] + [a + b + c for a in ("", " ", "\u3000\n") for b in ("x", "x y", "x\u200b\u3000y") for c in ("", "\t", "\x85")]
    samples += [spaces, "a" + spaces + "b", spaces + "a", "a" + spaces]
    for s in samples:
        assert _fold(s) == re.sub(r"\s+", " ", s), repr(s)


@pytest.mark.skipif(not DATA.exists(), reason="needs the shared real web pages")
def test_real_pages_match_reference():
    pages = pd.read_parquet(DATA, columns=["html"])["html"].dropna()
    for html in pages.sample(n=min(150, len(pages)), random_state=1):
        assert reparse_html(html) == ref_reparse_html(html)
        assert dataclasses.astuple(code_tag_stats(html)) == ref_code_tag_stats(html)
