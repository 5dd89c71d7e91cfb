"""The code tags of a page, read from the parse its extractor made (ingest), and the re-parsed
text of the pages code_web may recall, rendered from that same parse.

:func:`page_code_tags` counts on trafilatura's lxml tree where it parses as :func:`parse` would
(:func:`same_parse`), or, for Resiliparse's tree, tells the pages without code markup
(:func:`codeless`) from the others, which it parses with lxml; :func:`page_code` also renders the
pages it parsed that hold code (:func:`~curation.quality.html_code.reparse_html`), so that no page
is parsed with lxml twice.
"""

from __future__ import annotations

import re
from typing import Any

from lxml import etree

from curation.quality.html_code import HIGHLIGHT_WORDS, CodeTagStats, code_tag_stats, parse, reparse_html

#: what trafilatura's ``load_html`` repairs before parsing (control characters, a self-closing ``<html/>``)
_REPAIRED = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def same_parse(html: str) -> bool:
    """Whether trafilatura's parse of ``html`` (:func:`curation.ingest.extract.page_tree`) counts
    the code tags :func:`parse` would: no XML declaration (read as bytes here), nothing
    trafilatura repairs first. Otherwise :func:`page_code_tags` parses the page itself.

    >>> same_parse("<html><body><pre>x</pre></body></html>"), same_parse("<html><body>\\x0c</body></html>")
    (True, False)
    """
    if html.lstrip().startswith("<?xml") or _REPAIRED.search(html):
        return False
    return not any("<html" in line and line.endswith("/>") for line in html[:4096].splitlines()[:4])


def page_code_tags(html: str | None, tree: Any = None) -> tuple[bool, CodeTagStats]:
    """(parsed, code tags) of a page: from ``tree`` (trafilatura's parse of ``html``) where that
    counts as :func:`parse` does (:func:`same_parse`), else from a parse of its own. ``tree`` may
    also be Resiliparse's parse of ``html``: a page it shows :func:`codeless` (most pages) counts
    nothing without another parse; the others are parsed here.

    >>> page_code_tags("<p>x</p><pre>for i in range(3):\\n    print(i)</pre>")[1].pre_blocks
    1
    """
    return _page_code(html, tree, render=False)[:2]


def page_code(html: str | None, tree: Any = None) -> tuple[bool, CodeTagStats, str | None]:
    """:func:`page_code_tags` and, for a page parsed here (not ``tree``) with code characters in a
    code block (a page code_web's tag recall may take), its :func:`reparse_html` text, rendered from
    that parse: code_web takes it instead of parsing the page again. None for the other pages.

    >>> page_code("<p>Use it:</p><pre>x = 1</pre>")[2]
    'Use it:\\n\\n```\\nx = 1\\n```'
    """
    return _page_code(html, tree, render=True)


def _page_code(html: str | None, tree: Any, render: bool) -> tuple[bool, CodeTagStats, str | None]:
    if tree is not None and type(tree).__module__.startswith("resiliparse"):
        if html and codeless(html, tree):
            return True, CodeTagStats(0, 0, 0, 0), None
        tree = None
    own = not (tree is not None and html and same_parse(html))
    root = parse(html or "") if own else tree
    stats = code_tag_stats(None, root)
    text = None
    if render and own and root is not None and stats.may_recall():
        try:  # after the counts: the render strips the tree it reads
            text = reparse_html(None, root)
        except (ValueError, TypeError, RecursionError, etree.LxmlError):
            text = None  # ingest does not fail on it: code_web parses the page again if it recalls it
    return root is not None, stats, text


#: what keeps :func:`codeless` from answering off Resiliparse's tree: a ``<pre``, ``<code`` or ``<template``
#: (whose content Resiliparse keeps apart) in the markup, an XML declaration (:data:`_UNSURE`), or a
#: character that Python's case-insensitive match folds onto an ASCII letter of :data:`HIGHLIGHT_WORDS`
#: (:data:`_FOLDING`; CSS's ``i`` flag does not). Two scans: one pattern of both costs ten times more
_UNSURE = re.compile(r"<(?:pre|code|template)|<\?xml", re.IGNORECASE)
_FOLDING = "\u0130\u0131\u017f\u212a"
#: elements that may carry a highlighter class without a ``<pre>`` or ``<code>`` on the page (a superset: CSS
#: substring selectors, any case; :func:`code_tag_stats` counts those :data:`HIGHLIGHT_CLASS` matches)
_HOLDERS = ",".join(f'{tag}[class*="{word}" i]' for tag in ("div", "table", "td") for word in HIGHLIGHT_WORDS)


def codeless(html: str, tree: Any) -> bool:
    """Whether :func:`code_tag_stats` counts nothing on ``html``, told from Resiliparse's parse of it
    (``tree``, a ``resiliparse.parse.html.HTMLTree``) without a parse of its own: no ``<pre``/``<code``
    in the markup (so no ``<pre>``, ``<code>`` or code characters; nor a ``<template``, an XML
    declaration or a case-folding letter) and no ``<div>``, ``<table>`` or ``<td>`` in the tree whose
    class holds a highlighter's word. Pre blocks, code elements and code characters are exact; a
    highlighter class on an element the two parsers place differently (a stray ``<td>``) is not
    counted, which no recall with ``min_code_chars`` ≥ 1 reads (no code characters).

    >>> from resiliparse.parse.html import HTMLTree
    >>> page = "<div class='hljs'>x</div>"
    >>> codeless("<p>Plain</p>", HTMLTree.parse("<p>Plain</p>")), codeless(page, HTMLTree.parse(page))
    (True, False)
    """
    if _UNSURE.search(html) is not None or (not html.isascii() and any(c in html for c in _FOLDING)):
        return False
    return tree.document.query_selector(_HOLDERS) is None
