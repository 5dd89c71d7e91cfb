"""Main-content extraction: HTML page → the text a model should read.

One function per maintained extractor, one registry (:data:`EXTRACTORS`), one entry point
(:func:`extract_text`). Each extractor is imported inside its function (heavy imports stay off
import time) and returns ``""`` when it finds no main content.

- ``trafilatura`` (2.x): best quality measured here, slowest.
- ``resiliparse``: ``extract_plain_text(main_content=True)``, C++ DOM, ~10x faster.
- ``justext``: Nemotron-CC's choice (more tokens); stop words of every jusText language at once,
  so Chinese or Russian pages are not all boilerplate.
- ``trafilatura_fast``: trafilatura without its fallback extractors (readability, jusText).
- ``trafilatura_recall``: trafilatura with ``favor_recall=True``.
- ``hybrid``: ``trafilatura_fast`` first; resiliparse where trafilatura returns too little.
- ``resiliparse_routed``: resiliparse's main content with a learned line filter; the pages a learned
  router doubts (~1 in 8) go to ``trafilatura_fast`` (:mod:`curation.ingest.extract_lines`).

Figures and the reason for the recipe's default: BENCHMARKS.md (benchmarks/extract).

:func:`extract_page` is :func:`extract_text` that also gives the tree the extractor parsed (lxml's
for trafilatura, Resiliparse's for ``resiliparse`` and ``resiliparse_routed``; ``None`` for jusText), so that what
else is read from the HTML (the code tags ``code_web`` recalls by) is read from the same parse.

>>> html = "<html><body><nav>Home | About</nav><article><p>" + "Real sentence here. " * 20 + "</p></article></body></html>"
>>> extract_text(html, "resiliparse").startswith("Real sentence here.")
True
"""

from __future__ import annotations

import functools
import logging
import re
import unicodedata
from collections import Counter
from collections.abc import Callable
from typing import Any

from curation.ingest.nesting import MAX_DEPTH, MAX_REOPENED, most_levels, most_reopened, nesting_depth

#: Below this many characters an extraction counts as "too little" for the hybrid's fallback.
HYBRID_MIN_CHARS = 250
# trafilatura logs each page it finds empty or cannot parse at WARNING and ERROR ("discarding data",
# "empty HTML tree"): such a page is a ledger row (extraction_empty), and the lines are no error of the run
logging.getLogger("trafilatura").setLevel(logging.CRITICAL)


def _trafilatura(html: Any, fast: bool = False, favor_recall: bool = False) -> str:
    """``html``: the page, or the tree :func:`page_tree` parsed from it (trafilatura copies a tree it is given)."""
    import trafilatura

    logging.getLogger("trafilatura").setLevel(logging.CRITICAL)  # its per-page notes (above)

    out = trafilatura.extract(html, fast=fast, favor_recall=favor_recall, include_comments=False, include_tables=True,
                              deduplicate=False)
    return out or ""


def trafilatura_text(html: Any) -> str:
    """trafilatura 2.x with its fallbacks (readability-lxml, jusText) and tables, no comments."""
    return _trafilatura(html, fast=False)


def trafilatura_fast_text(html: Any) -> str:
    """trafilatura 2.x main extractor only (``fast=True``: no fallback extractors)."""
    return _trafilatura(html, fast=True)


def trafilatura_recall_text(html: Any) -> str:
    """trafilatura 2.x with fallbacks and ``favor_recall=True`` (keeps more of list and product pages)."""
    return _trafilatura(html, favor_recall=True)


def resiliparse_text(html: str) -> str:
    """Resiliparse's main-content heuristics with block formatting (paragraphs, lists, ``<pre>``)."""
    return resiliparse_page(html)[0]


def resiliparse_page(html: str) -> tuple[str, Any]:
    """:func:`resiliparse_text` and the ``HTMLTree`` it parsed."""
    from resiliparse.extract.html2text import extract_plain_text
    from resiliparse.parse.html import HTMLTree

    tree = HTMLTree.parse(html)
    return extract_plain_text(tree, preserve_formatting=True, main_content=True, list_bullets=True,
                              alt_texts=False, links=False, form_fields=False, noscript=False).strip(), tree


@functools.lru_cache(maxsize=1)
def _all_stopwords() -> frozenset[str]:
    import justext

    words: set[str] = set()
    for lang in justext.get_stoplists():
        words |= justext.get_stoplist(lang)
    return frozenset(words)


