"""Documents without a word (punctuation, symbols, emoji only) in MinHash, and SemDeDup's keeper of
tied pairs: the dedup stages of two checkouts on the same inputs, in one run.

    python benchmarks/minhash_dedup/bench_no_words.py --base /tmp/base --input sample_data [--input DIR ...]

``--base`` is a checkout of the code to compare with (``git archive REV | tar -x -C /tmp/base``);
this checkout is the other side. For each input, both run ingest → exact → MinHash → SemDeDup
(``--profile cpu``) and the script prints per stage the documents removed, the MinHash removals whose
text has no word, and the SemDeDup removals whose keeper is a shorter text at similarity ≥ 0.9999.
It also counts the documents without a word in the real corpora of ``../shared/data`` and the CPU
time of that test against the signatures of the same texts.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
DATA = Path(os.environ.get("CURATION_SHARED_DATA") or REPO / ".." / "shared" / "data")
LATER = ["web_quality", "code_quality", "code_web", "edu_score", "forge_filter", "mixture"]


def run(code: Path, inputs: list[str], out: Path) -> dict:
    env = {**os.environ, "PYTHONPATH": str(code)}
    cmd = [sys.executable, "-m", "pipelines.cli", "run", str(code / "pipelines/configs/glm45.yaml"), "--input", *inputs,
           "--output", str(out), "--profile", "cpu", "--quiet", *[f"{s}.enabled=false" for s in LATER]]
    subprocess.run(cmd, cwd=code, env=env, check=True, stdout=subprocess.DEVNULL)
    docs = pd.concat([pd.read_parquet(p, columns=["doc_id", "text"]) for p in glob.glob(str(out / "00_ingest/docs/*.parquet"))])
    text = docs.set_index("doc_id")["text"]
    from curation.dedup.shingles import has_words

    figures = {}
    for stage in ("10_exact_dedup", "20_minhash_dedup", "30_semdedup"):
        files = glob.glob(str(out / stage / "ledger/*.parquet"))
        ledger = pd.concat([pd.read_parquet(p) for p in files]) if files else pd.DataFrame(columns=["doc_id", "detail"])
        row = {"removed": len(ledger), "ids": sorted(ledger["doc_id"])}
        if stage == "20_minhash_dedup":
            row["no_words_removed"] = int(sum(not has_words(text[d]) for d in ledger["doc_id"]))
        if stage == "30_semdedup":
            details = ledger["detail"].map(json.loads)
            row["shorter_keeper_at_1"] = int(sum(
                d["similarity"] >= 0.9999 and len(text[d["duplicate_of"]]) < len(text[i])
                for i, d in zip(ledger["doc_id"], details, strict=True)))
        figures[stage[3:]] = row
    return figures


def real_corpora() -> dict:
    from curation.dedup.minhash import MinHashParams, signatures
    from curation.dedup.shingles import ShingleSpec, has_words

    files = {"web": ("web/web_docs.parquet", "text"), "code": ("code/code_files.parquet", "text"),
             "zh_reviews": ("zh/zh_reviews.jsonl.gz", "text"), "arxiv": ("math/arxiv_abstracts.jsonl.gz", "text")}
    out = {}
    for name, (path, col) in files.items():
        p = DATA / path
        if not p.exists():
            continue
        df = pd.read_parquet(p) if p.suffix == ".parquet" else pd.read_json(p, lines=True)
        texts = [t for t in df[col].tolist() if isinstance(t, str) and t.strip()]
        t0 = time.process_time()
        blank = [t for t in texts if not has_words(t)]
        t1 = time.process_time()
        signatures(texts, MinHashParams(shingle=ShingleSpec("script", 5)))
        t2 = time.process_time()
        out[name] = {"documents": len(texts), "no_words": len(blank), "examples": [b[:20] for b in blank[:5]],
                     "cpu_ratio_test_to_signatures": round((t1 - t0) / max(t2 - t1, 1e-9), 4)}
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--base", required=True, type=Path)
    ap.add_argument("--input", action="append", required=True, help="an input of `curate run` (repeat: one run each)")
    args = ap.parse_args()
    result = {"real_corpora": real_corpora(), "runs": {}}
    with tempfile.TemporaryDirectory() as tmp:
        for i, inp in enumerate(args.input):
            sides = {side: run(code.resolve(), [str(Path(inp).resolve())], Path(tmp) / f"{side}{i}")
                     for side, code in (("before", args.base), ("after", REPO))}
            for stage, row in sides["after"].items():  # the same documents removed, or how many differ
                gone = set(sides["before"][stage].pop("ids")) ^ set(row.pop("ids"))
                row["removed_set_differs_by"] = len(gone)
            result["runs"][inp] = sides
    print(json.dumps(result, indent=1, ensure_ascii=False))


if __name__ == "__main__":
    main()
