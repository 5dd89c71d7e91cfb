"""The bilingual corpus and the teacher's scores for the CPU edu scorer (``edu_fast``).

Rows (``doc_id, text, lang, kind, group, split``), read from ``../shared/data`` (never copied):

- English: the reference set of :mod:`reference_data` (OpenStax, Stacks, arXiv, web pages) with
  its grouped 70/30 split — the split the default was trained on, so its held-out part is unseen
  by the teacher and by the student;
- ``textbook_page``: every OpenStax module as a crawled page (title + text cut at 20,000
  characters, as ``benchmarks/mixture_recipe`` builds them), split like its module;
- Chinese: the 47 technical-note sections (``zh_note``) and windows of 600–1,200 characters of
  them (``zh_note_window``), grouped by note file (a file is wholly train or held out), and a seeded
  sample of real short reviews (``zh_review``), grouped by review.

The teacher is the default settings' scorer (``classifiers/models/edu_default``: transformer
head + hashed n-grams). Its vectors (all-MiniLM-L6-v2, 256 tokens, digits masked) are embedded
once and cached under ``--cache`` (``/tmp/edu-teacher`` by default) by content hash.

    python benchmarks/edu_score/distil_data.py     # embeds what is not cached (~17 docs/s here), prints counts
"""

from __future__ import annotations

import argparse
import hashlib
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import reference_data  # noqa: E402

CACHE = Path("/tmp/edu-teacher")
ZH_REVIEWS = 2500
HELDOUT = 0.3


def data_dir() -> Path:
    """``../shared/data`` beside the checkout (a worktree under /work/wt: two levels up)."""
    for p in (ROOT.parent / "shared" / "data", ROOT.parents[1] / "shared" / "data"):
        if p.is_dir():
            return p
    raise SystemExit("../shared/data is absent: this benchmark needs the real corpora")


def _unit(key: str) -> float:
    return int.from_bytes(hashlib.blake2b(key.encode(), digest_size=8).digest(), "big") / 2**64


def _split(groups: pd.Series, salt: str) -> pd.Series:
    return groups.map(lambda g: "heldout" if _unit(f"{salt}:{g}") < HELDOUT else "train")


def cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: text.rfind("\n\n", 0, limit) if "\n\n" in text[:limit] else limit]


def note_windows(text: str, lo: int = 600, hi: int = 1200) -> list[str]:
    """Consecutive paragraphs packed into windows of ``lo``–``hi`` characters."""
    out, cur = [], ""
    for para in (p.strip() for p in text.split("\n\n")):
        if not para:
            continue
        cur = f"{cur}\n\n{para}" if cur else para
        if len(cur) >= lo:
            out.append(cur[:hi])
            cur = ""
    if len(cur) >= lo // 2:
        out.append(cur[:hi])
    return out


def load_corpus() -> pd.DataFrame:
    data = data_dir()
    ref = reference_data.load_reference(data)
    ref["split"] = reference_data.split_by_group(ref)
    en = ref[["doc_id", "text", "kind", "group", "split"]].assign(lang="en")
    split_of = dict(zip(ref["group"], ref["split"], strict=False))
    books = pd.read_json(data / "math" / "openstax_modules.jsonl.gz", lines=True)
    books = books[books["text"].str.len() > 500]
    pages = pd.DataFrame({
        "doc_id": "page:" + books["module_id"].astype(str),
        "text": [f"{t}\n\n{cut(x, 20_000)}" for t, x in zip(books["title"], books["text"], strict=True)],
        "kind": "textbook_page", "group": "openstax:" + books["module_id"].astype(str), "lang": "en",
    }).drop_duplicates("text")
    # a module merged into another's group by reference_data keeps that group's side; others hash like it
    pages["split"] = [split_of.get(g) or reference_data.split_by_group(pd.DataFrame({"group": [g]})).iloc[0] for g in pages["group"]]
    notes = pd.read_json(data / "zh" / "zh_tech_notes.jsonl.gz", lines=True)
    rows = []
    for r in notes.itertuples(index=False):
        rows.append({"doc_id": f"zhn:{r.id}", "text": r.text, "kind": "zh_note", "group": f"zhn:{r.origin}"})
        for j, w in enumerate(note_windows(r.text)):
            rows.append({"doc_id": f"zhw:{r.id}:{j}", "text": w, "kind": "zh_note_window", "group": f"zhn:{r.origin}"})
    zh = pd.DataFrame(rows)
    rev = pd.read_json(data / "zh" / "zh_reviews.jsonl.gz", lines=True)
    rev = rev[rev["text"].astype(str).str.strip().str.len() >= 10].sample(n=ZH_REVIEWS, random_state=11)
    zh = pd.concat([zh, pd.DataFrame({"doc_id": "zhr:" + rev["id"].astype(str), "text": rev["text"].astype(str),
                                      "kind": "zh_review", "group": "zhr:" + rev["id"].astype(str)})], ignore_index=True)
    zh["lang"] = "zh"
    zh["split"] = _split(zh["group"], "edu-fast-zh-v1")
    # ten note files only: the three whose hash is lowest are held out (a hash share could leave one)
    files = sorted(zh.loc[zh["kind"] != "zh_review", "group"].unique(), key=lambda g: _unit(f"edu-fast-zh-v1:{g}"))
    zh.loc[zh["kind"] != "zh_review", "split"] = zh["group"].isin(files[:3]).map({True: "heldout", False: "train"})
    df = pd.concat([en, pages, zh], ignore_index=True)
    return df.drop_duplicates("doc_id").reset_index(drop=True)