def justext_text(html: str) -> str:
    """jusText paragraphs that are not boilerplate (stop words of all its languages)."""
    import justext

    if not html.strip():
        return ""
    try:
        paragraphs = justext.justext(html.encode("utf-8", "surrogatepass"), _all_stopwords(), encoding="utf-8")
    except Exception:  # jusText raises lxml's ParserError on pages without a body
        return ""
    return "\n\n".join(p.text for p in paragraphs if not p.is_boilerplate).strip()


def hybrid_text(html: str, tree: Any = None) -> str:
    """trafilatura without fallbacks; resiliparse when that yields under :data:`HYBRID_MIN_CHARS`."""
    text = trafilatura_fast_text(html if tree is None else tree)
    if len(text) >= HYBRID_MIN_CHARS:
        return text
    other = resiliparse_text(html)
    return other if len(other) > len(text) else text


def resiliparse_routed_text(html: str) -> str:
    """Resiliparse's main content without the lines the line filter scores as boilerplate; the
    ``trafilatura_fast`` text for the pages the router sends there (unless that one is empty)."""
    return routed_page(html)[0]


def routed_page(html: str) -> tuple[str, Any]:
    """:func:`resiliparse_routed_text` and the tree it parsed: trafilatura's (:func:`page_tree`) for a
    page sent there, else Resiliparse's ``HTMLTree``."""
    from curation.ingest.extract_lines import filtered_page

    text, doubtful, tree = filtered_page(html)
    if not (doubtful and html):
        return text, tree
    tree = page_tree(html)
    return trafilatura_fast_text(html if tree is None else tree) or text, tree


EXTRACTORS: dict[str, Callable[[str], str]] = {
    "trafilatura": trafilatura_text,
    "trafilatura_fast": trafilatura_fast_text,
    "trafilatura_recall": trafilatura_recall_text,
    "resiliparse": resiliparse_text,
    "justext": justext_text,
    "hybrid": hybrid_text,
    "resiliparse_routed": resiliparse_routed_text,
}

#: extractors that parse the page with trafilatura's lxml parser (:func:`page_tree`)
LXML_EXTRACTORS = frozenset({"trafilatura", "trafilatura_fast", "trafilatura_recall", "hybrid"})

_BLANKS = re.compile(r"\n{3,}")


def page_tree(html: str) -> Any:
    """The lxml tree trafilatura parses ``html`` into (its ``load_html``), or None."""
    from trafilatura.utils import load_html

    try:
        return load_html(html)
    except (ValueError, TypeError, RecursionError, UnicodeError):
        return None


#: elements (open tags) past which a page gets Resiliparse's main content whatever the extractor:
#: trafilatura's main extractor is quadratic in elements (``"<p>ab</p>" * n`` in an ``<article>``:
#: 30k 0.9 s, 100k 10 s, 1M ~20 min), jusText worse (30k: 68 s), ``resiliparse_routed``'s line filter
#: costs ~27 s at 1M lines; Resiliparse alone reads 1M in ~1.5 s. The 2,129 real pages of
#: ``web/web_docs.parquet`` have at most 16k (99.9 % under 12.2k).
MAX_ELEMENTS = 30_000


def elements(html: str) -> int:
    """Open tags in ``html`` (``<`` less ``</``; a bare ``<`` in text counts too): a bound on its elements, read at C speed.

    >>> elements("<p>a</p><p>b<br>")
    3
    """
    return html.count("<") - html.count("</")


def too_deep(html: str, limit: int = MAX_DEPTH) -> bool:
    """Whether ``html`` nests more than ``limit`` elements deep as an HTML5 parser builds it
    (:func:`curation.ingest.nesting.nesting_depth`: ``<div/>`` opens a div, a stray end tag closes
    nothing), or makes the parser reopen more than :data:`~curation.ingest.nesting.MAX_REOPENED`
    formatting elements; a page of so few tags that it can do neither is not scanned.

    >>> too_deep("<div>" * 6000 + "x"), too_deep("<div/>" * 6000), too_deep("<p>a" * 12000), too_deep("<div>x</div>" * 12000)
    (True, True, False, False)
    """
    opened = elements(html)
    reopens = most_reopened(html) > MAX_REOPENED
    if 3 * opened <= limit and not reopens:  # at C speed: a start tag opens at most three levels
        return False
    levels = most_levels(html, opened)
    if reopens:
        return nesting_depth(html, limit, levels, MAX_REOPENED) > limit
    return levels > limit and nesting_depth(html, limit, levels) > limit


