"""Labelled reference documents for the edu default, read from ``../shared/data`` (never copied).

Each row gets a *kind*, a target on the 0–5 rubric scale (what a strong judge following the
``edu`` rubric would give that kind), a binary label (math/science educational or not) and a
*group* so that near-identical documents (template twins of one site, modules shared by several
books, re-crawled URLs) never fall on both sides of a split.

    python benchmarks/edu_score/reference_data.py   # prints the counts per kind and split

| kind | files | target | positive |
|---|---|---|---|
| textbook | math/openstax_modules (calculus, physics, chemistry, statistics, algebra) | 4.5 | yes |
| research_math | math/stacks_project_chapters | 4.0 | yes |
| math_abstract | math/arxiv_abstracts with a ``math.*`` category | 3.5 | yes |
| stem_abstract | math/arxiv_abstracts: astrophysics, neuroscience, cryptography, topology | 3.5 | yes |
| nonstem_abstract | math/arxiv_abstracts: philosophy, postmodern literature, cultural anthropology, sociolinguistics | 1.0 | no |
| commercial | web/web_docs wcxb pages of type product, service, listing, collection | 0.0 | no |
| general_web | every other web page with text (articles, forums, documentation, raw CC text) | 1.0 | no |
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from urllib.parse import urlparse

import pandas as pd

DATA = Path(__file__).resolve().parents[2] / ".." / "shared" / "data"

TARGETS = {
    "textbook": 4.5,
    "research_math": 4.0,
    "math_abstract": 3.5,
    "stem_abstract": 3.5,
    "nonstem_abstract": 1.0,
    "commercial": 0.0,
    "general_web": 1.0,
}
POSITIVE = {"textbook", "research_math", "math_abstract", "stem_abstract"}
STEM_CATEGORIES = {"astrophysics", "neuroscience", "cryptography", "topology"}
COMMERCIAL_TYPES = {"product", "service", "listing", "collection"}
#: The headline comparison: these kinds against the positives.
HEADLINE_NEGATIVES = {"commercial", "nonstem_abstract"}


def available(data: Path = DATA) -> bool:
    return (data / "math" / "openstax_modules.jsonl.gz").exists() and (data / "web" / "web_docs.parquet").exists()


def load_reference(data: Path = DATA) -> pd.DataFrame:
    """Columns: ``doc_id, text, kind, target, positive, group``."""
    frames = [_openstax(data), _stacks(data), _arxiv(data), _web(data)]
    df = pd.concat(frames, ignore_index=True)
    df = df[df["text"].str.strip().str.len() >= 50]
    # Exact copies (a module in several books, a page crawled twice) share one group.
    key = df["text"].map(lambda t: hashlib.blake2b(re.sub(r"\s+", " ", t).strip().encode(), digest_size=8).hexdigest())
    first_group = df.groupby(key)["group"].transform("first")
    df = df.assign(group=first_group).drop_duplicates(subset=["text"]).reset_index(drop=True)
    df["target"] = df["kind"].map(TARGETS).astype("float64")
    df["positive"] = df["kind"].isin(POSITIVE)
    return df


def split_by_group(df: pd.DataFrame, heldout_fraction: float = 0.3, salt: str = "edu-ref-v1") -> pd.Series:
    """``train`` / ``heldout`` per row, decided by a hash of the row's group (stable, no leaks)."""
    def bucket(group: str) -> float:
        h = hashlib.blake2b(f"{salt}:{group}".encode(), digest_size=8).digest()
        return int.from_bytes(h, "big") / 2**64

    return df["group"].map(lambda g: "heldout" if bucket(g) < heldout_fraction else "train")


def _openstax(data: Path) -> pd.DataFrame:
    df = pd.read_json(data / "math" / "openstax_modules.jsonl.gz", lines=True)
    return pd.DataFrame({
        "doc_id": "openstax:" + df["module_id"].astype(str),
        "text": df["text"].astype(str),
        "kind": "textbook",
        # Modules of one book are written by the same authors in the same template: group by module
        # (shared modules are merged by text above); books are held out as a whole in the benchmark.
        "group": "openstax:" + df["module_id"].astype(str),
        "family": df["repo"].astype(str),
    })


def _stacks(data: Path) -> pd.DataFrame:
    df = pd.read_json(data / "math" / "stacks_project_chapters.jsonl.gz", lines=True)
    return pd.DataFrame({
        "doc_id": "stacks:" + df["chapter"].astype(str),
        "text": df["text"].astype(str),
        "kind": "research_math",
        "group": "stacks:" + df["chapter"].astype(str),
        "family": "stacks",
    })


def _arxiv(data: Path) -> pd.DataFrame:
    df = pd.read_json(data / "math" / "arxiv_abstracts.jsonl.gz", lines=True)
    cats = df["categories"].astype(str)
    is_math = cats.str.contains("math.", regex=False)
    kind = pd.Series("nonstem_abstract", index=df.index)
    kind[cats.isin(STEM_CATEGORIES)] = "stem_abstract"
    kind[is_math] = "math_abstract"
    text = df["text"].astype(str).str.replace(r"\s*\n\s*", " ", regex=True).str.strip()
    return pd.DataFrame({
        "doc_id": [f"arxiv:{i}" for i in range(len(df))],
        "text": text,
        "kind": kind,
        "group": [f"arxiv:{i}" for i in range(len(df))],
        "family": "arxiv:" + cats.where(~is_math, "math"),
    })


def _web(data: Path) -> pd.DataFrame:
    df = pd.read_parquet(data / "web" / "web_docs.parquet", columns=["source", "doc_id", "url", "page_type", "text"])
    df = df[df["text"].fillna("").str.len() > 0]
    commercial = (df["source"] == "wcxb") & df["page_type"].isin(COMMERCIAL_TYPES)
    # Template twins and re-crawls live on one site: the site is the group.
    domain = df["url"].fillna("").map(lambda u: urlparse(u).netloc.lower().removeprefix("www.") or "nodomain")
    return pd.DataFrame({
        "doc_id": "web:" + df["doc_id"].astype(str),
        "text": df["text"].astype(str),
        "kind": ["commercial" if c else "general_web" for c in commercial],
        "group": "web:" + domain,
        "family": "web:" + df["source"].astype(str),
    })


if __name__ == "__main__":
    ref = load_reference()
    ref["split"] = split_by_group(ref)
    print(pd.crosstab(ref["kind"], ref["split"], margins=True))