def teacher_vectors(df: pd.DataFrame, cache: Path = CACHE) -> np.ndarray:
    """The default embedder's vectors of every row (embedded once, cached by doc_id + text hash)."""
    from classifiers.edu import get_edu_scorer

    keys = [hashlib.blake2b((d + "\0" + t).encode(), digest_size=10).hexdigest() for d, t in zip(df["doc_id"], df["text"], strict=True)]
    cache.mkdir(parents=True, exist_ok=True)
    store: dict[str, np.ndarray] = {}
    for f in sorted(cache.glob("vectors-*.npz")):
        with np.load(f) as z:
            store.update(zip(z["keys"].tolist(), z["vectors"], strict=True))
    todo = [i for i, k in enumerate(keys) if k not in store]
    if todo:
        scorer = get_edu_scorer(device="cpu")
        chunk = 500
        for a in range(0, len(todo), chunk):
            idx = todo[a : a + chunk]
            started = time.time()
            v = scorer._vector_member().embed(df["text"].iloc[idx].tolist()).astype(np.float32)
            name = hashlib.blake2b("".join(keys[i] for i in idx).encode(), digest_size=8).hexdigest()
            np.savez(cache / f"vectors-{name}.npz", keys=np.asarray([keys[i] for i in idx]), vectors=v)
            store.update(zip((keys[i] for i in idx), v, strict=True))
            print(f"embedded {a + len(idx)}/{len(todo)} ({len(idx) / (time.time() - started):.1f} docs/s)", flush=True)
    return np.stack([store[k] for k in keys])


def teacher_scores(df: pd.DataFrame, cache: Path = CACHE) -> np.ndarray:
    """The default settings' edu score of every row (transformer vectors + hashed n-grams)."""
    return teacher_members(df, cache)["teacher"]


def teacher_members(df: pd.DataFrame, cache: Path = CACHE) -> dict[str, np.ndarray]:
    """The default's score (``teacher``) and its two members' (``head``: transformer vectors, ``hashed``)."""
    from classifiers.edu import get_edu_scorer
    from classifiers.scorer import Batch

    batch = Batch(df["text"].tolist(), vectors=teacher_vectors(df, cache))
    scorer = get_edu_scorer(device="cpu")
    (head, _), (hashed, _) = scorer.members
    return {"teacher": np.asarray(scorer.score(batch), dtype=np.float64),
            "head": np.asarray(head.score(batch), dtype=np.float64), "hashed": np.asarray(hashed.score(batch), dtype=np.float64)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cache", type=Path, default=CACHE)
    args = ap.parse_args()
    df = load_corpus()
    print(pd.crosstab(df["kind"], df["split"], margins=True))
    df["teacher"] = teacher_scores(df, args.cache)
    print(df.groupby(["kind", "split"])["teacher"].describe().round(2).to_string())


if __name__ == "__main__":
    main()
