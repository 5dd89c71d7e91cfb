"""``resiliparse_routed``: Resiliparse's main content, a learned line filter, trafilatura for the pages it doubts.

Resiliparse keeps more of a page's main text than trafilatura at ~1/10 of its CPU cost, but also
its menus, calls to action and "related articles" lines. This module reads Resiliparse's
``minimal_html`` rendering (blocks with their tag and their link text), scores every line with
small gradient-boosted trees (``LINE_TREES`` of ``extract_lines_model.json``: length, link share, tag,
position, neighbours, boilerplate words, ...) and keeps the lines that score
its ``LINE_KEEP`` or more, and the page's first ``<h1>``. A second set of
trees scores the page from its lines (kept share, link share, score spread, ...); a page above
its ``ROUTE_AT`` (about one in eight), and one that keeps too little (:func:`too_little_kept`: nothing but
its title, or under half of a long page) or is longer than the trees were fitted for, is left to
``trafilatura_fast``. Both were fitted on the tune half of the real pages (split by host hash;
``benchmarks/extract/train_line_filter.py``); the figures on the other half are in BENCHMARKS.md.

>>> body = "<p>" + "A real sentence about rivers and their restoration. " * 12 + "</p>"
>>> html = "<html><body><nav><a href='/'>Home</a> <a href='/a'>About</a></nav><article>" + body * 3 + "</article></body></html>"
>>> text, doubtful = filtered_text(html)
>>> text.startswith("A real sentence about rivers"), doubtful
(True, False)
"""

from __future__ import annotations

import functools
import html as htmllib
import json
import math
import re
from collections import Counter
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

MODEL = Path(__file__).with_name("extract_lines_model.json")
#: a page whose lines scoring ``LINE_KEEP`` hold under this share of its characters counts as "nothing
#: kept" and goes to trafilatura (an article whose body the trees dropped keeps only its ``<h1>``)
MIN_KEPT_SHARE = 0.05
#: the trees score a page's size (characters, lines) and saw few long pages (the tune pages' 90th
#: percentile is 22k characters, their last split 58k): they drop the body of long plain articles
#: (``<h1>`` + 100 ``<p>``, 35k: 12 % kept). A page of more than ``LONG_CHARS`` that keeps under half
#: of them, and every page of more than ``TOO_LONG_CHARS``, goes to trafilatura (the router sends every
#: real page of the first kind there anyway; the second are 1 in 50)
LONG_CHARS, TOO_LONG_CHARS = 20_000, 40_000


def too_little_kept(total: int, kept: int) -> bool:
    """Whether a page of ``total`` characters whose kept lines hold ``kept`` goes to trafilatura whatever the router says.

    >>> too_little_kept(10_000, 400), too_little_kept(30_000, 12_000), too_little_kept(30_000, 20_000), too_little_kept(50_000, 50_000)
    (True, True, False, True)
    """
    return kept < MIN_KEPT_SHARE * total or (total > LONG_CHARS and kept < total / 2) or total > TOO_LONG_CHARS


class Line(NamedTuple):
    """One rendered line: its text, how many of its characters are link text, its block tag
    (``p``, ``h1``…``h6``, ``li``, ``pre`` or ``""``), list depth, and whether it starts a paragraph."""

    text: str
    link_chars: int
    tag: str
    depth: int
    starts_block: bool


_TOKEN = re.compile(r"<(/?)(a|p|h[1-6]|li|ul|ol|pre|br)\b[^>]*>|([^<]+|<)")
_SPACES = re.compile(r"[ \t\r\f\v]+")


def minimal_html(html: str | Any) -> str:
    """Resiliparse's main content as minimal HTML (headings, paragraphs, lists, links, ``<pre>``) of
    ``html``: the page, or Resiliparse's ``HTMLTree`` of it."""
    from resiliparse.extract.html2text import extract_plain_text
    from resiliparse.parse.html import HTMLTree

    tree = HTMLTree.parse(html) if isinstance(html, str) else html
    return extract_plain_text(tree, preserve_formatting="minimal_html", main_content=True,
                              list_bullets=True, links=True, alt_texts=False, form_fields=False, noscript=False)


