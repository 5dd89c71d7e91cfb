"""Language-aware MinHash: Chinese near-copies found with ``script:5`` shingles against ``word:5``,
and shingle + signature throughput on Chinese against English.

    CURATION_SHARED_DATA=/path/to/shared/data python benchmarks/languages/bench_minhash.py [--copies 3]

Held-out mix: the 47 real Chinese tutorial sections, ``--copies`` near-copies of each (2 % of the
Han characters replaced, seeded), 2,000 real Chinese short reviews, 400 English WCXB pages and
``--copies`` near-copies of 100 of them (2 % of the words replaced). The minhash_dedup stage runs
on it (recipe defaults, synchronous) once per shingle spec; a copy counts as found when it or its
original is removed with the other as ``duplicate_of``'s cluster. "other removed" counts removed
documents that are neither a planted copy nor its original (exact review duplicates among them).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import data  # noqa: E402
import plant  # noqa: E402

from curation.dedup.minhash import MinHashParams, signatures  # noqa: E402
from curation.dedup.shingles import ShingleSpec  # noqa: E402
from curation.schema import DOC_COLUMNS  # noqa: E402
from pipelines.io import write_frame  # noqa: E402
from pipelines.recipe import load_recipe  # noqa: E402
from pipelines.runner import run_stage  # noqa: E402


def corpus(copies: int, seed: int = 0) -> pd.DataFrame:
    rng = random.Random(seed)
    notes, reviews, en = data.zh_notes(), data.zh_reviews(2000, seed), data.en_pages().head(400)
    rows = [dict(doc_id=r.doc_id, text=r.text, lang="zh", kind="zh_note", of=None) for r in notes.itertuples()]
    rows += [dict(doc_id=r.doc_id, text=r.text, lang="zh", kind="zh_review", of=None) for r in reviews.itertuples()]
    rows += [dict(doc_id=r.doc_id, text=r.text, lang="en", kind="en_page", of=None) for r in en.itertuples()]
    for r in notes.itertuples():
        rows += [dict(doc_id=f"{r.doc_id}~{k}", text=plant.han_near_copy(r.text, 0.02, rng), lang="zh", kind="zh_copy", of=r.doc_id) for k in range(copies)]
    for r in en.head(100).itertuples():
        rows += [dict(doc_id=f"{r.doc_id}~{k}", text=plant.word_near_copy(r.text, 0.02, rng), lang="en", kind="en_copy", of=r.doc_id) for k in range(copies)]
    df = pd.DataFrame(rows).drop_duplicates("doc_id")
    return df.sample(frac=1.0, random_state=seed).reset_index(drop=True)


def run(df: pd.DataFrame, spec: str, root: Path) -> dict:
    import dask

    inp = root / "in"
    if not inp.exists():
        frame = df.copy()
        for c in DOC_COLUMNS:
            if c not in frame.columns:
                frame[c] = None
        frame["source"], frame["n_tokens"] = "web", frame["text"].str.len().astype("int64")
        frame = frame[list(DOC_COLUMNS)]
        for i, part in enumerate(np.array_split(np.arange(len(frame)), 4)):
            write_frame(frame.iloc[part].reset_index(drop=True), inp / "docs" / f"part-{i:05d}.parquet")
        (inp / "_SUCCESS").write_text(json.dumps({"output_fingerprint": f"bench-{len(frame)}"}))
    rec = load_recipe(None, [f"minhash_dedup.shingle={spec}"])
    t0 = time.perf_counter()
    with dask.config.set({"scheduler": "synchronous", "dataframe.convert-string": False}):
        run_stage("minhash_dedup", rec, stage_dir=root / spec.replace(":", "_"), input_dir=inp, quiet=True)
    secs = time.perf_counter() - t0
    ledger = pd.concat([pd.read_parquet(p) for p in sorted((root / spec.replace(":", "_") / "ledger").glob("*.parquet"))])
    removed = set(ledger["doc_id"])
    out = {"spec": spec, "stage_seconds": round(secs, 1)}
    for kind in ("zh_copy", "en_copy"):
        c = df[df["kind"] == kind]
        found = [(d in removed) or (o in removed) for d, o in zip(c["doc_id"], c["of"], strict=True)]
        out[f"{kind}_found"] = round(float(np.mean(found)), 3)
    planted = set(df.loc[df["of"].notna(), "doc_id"]) | set(df["of"].dropna())
    other = df[df["doc_id"].isin(removed) & ~df["doc_id"].isin(planted)]
    out["other_removed"] = other["kind"].value_counts().to_dict()
    return out


def throughput(texts: list[str], spec: str, repeat: int = 3) -> dict:
    params = MinHashParams(shingle=ShingleSpec.parse(spec))
    mb = sum(len(t.encode()) for t in texts) / 1e6
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        signatures(texts, params)
        best = min(best, time.perf_counter() - t0)
    return {"MB_per_s": round(mb / best, 2), "docs_per_s": round(len(texts) / best)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--copies", type=int, default=3)
    ap.add_argument("--out", default="/tmp/bench_minhash_lang.json")
    args = ap.parse_args()
    df = corpus(args.copies)
    print(df["kind"].value_counts().to_dict())
    results: dict = {"recall": [], "throughput": []}
    with tempfile.TemporaryDirectory() as tmp:
        for spec in ("word:5", "script:5"):
            results["recall"].append(run(df, spec, Path(tmp)))
            print(results["recall"][-1], flush=True)
    zh = (data.zh_notes()["text"].tolist() * 20) + data.zh_reviews(5000)["text"].tolist()
    en = data.en_pages()["text"].tolist()
    for name, texts in (("zh (sections x20 + 5,000 reviews)", zh), ("en (WCXB pages)", en)):
        for spec in ("word:5", "script:5"):
            row = {"texts": name, "spec": spec, **throughput(texts, spec)}
            results["throughput"].append(row)
            print(row, flush=True)
    Path(args.out).write_text(json.dumps(results, indent=1, ensure_ascii=False))


if __name__ == "__main__":
    main()
