"""MinHash purity and recall on English and Chinese near-duplicates, in one run.

    CURATION_SHARED_DATA=/path/to/shared/data python benchmarks/minhash_dedup/bench_purity.py \
        [--english 20100] [--copies 3] [--variants main,default]

Held-out mix, one input folder for every variant: the English near-duplicate corpus of
``corpus.py`` (real web and math pieces from ../shared/data plus planted word-level edits), the 47
real Chinese tutorial sections with ``--copies`` near-copies each (2 % of the Han characters
replaced, seeded) and 2,000 real Chinese short reviews. The ``minhash_dedup`` stage runs once per
variant (recipe defaults plus the variant's overrides, synchronous scheduler).

- **purity**: share of the removed documents whose exact Jaccard with their keeper is >= 0.7;
  exact Jaccard of the reference shingle sets (``quality.shingle_sets``) of the spec the stage
  used (``script:5``: English word 5-grams, Chinese character 5-grams) and, for comparison, of
  plain whitespace ``word:5``;
- **English recall**: share of the English pairs with exact Jaccard >= 0.8 (0.85) put in one cluster;
- **Chinese recall**: share of planted Chinese copies in one cluster with their original.

Writes ``benchmarks/_work/minhash/purity.json`` and prints the table rows.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path[:0] = [str(ROOT), str(HERE), str(ROOT / "benchmarks" / "languages")]

import data as lang_data  # noqa: E402
import plant  # noqa: E402
from corpus import WORK, corpora, write_stage_dir  # noqa: E402
from quality import exact_pairs, jaccard, shingle_sets  # noqa: E402

from curation.dedup.shingles import ShingleSpec  # noqa: E402
from curation.schema import DOC_COLUMNS  # noqa: E402

#: name → recipe overrides: ``word5`` whitespace-word shingles, ``main`` signature-estimate
#: verification (the peer), ``default`` the recipe as shipped (exact verification).
VARIANTS = {
    "word5": ["minhash_dedup.shingle=word:5", "minhash_dedup.verify=signature"],
    "main": ["minhash_dedup.verify=signature"],
    "default": [],
}


def mixed_corpus(n_english: int, copies: int, seed: int = 0) -> pd.DataFrame:
    folder = corpora((n_english,))[n_english]
    en = pd.concat([pd.read_parquet(p) for p in sorted((folder / "docs").glob("*.parquet"))], ignore_index=True)
    en["kind"] = "en"
    en["of"] = [json.loads(m).get("base") for m in en["meta"]]
    rng = random.Random(seed)
    notes, reviews = lang_data.zh_notes(), lang_data.zh_reviews(2000, seed)
    rows = [dict(doc_id=r.doc_id, text=r.text, kind="zh_note", of=None) for r in notes.itertuples()]
    rows += [dict(doc_id=r.doc_id, text=r.text, kind="zh_review", of=None) for r in reviews.itertuples()]
    for r in notes.itertuples():
        rows += [dict(doc_id=f"{r.doc_id}~{k}", text=plant.han_near_copy(r.text, 0.02, rng), kind="zh_copy", of=r.doc_id) for k in range(copies)]
    zh = pd.DataFrame(rows).drop_duplicates("doc_id")
    zh["source"], zh["language"], zh["meta"] = "web", "zh", None
    zh["n_tokens"] = zh["text"].str.len().astype("int64")
    df = pd.concat([en, zh], ignore_index=True).sample(frac=1.0, random_state=seed).reset_index(drop=True)
    return df


def write_input(df: pd.DataFrame, folder: Path) -> Path:
    if (folder / "_SUCCESS").exists():
        return folder
    frame = df.copy()
    for c in DOC_COLUMNS:
        if c not in frame.columns:
            frame[c] = None
    return write_stage_dir(frame[list(DOC_COLUMNS)], folder)


def run_variant(name: str, overrides: list[str], inp: Path, root: Path) -> tuple[pd.DataFrame, pd.DataFrame, float]:
    """``(kept doc_id → cluster, ledger rows, seconds)`` of one stage run."""
    import dask

    from pipelines.recipe import load_recipe
    from pipelines.runner import run_stage

    out = root / name
    shutil.rmtree(out, ignore_errors=True)
    rec = load_recipe(None, overrides)
    t0 = time.perf_counter()
    with dask.config.set({"scheduler": "synchronous", "dataframe.convert-string": False}):
        run_stage("minhash_dedup", rec, stage_dir=out / "stage", input_dir=inp, quiet=True, cache_root=out / "cache")
    secs = time.perf_counter() - t0
    kept = pd.concat([pd.read_parquet(p, columns=["doc_id", "minhash_cluster"]) for p in sorted((out / "stage" / "docs").glob("*.parquet"))])
    ledger = pd.concat([pd.read_parquet(p, columns=["doc_id", "detail"]) for p in sorted((out / "stage" / "ledger").glob("*.parquet"))])
    return kept, ledger, secs


def evaluate(df: pd.DataFrame, kept: pd.DataFrame, ledger: pd.DataFrame, sets: dict[str, list[np.ndarray]], truth: pd.DataFrame) -> dict:
    index = {d: k for k, d in enumerate(df["doc_id"])}
    cluster = dict(zip(kept["doc_id"], kept["minhash_cluster"], strict=True))
    detail = [json.loads(x) for x in ledger["detail"]]
    cluster.update({d: x["cluster"] for d, x in zip(ledger["doc_id"], detail, strict=True)})
    label = np.array([cluster.get(d) or d for d in df["doc_id"]], dtype=object)
    kinds = df["kind"].to_numpy()
    out: dict = {}
    removed = [(index[d], index[x["duplicate_of"]]) for d, x in zip(ledger["doc_id"], detail, strict=True)]
    for group, match in (("en", lambda k: k == "en"), ("zh", lambda k: k != "en"), ("all", lambda k: True)):
        pairs = [(r, k) for r, k in removed if match(kinds[r])]
        out[f"removed_{group}"] = len(pairs)
        for spec, s in sets.items():
            jac = np.array([jaccard(s[r], s[k]) for r, k in pairs])
            out[f"purity_{group}_{spec}"] = round(float((jac >= 0.7).mean()), 4) if len(jac) else None
            if group == "en" and spec == "script:5":
                out["below_0.7_en"] = [{"removed": df["doc_id"][r], "keeper": df["doc_id"][k], "jaccard": round(float(j), 3),
                                        "jaccard_word5": round(jaccard(sets["word:5"][r], sets["word:5"][k]), 3)}
                                       for (r, k), j in zip(pairs, jac, strict=True) if j < 0.7]
    same = label[truth["i"].to_numpy()] == label[truth["j"].to_numpy()]
    for t in (0.8, 0.85):
        m = truth["jaccard"].to_numpy() >= t
        out[f"recall_en@{t}"] = round(float(same[m].mean()), 4)
        out[f"true_pairs_en@{t}"] = int(m.sum())
    copies = df[df["kind"] == "zh_copy"]
    found = [label[index[d]] == label[index[o]] for d, o in zip(copies["doc_id"], copies["of"], strict=True)]
    out["recall_zh_copies"] = round(float(np.mean(found)), 4)
    out["zh_copies"] = len(found)
    other = df["doc_id"].isin(set(ledger["doc_id"])) & (df["kind"] == "zh_review")
    out["zh_reviews_removed"] = int(other.sum())
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--english", type=int, default=20_100, help="documents of the English corpus (20100 or 5025)")
    ap.add_argument("--copies", type=int, default=3)
    ap.add_argument("--variants", default="word5,main,default")
    a = ap.parse_args()
    started = time.time()
    df = mixed_corpus(a.english, a.copies)
    root = WORK / f"purity_{a.english}_{a.copies}"
    inp = write_input(df, root / "input")
    texts = df["text"].tolist()
    t0 = time.perf_counter()
    sets = {spec: shingle_sets(texts, ShingleSpec.parse(spec)) for spec in ("script:5", "word:5")}
    en_rows = np.flatnonzero(df["kind"].to_numpy() == "en")
    truth = exact_pairs([sets["script:5"][k] for k in en_rows], 0.8)
    truth["i"], truth["j"] = en_rows[truth["i"].to_numpy()], en_rows[truth["j"].to_numpy()]
    print(f"{len(df)} documents ({df['kind'].value_counts().to_dict()}); truth in {time.perf_counter() - t0:.0f} s", flush=True)
    results: dict = {"documents": df["kind"].value_counts().to_dict(), "variants": {}}
    for name in a.variants.split(","):
        kept, ledger, secs = run_variant(name, VARIANTS[name], inp, root)
        row = {"overrides": VARIANTS[name], "stage_seconds": round(secs, 1), **evaluate(df, kept, ledger, sets, truth)}
        results["variants"][name] = row
        print(json.dumps({k: v for k, v in row.items() if k != "below_0.7_en"}), flush=True)
    results["seconds"] = round(time.time() - started, 1)
    (WORK / "purity.json").write_text(json.dumps(results, indent=1, ensure_ascii=False))
    print(f"total {results['seconds']} s → {WORK / 'purity.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
