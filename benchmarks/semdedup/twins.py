"""Template-twin check on real web pages: the pool, the constructed twins and the metrics.

The pool is every page of ``../shared/data/web/web_docs.parquet`` with at least 300 characters of
text, near-deduplicated with MinHash at 0.8 first (semdedup runs after minhash_dedup), split in
two halves by a hash of ``doc_id``: ``tune`` (choose defaults) and ``report`` (held out).
A twin is a real page with a few names and every number changed, as template-generated pages
differ (``make_twin``). Real template twins also exist: shop/product/listing pages of one site.
"""

from __future__ import annotations

import hashlib
import random
import re
from pathlib import Path
from urllib.parse import urlparse

import numpy as np
import pandas as pd

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / ".." / "shared" / "data" / "web" / "web_docs.parquet"
WORK = REPO / "benchmarks" / "_work" / "semdedup"
TEMPLATE_TYPES = ("product", "listing", "collection")
NAME_BANK = [
    "Amara", "Okafor", "Lindqvist", "Moreau", "Petrov", "Haddad", "Nakamura", "Brennan", "Kowalski",
    "Mensah", "Fischer", "Rivermouth", "Eastbridge", "Northfield", "Lakeview", "Ashford", "Millbrook",
    "Stonehaven", "Westmere", "Kingsport", "Elmstead", "Harborview", "Oakridge", "Fairhaven", "Redcliff",
    "Silverton", "Marlow", "Castillo", "Yilmaz", "Johansson", "Chowdhury", "Adeyemi", "Laurent",
]
_NAME = re.compile(r"(?<![.!?:\n]\s)(?<!^)\b[A-Z][a-z]{2,}\b")
_NUMBER = re.compile(r"\d+")


def split_of(doc_id: str) -> str:
    return "tune" if int(hashlib.sha1(doc_id.encode()).hexdigest(), 16) % 2 == 0 else "report"


def load_pool(min_chars: int = 300, minhash_threshold: float = 0.8) -> pd.DataFrame:
    """Real pages (doc_id, text, url, host, page_type, split), MinHash-deduplicated at 0.8."""
    df = pd.read_parquet(DATA, columns=["doc_id", "source", "url", "page_type", "text"])
    df = df[df["text"].fillna("").str.len() >= min_chars].reset_index(drop=True)
    df["host"] = df["url"].fillna("").map(lambda u: urlparse(u).netloc)
    sigs = minhash_signatures(df["text"].tolist())
    keep = minhash_keep(sigs, minhash_threshold)
    df = df[keep].reset_index(drop=True)
    df["split"] = df["doc_id"].map(split_of)
    return df


def shingles(text: str, n: int = 5) -> set[str]:
    words = text.lower().split()
    return {" ".join(words[i : i + n]) for i in range(max(1, len(words) - n + 1))}


def minhash_signatures(texts: list[str], num_perm: int = 128) -> list:
    from datasketch import MinHash

    out = []
    for t in texts:
        m = MinHash(num_perm=num_perm, seed=1)
        m.update_batch([s.encode() for s in shingles(t)])
        out.append(m)
    return out


def minhash_keep(sigs: list, threshold: float) -> np.ndarray:
    """First-come keep mask under MinHash LSH at ``threshold`` (what minhash_dedup would keep)."""
    from datasketch import MinHashLSH

    lsh = MinHashLSH(threshold=threshold, num_perm=len(sigs[0].hashvalues) if sigs else 128)
    keep = np.ones(len(sigs), dtype=bool)
    for i, m in enumerate(sigs):
        if lsh.query(m):
            keep[i] = False
        else:
            lsh.insert(str(i), m)
    return keep


