"""Best-fit packing: fill rate and throughput, against two peers in the same run.

    python benchmarks/mixture/bench_packing.py [--docs 1000000] [--skip-real]

Peers: (1) the same best-fit-decreasing rule with a linear scan over open sequences (the
textbook O(N·B) implementation), on a subset because it is quadratic; (2) concatenate-and-chunk
(what pre-training pipelines do without packing): fill rate 1 by construction, but it cuts
documents at sequence boundaries — the truncation best-fit packing avoids. Real data: repository
documents built from ../shared/data/code (Qwen token counts) packed into 32K, OpenStax/arXiv/
Stacks math documents into 32K, web pages into 4K. Figures go to stdout as Markdown rows.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from curation.mixture.packing import best_fit_pack, check_packing  # noqa: E402

DATA = ROOT / ".." / "shared" / "data"
WORK = ROOT / "benchmarks" / "_work" / "mixture"


def code_files(code: Path) -> pd.DataFrame:
    """The real code files (``repo, path, text``) with their Qwen token counts (cached under WORK)."""
    from curation.tokens import count_tokens

    df = pd.read_parquet(code, columns=["repo", "path", "text"])
    cache = WORK / "code_tokens.parquet"
    if cache.exists():
        df["n_tokens"] = pd.read_parquet(cache)["n_tokens"].to_numpy()
    else:
        df["n_tokens"] = count_tokens(df["text"].tolist(), "qwen")
        WORK.mkdir(parents=True, exist_ok=True)
        df[["n_tokens"]].to_parquet(cache)
    return df


def linear_best_fit(lengths: np.ndarray, seq: int) -> int:
    """Peer 1: best-fit decreasing with a linear scan over the open sequences; returns sequences."""
    chunks: list[int] = []
    for n in lengths.tolist():
        while n > seq:
            chunks.append(seq)
            n -= seq
        if n > 0:
            chunks.append(n)
    chunks.sort(reverse=True)
    free: list[int] = []
    for c in chunks:
        best, best_left = -1, seq + 1
        for i, left in enumerate(free):
            if c <= left < best_left:
                best, best_left = i, left
        if best < 0:
            free.append(seq - c)
        else:
            free[best] -= c
    return len(free)


def concat_chunk(lengths: np.ndarray, seq: int) -> tuple[float, float]:
    """Peer 2: concatenate and cut every ``seq`` tokens; returns (fill rate, share of documents cut)."""
    ends = np.cumsum(lengths)
    starts = ends - lengths
    cut = (starts // seq) != ((ends - 1) // seq)
    total = int(ends[-1])
    n_seq = -(-total // seq)
    return total / (n_seq * seq), float(cut[lengths > 0].mean())


def timed(fn, *args):
    t = time.perf_counter()
    out = fn(*args)
    return out, time.perf_counter() - t


def synthetic(n_docs: int) -> None:
    rng = np.random.default_rng(0)
    print("\n| input | docs | seq | ours: sequences | fill | s | docs/min | peer concat+chunk: fill | docs cut |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for n in (n_docs // 10, n_docs):
        lengths = rng.lognormal(6.5, 1.3, n).astype(np.int64) + 1  # median ~670 tokens, long tail (web-like)
        for seq in (4096, 32768):
            p, dt = timed(best_fit_pack, lengths, seq)
            fill_cc, cut = concat_chunk(lengths, seq)
            print(f"| lognormal(6.5,1.3) | {n:,} | {seq} | {p.n_sequences:,} | {p.fill_rate:.4f} | {dt:.2f} | {n / dt * 60:,.0f} | {fill_cc:.4f} | {cut:.1%} |")
    print("\n| peer: linear-scan best fit | docs | seq | ours s | peer s | same sequences |")
    print("|---|---:|---:|---:|---:|---|")
    for n in (5_000, 20_000):
        lengths = rng.lognormal(6.5, 1.3, n).astype(np.int64) + 1
        p, dt = timed(best_fit_pack, lengths, 4096)
        q, dq = timed(linear_best_fit, lengths, 4096)
        print(f"| lognormal | {n:,} | 4096 | {dt:.3f} | {dq:.3f} | {p.n_sequences == q} |")


def real() -> None:
    from curation.mixture.repo_concat import concat_repo
    from curation.tokens import count_tokens

    print("\n| real set | docs | seq | tokens | sequences | fill | lower bound ⌈tokens/seq⌉ | s | peer concat+chunk: docs cut |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")

    def row(name: str, lengths: np.ndarray, seq: int) -> None:
        p, dt = timed(best_fit_pack, lengths, seq)
        check_packing(p, lengths)
        _, cut = concat_chunk(lengths, seq)
        lb = -(-int(lengths.sum()) // seq)
        print(f"| {name} | {len(lengths):,} | {seq} | {int(lengths.sum()):,} | {p.n_sequences:,} | {p.fill_rate:.4f} | {lb:,} | {dt:.2f} | {cut:.1%} |")

    code = DATA / "code" / "code_files.parquet"
    if code.exists():
        df = code_files(code)

        def count(texts: list[str]) -> np.ndarray:
            return count_tokens(texts, "qwen")

        for max_doc in (32768, 16384):
            built = []
            for repo, g in df.sort_values(["repo", "path"]).groupby("repo"):
                built += concat_repo(repo, g["path"].tolist(), g["text"].tolist(), g["n_tokens"].tolist(), [str(i) for i in g.index],
                                     max_tokens=max_doc, count=count)
            lengths = np.array([d.n_tokens for d in built])
            row(f"repo-level code (230 repos), max_doc_tokens {max_doc}", lengths, 32768)
            print(f"|  ↳ documents > seq/2 (one sequence each at best): {(lengths > 16384).sum():,} | | | | | | | | |")
    maths = [DATA / "math" / f for f in ("openstax_modules.jsonl.gz", "arxiv_abstracts.jsonl.gz", "stacks_project_chapters.jsonl.gz")]
    if all(p.exists() for p in maths):
        texts = [t for p in maths for t in pd.read_json(p, lines=True)["text"].astype(str)]
        row("math & science documents", count_tokens(texts, "qwen"), 32768)
    web = DATA / "web" / "web_docs.parquet"
    if web.exists():
        w = pd.read_parquet(web, columns=["text"]).dropna()
        row("web pages", count_tokens(w["text"].astype(str).tolist(), "qwen"), 4096)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--docs", type=int, default=1_000_000)
    ap.add_argument("--skip-real", action="store_true")
    args = ap.parse_args()
    synthetic(args.docs)
    if not args.skip_real:
        real()


if __name__ == "__main__":
    main()
