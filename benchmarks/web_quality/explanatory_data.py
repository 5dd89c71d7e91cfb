"""Training, tune and held-out sets of the ``explanatory`` web-quality members (DCLM / Nemotron-CC recipe).

Positives: explanatory, instruction-like and reference text — OpenStax textbook modules, arXiv
abstracts, Stacks Project chapters, project documentation (Markdown / reStructuredText files of the
code corpus), human-reviewed main content of web pages (wcxb), article bodies (scrapinghub) and
cc_net output. Negatives: random crawl pages as a crawler sees them — the whole visible text of raw
HTML pages (wcxb, scrapinghub, trafilatura, Common Crawl WARC samples), boilerplate kept. Long
documents are cut into sections of ~3,000 characters at line boundaries (the length of a web page).

Chinese (``explanatory_zh``): Chinese technical notes against Chinese short reviews.

Every positive or negative is split by group (web domain, book module, chapter, documentation file, abstract) into
``train`` (~70 %) and ``tune`` (~30 %): the tune split picks the ensemble, the judged Common Crawl
pages (``wet_judgements.csv``) stay held out. No training or tune text may come from a judged
page: :func:`judged_overlap` drops any document whose URL is a judged page's URL or that shares a
line of 60+ characters with a judged page (boilerplate lines such as copyright notices included).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable

import data
import numpy as np
import pandas as pd

SECTION_CHARS = 3000
TUNE_SHARE = 0.3
#: positives per source (sections): the mixture of the positive class
CAPS = {"openstax": 1200, "arxiv": 1000, "stacks": 400, "docs": 800, "wcxb": 10**9, "scrapinghub": 10**9, "ccnet": 10**9}


def sections(text: str, size: int = SECTION_CHARS) -> list[str]:
    """``text`` cut at line boundaries into pieces of about ``size`` characters (the last one may be short)."""
    out, cur, n = [], [], 0
    for line in text.split("\n"):
        cur.append(line)
        n += len(line) + 1
        if n >= size:
            out.append("\n".join(cur).strip())
            cur, n = [], 0
    if cur and (n > size // 4 or not out):
        out.append("\n".join(cur).strip())
    return [s for s in out if s]


def split_of(group: str) -> str:
    """``train`` or ``tune`` for a group, stable across runs and machines."""
    h = int(hashlib.sha1(group.encode()).hexdigest()[:8], 16)
    return "tune" if h / 0xFFFFFFFF < TUNE_SHARE else "train"


def _jsonl(name: str) -> pd.DataFrame:
    return pd.read_json(data.SHARED / name, lines=True)


def _frame(rows: Iterable[tuple[str, str, str, str]]) -> pd.DataFrame:
    return pd.DataFrame(list(rows), columns=["text", "kind", "group", "url"])


def positives() -> pd.DataFrame:
    """text, kind, group, url of every positive section (before caps and the overlap check)."""
    rows: list[tuple[str, str, str, str]] = []
    for r in _jsonl("math/openstax_modules.jsonl.gz").itertuples():
        rows += [(s, "openstax", f"openstax:{r.module_id}", "") for s in sections(r.text)]
    for r in _jsonl("math/arxiv_abstracts.jsonl.gz").itertuples():
        rows.append((r.text, "arxiv", f"arxiv:{r.id or r.title or r.text[:200]}", ""))
    for r in _jsonl("math/stacks_project_chapters.jsonl.gz").itertuples():
        rows += [(s, "stacks", f"stacks:{r.chapter}", "") for s in sections(r.text)]
    code = pd.read_parquet(data.SHARED / "code" / "code_files.parquet", columns=["repo", "path", "language", "text"])
    docs = code[code["language"].isin(["Markdown", "reStructuredText"]) & (code["text"].str.len() > 500)]
    for r in docs.itertuples():
        rows += [(s, "docs", f"doc:{r.repo}/{r.path}", "") for s in sections(r.text) if len(s) > 500]
    web = data.load()
    keep = web[web["source"].isin(["wcxb", "scrapinghub_aeb", "dolma_ccnet_head"]) & (web["text"].fillna("").str.len() > 200)]
    kind = {"wcxb": "wcxb", "scrapinghub_aeb": "scrapinghub", "dolma_ccnet_head": "ccnet"}
    for r in keep.itertuples():
        rows.append((r.text, kind[r.source], f"web:{data._domain(r.url or '')}", r.url or ""))
    return _frame(rows)


def negatives() -> pd.DataFrame:
    """Whole visible text of every raw HTML page (boilerplate kept)."""
    pages = data.pages()
    web = data.load()[["doc_id", "url"]]
    pages = pages.merge(web, on="doc_id", how="left")
    return _frame((r.text, f"page:{r.kind}", f"web:{r.domain}", r.url or "") for r in pages.itertuples() if len(r.text) > 100)


def judged_overlap(df: pd.DataFrame, min_line: int = 60) -> np.ndarray:
    """True where a row's URL is a judged page's URL or it shares a line of ``min_line``+ characters with one."""
    j = data.judged()
    urls = set(data.load().loc[lambda d: d["doc_id"].isin(j["doc_id"]), "url"].dropna())
    lines = {ln.strip() for t in j["text"] for ln in t.split("\n") if len(ln.strip()) >= min_line}
    return np.array([(u in urls and u != "") or any(ln.strip() in lines for ln in t.split("\n") if len(ln.strip()) >= min_line)
                     for t, u in zip(df["text"], df["url"], strict=True)], dtype=bool)


def english_sets(seed: int = 0) -> tuple[pd.DataFrame, dict[str, int]]:
    """All rows with ``label`` (1/0) and ``split`` (train/tune), the overlap check applied; and counts."""
    pos, neg = positives(), negatives()
    rng = np.random.default_rng(seed)
    parts = []
    for kind, g in pos.groupby("kind", sort=True):
        cap = CAPS[kind]
        parts.append(g.iloc[np.sort(rng.choice(len(g), size=cap, replace=False))] if len(g) > cap else g)
    pos = pd.concat(parts, ignore_index=True).assign(label=1)
    both = pd.concat([pos, neg.assign(label=0)], ignore_index=True)
    both = both.drop_duplicates("text").reset_index(drop=True)
    over = judged_overlap(both)
    counts = {"dropped_overlapping_judged_pages": int(over.sum())}
    both = both[~over].reset_index(drop=True)
    both["split"] = [split_of(g) for g in both["group"]]
    for (kind, split), g in both.groupby(["kind", "split"]):
        counts[f"{kind}/{split}"] = len(g)
    return both, counts


def _han(text: str) -> int:
    return len(re.findall(r"[\u4e00-\u9fff]", text))


def chinese_sets(n_reviews: int = 3000, seed: int = 0) -> tuple[pd.DataFrame, dict[str, int]]:
    """Chinese tech-note sections (positives) and short reviews (negatives), split train/tune by
    note and by review; the reviews are a random sample of ``n_reviews``."""
    notes = _jsonl("zh/zh_tech_notes.jsonl.gz")
    reviews = _jsonl("zh/zh_reviews.jsonl.gz")
    reviews = reviews[reviews["text"].fillna("").map(_han) >= 5]
    reviews = reviews.sample(n=min(n_reviews, len(reviews)), random_state=seed)
    df = pd.concat([
        _frame((t, "zh_notes", f"zh_note:{i}", "") for i, t in zip(notes["id"], notes["text"], strict=True)).assign(label=1),
        _frame((t, "zh_reviews", f"zh_review:{i}", "") for i, t in enumerate(reviews["text"])).assign(label=0),
    ], ignore_index=True)
    df["split"] = [split_of(g) for g in df["group"]]
    counts = {f"{k}/{s}": len(g) for (k, s), g in df.groupby(["kind", "split"])}
    return df, counts