def make_twin(text: str, rng: random.Random, n_names: int = 3, window: int = 2000) -> str:
    """``text`` with every number replaced (same digit count, different value) and ``n_names``
    capitalised words (seen in the first ``window`` characters) replaced everywhere by other names."""
    def renumber(m: re.Match) -> str:
        old = m.group(0)
        while True:
            new = "".join(rng.choice("0123456789") for _ in old)
            if len(old) > 1 and new[0] == "0" and old[0] != "0":
                continue
            if new != old:
                return new

    out = _NUMBER.sub(renumber, text)
    candidates = sorted({m.group(0) for m in _NAME.finditer(text[:window])})
    for name in rng.sample(candidates, min(n_names, len(candidates))):
        other = rng.choice([b for b in NAME_BANK if b != name])
        out = re.sub(rf"\b{re.escape(name)}\b", other, out)
    return out


def with_twins(pool: pd.DataFrame, split: str, n_twins: int, seed: int = 7) -> pd.DataFrame:
    """The ``split`` half of the pool plus ``n_twins`` twins (``twin_of`` = original doc_id)."""
    part = pool[pool["split"] == split].reset_index(drop=True).assign(twin_of=None)
    rng = random.Random(f"{seed}:{split}")
    chosen = rng.sample(range(len(part)), min(n_twins, len(part)))
    twins = part.iloc[chosen].copy()
    twins["twin_of"] = twins["doc_id"]
    twins["text"] = [make_twin(t, rng) for t in twins["text"]]
    twins["doc_id"] = twins["doc_id"] + "~twin"
    return pd.concat([part, twins], ignore_index=True)


def twin_metrics(frame: pd.DataFrame, vectors: np.ndarray, thresholds: list[float]) -> pd.DataFrame:
    """Pairwise metrics per cosine threshold ``t`` (a pair is grouped when cos > t):
    ``twin_recall`` = grouped twin pairs / twin pairs; ``stranger_rate`` = documents grouped with any
    document that is not their twin / documents; ``stranger_rate_offsite`` the same ignoring pages of
    the same host and template page type (real template twins)."""
    sims = vectors @ vectors.T
    np.fill_diagonal(sims, -1.0)
    ids = frame["doc_id"].to_numpy()
    origin = frame["twin_of"].fillna(frame["doc_id"]).to_numpy()
    same_doc = origin[:, None] == origin[None, :]
    templ = frame["page_type"].isin(TEMPLATE_TYPES).to_numpy() & (frame["host"] != "").to_numpy()
    host = frame["host"].to_numpy()
    same_site = templ[:, None] & templ[None, :] & (host[:, None] == host[None, :])
    pos = pd.Index(ids)
    twins = frame[frame["twin_of"].notna()]
    ti, oi = pos.get_indexer(twins["doc_id"]), pos.get_indexer(twins["twin_of"])
    rows = []
    for t in thresholds:
        hit = sims > t
        rows.append({
            "threshold": t,
            "eps": round(1 - t, 4),
            "twin_recall": float((sims[ti, oi] > t).mean()),
            "stranger_rate": float((hit & ~same_doc).any(axis=1).mean()),
            "stranger_rate_offsite": float((hit & ~same_doc & ~same_site).any(axis=1).mean()),
        })
    return pd.DataFrame(rows)


def embed_cached(texts: list[str], key: str, embed) -> np.ndarray:
    """Embed with a cache on disk keyed by ``key`` and each text's hash (reruns cost nothing)."""
    WORK.mkdir(parents=True, exist_ok=True)
    path = WORK / f"emb-{key}.npz"
    cache: dict[str, np.ndarray] = {}
    if path.exists():
        z = np.load(path, allow_pickle=False)
        cache = dict(zip(z["keys"].tolist(), z["vecs"], strict=True))
    hashes = [hashlib.sha1(t.encode()).hexdigest() for t in texts]
    todo = sorted({h for h in hashes if h not in cache})
    if todo:
        by_hash = dict(zip(hashes, texts, strict=True))
        vecs = embed([by_hash[h] for h in todo])
        cache.update(zip(todo, vecs, strict=True))
        np.savez(path, keys=np.array(list(cache)), vecs=np.stack(list(cache.values())))
    return np.stack([cache[h] for h in hashes]).astype(np.float32)