def page_lines(markup: str) -> list[Line]:
    """The lines of a :func:`minimal_html` rendering, tags read off and entities decoded.

    >>> [(x.text, x.link_chars, x.tag) for x in page_lines('<h2>A &amp; B</h2>\\n\\n<p>See <a href="/x">this</a>.<br>\\nNext</p>')]
    [('A & B', 0, 'h2'), ('See this.', 4, 'p'), ('Next', 0, 'p')]
    """
    out: list[Line] = []
    parts: list[str] = []
    link_chars, in_link, in_pre, tag, starts = 0, False, False, "", True
    lists: list[int] = []

    def flush() -> None:
        nonlocal parts, link_chars, starts
        if parts:
            text = "".join(parts) if in_pre else _SPACES.sub(" ", "".join(parts)).strip()
            if text.strip():
                out.append(Line(text, link_chars, tag, len(lists), starts))
                starts = False
        parts, link_chars = [], 0

    for m in _TOKEN.finditer(markup):
        close, name, text = m.groups()
        if name == "a":
            in_link = not close
        elif name == "br":
            flush()
        elif name:
            flush()
            starts = True
            if name in ("ul", "ol"):
                if close and lists:
                    lists.pop()
                elif not close:
                    lists.append(0)
            else:
                in_pre = name == "pre" and not close
                tag = "" if close else name
        else:
            for j, piece in enumerate(htmllib.unescape(text).split("\n")):
                if j:
                    if not parts and not piece.strip() and not in_pre:
                        starts = True
                    flush()
                if piece.strip() or (in_pre and piece):
                    parts.append(piece)
                    if in_link:
                        link_chars += len(piece.strip())
    flush()
    return out


_BOILER = re.compile(r"cookie|copyright|©|all rights reserved|privacy|terms of|subscribe|sign up|sign in|log ?in|newsletter|"
                     r"share|follow us|related|you may also|you might also|read more|learn more|click here|contact us|skip to|"
                     r"menu|advertis|sponsored|comments?\b|reply|posted (by|on|in)|tags?:|categor|next|previous|back to|"
                     r"loading|free trial|get started|book a|buy now|add to cart|download|register|join|tweet|facebook|"
                     r"twitter|linkedin|instagram|pinterest|whatsapp|email", re.I)
_END = re.compile(r"[.!?。！？…:;\"”')\]]$")
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")
_HEADINGS = ("h2", "h3", "h4", "h5", "h6")


def line_features(lines: list[Line]) -> np.ndarray:
    """One row of 30 numbers per line (the order ``LINE_TREES`` of ``extract_lines_model.json`` was fitted on)."""
    n = len(lines)
    lens = [len(x.text) for x in lines]
    total = sum(lens) or 1
    links = [min(1.0, x.link_chars / max(1, len(x.text))) for x in lines]
    loglen = [math.log1p(v) for v in lens]
    page_link = sum(x.link_chars for x in lines) / total
    seen = Counter(x.text for x in lines)
    rows, before = [], 0
    for i, x in enumerate(lines):
        t, size = x.text, lens[i]
        words = t.split()
        lo, hi = max(0, i - 2), min(n, i + 3)
        letters = sum(map(str.isalpha, t)) or 1
        rows.append([loglen[i], links[i], math.log1p(len(words)), bool(_END.search(t.rstrip())),
                     x.tag == "h1", x.tag in _HEADINGS, x.tag == "p", x.tag == "li" or x.depth > 0, x.tag == "", x.tag == "pre",
                     min(x.depth, 3), i / n, before / total, size < 80 and bool(_BOILER.search(t)),
                     sum(map(str.isdigit, t)) / size, sum(map(str.isupper, t)) / letters,
                     sum(w[:1].isupper() for w in words) / max(1, len(words)),
                     sum(links[lo:hi]) / (hi - lo), sum(loglen[lo:hi]) / (hi - lo),
                     loglen[i - 1] if i else 0.0, loglen[i + 1] if i + 1 < n else 0.0,
                     links[i - 1] if i else 0.0, links[i + 1] if i + 1 < n else 0.0,
                     seen[t] > 1, math.log1p(total), math.log1p(n), page_link, len(_CJK.findall(t)) / size,
                     t.count(",") + t.count("，"), sum(v < 40 for v in lens[lo:hi]) / (hi - lo)])
        before += size
    return np.asarray(rows, dtype=np.float64).reshape(n, 30)


def page_features(lines: list[Line], scores: np.ndarray, html_chars: int, keep_at: float | None = None) -> np.ndarray:
    """12 numbers about the page and its line scores (the order ``ROUTE_TREES`` was fitted on)."""
    lens = np.array([len(x.text) for x in lines], dtype=np.float64)
    links = np.array([x.link_chars for x in lines], dtype=np.float64)
    kept = scores >= (model()["LINE_KEEP"] if keep_at is None else keep_at)
    total, kept_chars = lens.sum(), lens[kept].sum()
    return np.array([math.log1p(total), math.log1p(kept_chars), kept_chars / max(total, 1), kept.mean(),
                     math.log1p(len(lines)), scores.mean(), ((scores > 0.1) & (scores < 0.6)).mean(),
                     links.sum() / max(total, 1), links[kept].sum() / max(kept_chars, 1),
                     (lens[kept] < 40).mean() if kept.any() else 1.0, float(np.median(lens)), math.log1p(html_chars)])