def too_deep_reason(html: str) -> str | None:
    """The ledger reason of a page :func:`extract_page` gives no text because it nests too deep, else None."""
    if isinstance(html, str) and too_deep(html):
        return (f"page nests more than {MAX_DEPTH:,} elements deep or reopens more than {MAX_REOPENED:,} "
                "formatting elements (MAX_DEPTH, MAX_REOPENED): not extracted")
    return None


def extract_text(html: str, extractor: str) -> str:
    """The main content of ``html`` with ``extractor`` (a key of :data:`EXTRACTORS`); ``""`` if none.

    Blank-line runs are folded to one empty line; extractor crashes on hostile pages count as
    "no content" (the caller ledgers them), never as a failed partition.
    """
    return extract_page(html, extractor)[0]


def extract_page(html: str, extractor: str) -> tuple[str, Any]:
    """:func:`extract_text` and the tree it parsed ``html`` into: lxml's (:func:`page_tree`) for the
    trafilatura extractors and the pages ``resiliparse_routed`` sends to trafilatura, Resiliparse's
    ``HTMLTree`` for ``resiliparse`` and the pages ``resiliparse_routed`` keeps; None for jusText or
    HTML trafilatura does not take. A page of more than :data:`MAX_ELEMENTS` elements gets
    Resiliparse's main content and tree whatever the extractor; one that nests more than
    :data:`MAX_DEPTH` deep gets ``""``.

    >>> text, tree = extract_page("<html><body><article><p>" + "Real sentence here. " * 20 + "</p></article></body></html>", "trafilatura")
    >>> text.startswith("Real sentence here."), len(tree.xpath("//p"))
    (True, 1)
    """
    try:
        fn = EXTRACTORS[extractor]
    except KeyError:
        raise ValueError(f"unknown extractor {extractor!r}; choose one of {sorted(EXTRACTORS)}") from None
    if isinstance(html, str) and too_deep(html):  # extraction is quadratic in nesting: hours for a hostile page
        return "", None
    big = isinstance(html, str) and elements(html) > MAX_ELEMENTS  # trafilatura and the line filter: minutes for such a page
    tree = page_tree(html) if extractor in LXML_EXTRACTORS and html and not big else None
    try:
        if extractor == "resiliparse" or big:
            text, tree = resiliparse_page(html)
        elif extractor == "resiliparse_routed":
            text, tree = routed_page(html)
        elif tree is None:
            text = fn(html)
        elif extractor == "hybrid":
            text = hybrid_text(html, tree)
        else:
            text = fn(tree)  # the same tree trafilatura would parse from the string, parsed once
    except (ValueError, TypeError, RecursionError, UnicodeError):
        return "", tree
    return _BLANKS.sub("\n\n", text.replace("\r\n", "\n")).strip(), tree


# --- evaluation (benchmarks/extract, tests): the snippet measure ---------------------------------
_WS = re.compile(r"\s+")
_TOKENS = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]|\w+")


_FOLD = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201a": "'", "\u2032": "'", "`": "'", "\u201c": '"', "\u201d": '"',
                       "\u201e": '"', "\u2033": '"', "\u2013": "-", "\u2014": "-", "\u2212": "-", "\u00a0": " "})


def norm(s: str) -> str:
    """NFKC, lower case, typographic quotes and dashes folded to ASCII, whitespace collapsed."""
    return _WS.sub(" ", unicodedata.normalize("NFKC", s).translate(_FOLD).lower()).strip()


def snippet_scores(text: str, must: list[str], must_not: list[str]) -> tuple[float | None, float | None]:
    """(recall, precision): share of ``must`` snippets found in ``text``, of ``must_not`` absent (None: no snippets).

    >>> snippet_scores("It\u2019s  here.", ["it's here"], ["Home"])
    (1.0, 1.0)
    """
    t = norm(text)
    must = [norm(s) for s in must if norm(s)]
    must_not = [norm(s) for s in must_not if norm(s)]
    recall = sum(s in t for s in must) / len(must) if must else None
    precision = sum(s not in t for s in must_not) / len(must_not) if must_not else None
    return recall, precision


def token_f1(text: str, truth: str) -> float:
    """Bag-of-words F1 of ``text`` against ``truth`` (CJK characters count as words)."""
    a, b = Counter(_TOKENS.findall(norm(text))), Counter(_TOKENS.findall(norm(truth)))
    common = sum((a & b).values())
    if not common:
        return 0.0
    p, r = common / sum(a.values()), common / sum(b.values())
    return 2 * p * r / (p + r)
