"""Exact Qwen token counts: HF ``tokenizers`` against the ``tiktoken`` path of ``curation.tokens``.

    RAYON_NUM_THREADS=1 python benchmarks/tokens/bench_tokenizers.py [--out benchmarks/_work/tokens.json]

Reads real text from ../shared/data (web text and raw HTML, code files, OpenStax, arXiv, Stacks
Project, Chinese notes and reviews), counts every document with both, and reports MB per
CPU-second of each and every document whose counts differ (the choice needs zero).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import pandas as pd

from curation import tokens

DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data"


def corpus() -> dict[str, list[str]]:
    web = pd.read_parquet(DATA / "web" / "web_docs.parquet")
    out = {
        "web text": [t for t in web["text"].dropna() if t],
        "raw HTML": [t for t in web["html"].dropna() if t][:300],
        "code": pd.read_parquet(DATA / "code" / "code_files.parquet", columns=["text"])["text"].tolist()[:6000],
    }
    for name, f in [("math", "math/openstax_modules.jsonl.gz"), ("math", "math/arxiv_abstracts.jsonl.gz"),
                    ("math", "math/stacks_project_chapters.jsonl.gz"), ("chinese", "zh/zh_tech_notes.jsonl.gz")]:
        out.setdefault(name, []).extend(pd.read_json(DATA / f, lines=True)["text"].astype(str))
    out["chinese"] += pd.read_json(DATA / "zh" / "zh_reviews.jsonl.gz", lines=True)["text"].astype(str).tolist()[:5000]
    return out


def timed(fn, texts: list[str]) -> tuple[list[int], float]:
    t0 = time.process_time()
    counts = fn(texts)
    return [int(c) for c in counts], time.process_time() - t0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default="benchmarks/_work/tokens.json")
    args = ap.parse_args()
    hf = tokens.load_tokenizer("qwen")
    fast = tokens.load_fast_counter("qwen")
    rows = []
    for kind, texts in corpus().items():
        mb = sum(len(t.encode()) for t in texts) / 1e6
        a, hf_s = timed(lambda ts: [len(e.ids) for e in hf.encode_batch(ts, add_special_tokens=False)], texts)
        b, tk_s = timed(lambda ts: tokens._count_fast(fast, ts), texts)
        diff = sum(x != y for x, y in zip(a, b, strict=True))
        rows.append({"kind": kind, "docs": len(texts), "MB": round(mb, 2), "tokens": sum(a), "differ": diff,
                     "hf_MB_per_cpu_s": round(mb / hf_s, 2), "tiktoken_MB_per_cpu_s": round(mb / tk_s, 2)})
        print(json.dumps(rows[-1]), flush=True)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