class Forest(NamedTuple):
    """Gradient-boosted trees as flat arrays over all their nodes (a leaf points to itself), walked all at once."""

    feature: np.ndarray
    threshold: np.ndarray
    left: np.ndarray
    right: np.ndarray
    value: np.ndarray
    roots: np.ndarray
    depth: int
    baseline: float

    @classmethod
    def of(cls, trees: dict[str, Any]) -> Forest:
        """From the padded trees × nodes lists ``train_line_filter.py`` writes into ``extract_lines_model.json``."""
        feature, threshold, left, right, value = (np.asarray(trees[k]) for k in ("feature", "threshold", "left", "right", "value"))
        offset = (np.arange(feature.shape[0]) * feature.shape[1])[:, None]
        return cls(feature.ravel(), threshold.ravel(), (left + offset).ravel(), (right + offset).ravel(), value.ravel(),
                   offset.ravel(), int(trees["depth"]), float(trees["baseline"]))


@functools.lru_cache(maxsize=1)
def model() -> dict[str, Any]:
    """The shipped fit (``extract_lines_model.json``: thresholds and both forests), read once per process."""
    return json.loads(MODEL.read_text(encoding="utf-8"))


@functools.lru_cache(maxsize=2)
def shipped(name: str) -> Forest:
    """``LINE_TREES`` or ``ROUTE_TREES`` of the shipped fit, converted once per process."""
    return Forest.of(model()[name])


def tree_scores(trees: Forest, x: np.ndarray) -> np.ndarray:
    """Probability of the positive class for each row of ``x``."""
    flat = x.ravel()
    row = (np.arange(len(x)) * x.shape[1])[:, None]
    node = np.broadcast_to(trees.roots, (len(x), len(trees.roots)))
    for _ in range(trees.depth):
        go_left = flat[row + trees.feature[node]] <= trees.threshold[node]
        node = np.where(go_left, trees.left[node], trees.right[node])
    raw = trees.baseline + trees.value[node].sum(axis=1)
    return 1.0 / (1.0 + np.exp(-raw))


def render(lines: list[Line]) -> str:
    """Lines back to text: a blank line between blocks, ``- `` before list items."""
    out = []
    for x in lines:
        text = f"- {x.text}" if x.tag == "li" and x.starts_block else x.text
        out.append(("\n\n" if x.starts_block and out else "\n" if out else "") + text)
    return "".join(out)


def filtered_text(html: str) -> tuple[str, bool]:
    """(kept lines of Resiliparse's main content, whether the page should go to trafilatura instead)."""
    return filtered_page(html)[:2]


def filtered_page(html: str) -> tuple[str, bool, Any]:
    """:func:`filtered_text` and Resiliparse's ``HTMLTree`` of the page (None for a blank page), for
    what else is read from the same parse (:func:`curation.quality.page_code.page_code_tags`)."""
    from resiliparse.parse.html import HTMLTree

    tree = HTMLTree.parse(html) if html.strip() else None
    lines = page_lines(minimal_html(tree)) if tree is not None else []
    if not lines:
        return "", True, tree
    scores = tree_scores(shipped("LINE_TREES"), line_features(lines))
    route = tree_scores(shipped("ROUTE_TREES"), page_features(lines, scores, len(html))[None, :])[0]
    keep_at = model()["LINE_KEEP"]
    lens = np.array([len(x.text) for x in lines])
    total, body = int(lens.sum()), int(lens[scores >= keep_at].sum())
    doubtful = route >= model()["ROUTE_AT"] or too_little_kept(total, body)
    return render(kept_lines(lines, scores, keep_at)), bool(doubtful), tree


def kept_lines(lines: list[Line], scores: np.ndarray, keep_at: float) -> list[Line]:
    """The lines scoring ``keep_at`` or more, and the page's first ``<h1>`` whatever its score: the
    title a document reads best with (the snippet F1 of either half is the same with or without it)."""
    title = next((i for i, x in enumerate(lines) if x.tag == "h1"), -1)
    return [x for i, (x, s) in enumerate(zip(lines, scores, strict=True)) if s >= keep_at or i == title]
