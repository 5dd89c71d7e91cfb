"""Real web data for the web-quality benchmarks: reference text, raw page text, judged CC pages.

Everything is read from ``../shared/data/web/web_docs.parquet`` (never copied into the repo):

- ``reference``: human-reviewed main content (wcxb ``text``), article bodies (scrapinghub) and
  cc_net output — the "high quality" side of a reference-vs-random classifier;
- ``pages``: the whole visible text of the raw HTML of the same wcxb / scrapinghub pages and of
  the trafilatura and WARC pages — navigation, footers and cookie banners included, like a WET
  record — the "random web" side;
- ``wet``: raw Common Crawl WET records (dolma), de-duplicated by text;
- ``judged``: those WET records with the 1–5 quality judgement in ``wet_judgements.csv``
  (an LLM's judgement, reading each page's first ~550 and a middle ~250 characters,
  made before any scorer was run on them; see RESULTS.md).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[2]
SHARED = Path(os.environ.get("CURATION_SHARED_DATA") or ROOT.parent / "shared" / "data")
DATA = SHARED / "web" / "web_docs.parquet"
JUDGEMENTS = Path(__file__).with_name("wet_judgements.csv")
WORK = ROOT / "benchmarks" / "_work" / "web_quality"

_BLOCK = {
    "p", "div", "br", "li", "ul", "ol", "h1", "h2", "h3", "h4", "h5", "h6", "tr", "td", "th", "table",
    "section", "article", "header", "footer", "nav", "aside", "form", "blockquote", "pre", "dd", "dt",
    "option", "main", "figure", "figcaption", "label", "button", "title",
}
_DROP = ("script", "style", "noscript", "template", "svg", "head")


def available() -> bool:
    return DATA.exists()


def load() -> pd.DataFrame:
    if not available():
        raise SystemExit(f"{DATA} is missing: the web-quality benchmarks need ../shared/data")
    return pd.read_parquet(DATA)


def html_text(html: str) -> str:
    """All visible text of a page, one line per block element (roughly what a WET record holds)."""
    import lxml.etree
    import lxml.html

    if not html or not html.strip():
        return ""
    try:
        tree = lxml.html.fromstring(html)
    except (lxml.etree.ParserError, ValueError):
        return ""
    lxml.etree.strip_elements(tree, *_DROP, lxml.etree.Comment, with_tail=False)
    parts: list[str] = []

    def walk(el: lxml.html.HtmlElement) -> None:
        tag = el.tag if isinstance(el.tag, str) else ""
        if tag in _BLOCK:
            parts.append("\n")
        if el.text:
            parts.append(el.text)
        for child in el:
            walk(child)
            if child.tail:
                parts.append(child.tail)
        if tag in _BLOCK:
            parts.append("\n")

    walk(tree)
    lines = [re.sub(r"[ \t\xa0]+", " ", ln).strip() for ln in "".join(parts).split("\n")]
    return "\n".join(ln for ln in lines if ln)


def reference() -> pd.DataFrame:
    """Reference text: doc_id, text, kind (wcxb | scrapinghub | ccnet), page_type, domain."""
    df = load()
    keep = df[df["source"].isin(["wcxb", "scrapinghub_aeb", "dolma_ccnet_head"]) & (df["text"].str.len() > 0)]
    out = pd.DataFrame(
        {
            "doc_id": keep["doc_id"].to_numpy(),
            "text": keep["text"].to_numpy(),
            "kind": keep["source"].map({"wcxb": "wcxb", "scrapinghub_aeb": "scrapinghub", "dolma_ccnet_head": "ccnet"}).to_numpy(),
            "page_type": keep["page_type"].fillna("").to_numpy(),
            "domain": [_domain(u) for u in keep["url"].fillna("")],
        }
    )
    return out.reset_index(drop=True)


def pages() -> pd.DataFrame:
    """Whole-page text from the raw HTML (cached under benchmarks/_work): doc_id, text, kind, page_type, domain."""
    cache = WORK / "pages.parquet"
    if cache.exists():
        return pd.read_parquet(cache)
    df = load()
    keep = df[df["html"].fillna("").str.len() > 0]
    out = pd.DataFrame(
        {
            "doc_id": keep["doc_id"].to_numpy(),
            "text": [html_text(h) for h in keep["html"]],
            "kind": keep["source"].to_numpy(),
            "page_type": keep["page_type"].fillna("").to_numpy(),
            "domain": [_domain(u) for u in keep["url"].fillna("")],
        }
    )
    out = out[out["text"].str.len() > 0].reset_index(drop=True)
    cache.parent.mkdir(parents=True, exist_ok=True)
    out.to_parquet(cache)
    return out


def wet() -> pd.DataFrame:
    """Raw Common Crawl WET records, one per distinct text: doc_id, text, url."""
    df = load()
    w = df[df["source"] == "dolma_cc_raw_wet"].drop_duplicates("text")
    return w[["doc_id", "text", "url"]].reset_index(drop=True)


def judged() -> pd.DataFrame:
    """WET records with their 1–5 judgement (``rating``)."""
    j = pd.read_csv(JUDGEMENTS)
    return wet().merge(j, on="doc_id", how="inner")


def _domain(url: str) -> str:
    m = re.match(r"^(?:https?://)?([^/]+)", url or "")
    host = m.group(1).lower() if m else ""
    return host[4:] if host.startswith("www.") else host
