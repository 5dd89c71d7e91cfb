"""The nesting guard counts as deep as the HTML5 parser (Resiliparse's Lexbor) builds the page, and no deeper
on pages that are not deep: self-closing non-void elements, stray end tags, tables, SVG and the
formatting elements the parser reopens all nest."""

import os
import random
import time
from pathlib import Path

import pandas as pd
import pytest

from curation.ingest.extract import MAX_DEPTH, extract_page, too_deep
from curation.ingest.nesting import nesting_depth
from curation.ingest.nesting import parser_depth as lexbor_depth

DATA = Path(os.environ.get("CURATION_SHARED_DATA", Path(__file__).resolve().parents[3] / "shared" / "data")) / "web" / "web_docs.parquet"

#: shapes an element count or a plain open-less-close count reads as flat, and the parser nests
SHAPES = {
    "self-closing div": lambda i: "<div/>",
    "stray end tag": lambda i: "<div></b>",
    "end tag over a special element": lambda i: "<span><div></span>",
    "end li over a list": lambda i: "<li><ul></li>",
    "table cells": lambda i: "<table><td>",
    "form end tag": lambda i: "<form><div></form>",
    "reopened formatting elements": lambda i: f"<p><b id={i}>",
    "self-closing past an SVG left": lambda i: "<svg><svg><div><foo/>" if i == 0 else "<foo/>",
    "unquoted slash in SVG": lambda i: "<svg><g a=/>" if i == 0 else "<g a=/>",
    "option in span": lambda i: "<option><span>",
    "optgroups": lambda i: "<optgroup>",
    "formatting past the list's three alike": lambda i: "<em><nobr>",
    "formatting reopened by a button": lambda i: "<button><em/>",
    "hr closes a paragraph": lambda i: "<p><hr><foreignObject>",
    "formatting reopened by a noscript": lambda i: "<noscript><p><em/><em><h1>",
}


def parser_depth(html: str) -> int:
    """Elements on the deepest path of the tree Lexbor parses, ``html`` and ``body`` left out."""
    return lexbor_depth(html) - 2


@pytest.mark.parametrize("shape", SHAPES)
def test_hostile_shapes_count_as_deep_as_the_parser_builds_them(shape):
    html = "<html><body>" + "".join(SHAPES[shape](i) for i in range(300)) + "x</body></html>"
    assert parser_depth(html) >= 300
    assert nesting_depth(html) >= parser_depth(html) - 1  # a leaf the guard does not open


@pytest.mark.parametrize("shape", ["self-closing div", "stray end tag", "reopened formatting elements"])
def test_a_hostile_page_past_the_limit_is_no_content_at_once(shape):
    """The tester's shapes: a 480 KB page of <div/> took minutes to extract, past the guard."""
    html = "<html><body>" + "".join(SHAPES[shape](i) for i in range(80_000)) + "deep text here</body></html>"
    started = time.process_time()
    assert too_deep(html)
    assert extract_page(html, "resiliparse_routed") == ("", None)
    assert extract_page(html, "trafilatura") == ("", None)
    assert time.process_time() - started < 1.0


@pytest.mark.parametrize("shape", ["optgroups", "formatting past the list's three alike", "formatting reopened by a button"])
def test_shapes_nesting_10k_deep_are_too_deep(shape):
    """Each nested 10k deep as Lexbor parses it (about 1 s of extraction) and passed the guard as flat."""
    html = "<html><body>" + "".join(SHAPES[shape](i) for i in range(10_000)) + "x</body></html>"
    assert too_deep(html)


def test_a_page_that_reopens_formatting_elements_past_the_limit_is_too_deep():
    """8.9 KB, 401 deep: each of 1,000 paragraphs reopens 400 distinct <b> (the parser makes 401k elements)."""
    bomb = "<html><body><p>" + "".join(f"<b id={i}>" for i in range(400)) + "<p>x" * 1000 + "</body></html>"
    assert nesting_depth(bomb) < MAX_DEPTH and len(bomb) < 9_000
    started = time.process_time()
    assert too_deep(bomb)
    assert extract_page(bomb, "resiliparse_routed") == ("", None)
    assert time.process_time() - started < 0.5
    assert not too_deep(bomb.replace("<p>x", "<p>x</b></b>"))  # a few hundred reopened: kept
    assert not too_deep("<html><body>" + "<p><b>x" * 12_000)  # three alike reopened in each: kept


def test_pages_that_do_not_nest_are_not_too_deep():
    flat = {
        "closed divs": "<div>x</div>" * 12_000,
        "paragraphs left open": "<p>a" * 12_000,
        "paths of an inline SVG": "<svg>" + '<path d="M0 0"/>' * 12_000 + "</svg>",
        "font left open in each cell": "<table>" + "<tr><td><font size=2>x</td></tr>" * 6_000 + "</table>",
        "bold left open in each paragraph": "<p><b>x" * 12_000,  # the parser reopens at most 3 alike
        "markup in scripts and comments": "<script>s = '<div>';</script><!-- <div> -->" * 6_000,
        "list items left open": "<ul>" + "<li>x" * 12_000 + "</ul>",
    }
    for name, html in flat.items():
        assert parser_depth(html) < 50, name
        assert nesting_depth(html) < 50, name
        assert not too_deep(html), name


def test_random_tag_soup_is_never_counted_much_shallower_than_parsed():
    names = ["div", "span", "p", "b", "i", "a", "li", "ul", "table", "tr", "td", "svg", "g", "math", "mi", "font", "form", "select", "option", "template", "textarea", "script"]
    rng = random.Random(7)
    for _ in range(300):
        tags = [rng.choice([f"<{n}>", f"</{n}>", f"<{n}/>", "x"]) for n in rng.choices(names, k=rng.randint(5, 80))]
        html = "".join(tags)
        assert nesting_depth(html) >= parser_depth(html) - 4, html
        for limit in (3, 10):
            assert (nesting_depth(html, limit) > limit) == (nesting_depth(html) > limit), html


@pytest.mark.skipif(not DATA.exists(), reason="shared data absent")
def test_real_pages_are_counted_as_parsed_and_none_is_too_deep():
    pages = [h for h in pd.read_parquet(DATA, columns=["html"])["html"].tolist() if isinstance(h, str) and h]
    assert not any(too_deep(h) for h in pages)
    deepest = sorted(pages, key=lambda h: h.count("<"), reverse=True)[:8]  # pages the guard scans
    for html in deepest:
        counted, parsed = nesting_depth(html), parser_depth(html)
        assert parsed - 4 <= counted <= parsed + 25 < MAX_DEPTH
