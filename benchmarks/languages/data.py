"""Real Chinese and English texts from ../shared/data for the language benchmarks (never copied).

- ``zh_notes``: the 47 Chinese technical-note sections (Markdown with code blocks);
- ``zh_reviews(n)``: a seeded sample of the ~70k real Chinese short reviews;
- ``en_pages``: reference main content of the WCXB pages (English-language sites, a few pages
  in other languages) and Common Crawl WET records (multilingual; ``lang_hint`` is None);
- ``en_clean(n)``: arXiv abstracts and OpenStax modules, English without exception.
"""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd

#: ``../shared/data`` beside the checkout; ``CURATION_SHARED_DATA`` points elsewhere (a worktree).
DATA = Path(os.environ.get("CURATION_SHARED_DATA") or Path(__file__).resolve().parents[2].parent / "shared" / "data")


def require() -> Path:
    if not DATA.is_dir():
        raise SystemExit(f"{DATA} is absent: these benchmarks need the real corpora in ../shared/data")
    return DATA


def zh_notes() -> pd.DataFrame:
    df = pd.read_json(require() / "zh" / "zh_tech_notes.jsonl.gz", lines=True)
    return pd.DataFrame({"doc_id": "zhn-" + df["id"].astype(str), "text": df["text"], "truth": "zh"})


def zh_reviews(n: int = 3000, seed: int = 0) -> pd.DataFrame:
    df = pd.read_json(require() / "zh" / "zh_reviews.jsonl.gz", lines=True)
    df = df[df["text"].astype(str).str.strip().str.len() > 0].sample(n=n, random_state=seed)
    return pd.DataFrame({"doc_id": "zhr-" + df["id"].astype(str), "text": df["text"].astype(str), "truth": "zh"})


def en_pages() -> pd.DataFrame:
    """WCXB reference texts (labelled English by the site list; a few are not)."""
    w = pd.read_parquet(require() / "web" / "web_docs.parquet", columns=["doc_id", "source", "text"])
    w = w[(w["source"] == "wcxb") & (w["text"].str.len() > 200)]
    return pd.DataFrame({"doc_id": "wcxb-" + w["doc_id"].astype(str), "text": w["text"], "truth": "en"})


def en_clean(n: int = 1000, seed: int = 0) -> pd.DataFrame:
    a = pd.read_json(require() / "math" / "arxiv_abstracts.jsonl.gz", lines=True)
    o = pd.read_json(require() / "math" / "openstax_modules.jsonl.gz", lines=True)
    a = a.sample(n=min(n, len(a)), random_state=seed)
    texts = pd.concat([a["text"], o["text"]], ignore_index=True).astype(str)
    return pd.DataFrame({"doc_id": [f"en-{i}" for i in range(len(texts))], "text": texts, "truth": "en"})
