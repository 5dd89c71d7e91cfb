"""Best-fit packing of long documents: each full chunk followed by its document's next token, or not.

    python benchmarks/mixture/bench_chunk_chains.py [--data ../shared/data]

The same real sets as ``bench_packing.py`` (repository documents built from ../shared/data/code,
math & science documents, web pages; Qwen token counts, one EOD per document) packed twice in one
run: ``chain_chunks=False`` (a long document's last chunk goes where best fit puts it) and the
mixture's rule, ``chain_chunks=True`` (its chunks in consecutive sequences, the last one first in
its sequence). Per set: sequences, fill rate, full chunks that do not end their document, and how
many of those a reader of one token past each sequence (Megatron's GPTDataset over the export's
file) labels with another document's token; CPU seconds of the two packings.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_packing import DATA, code_files  # noqa: E402

from curation.mixture.packing import best_fit_pack, check_packing, chunk_continuations  # noqa: E402


def sets(data: Path) -> list[tuple[str, np.ndarray, int]]:
    import pandas as pd

    from curation.mixture.repo_concat import concat_repo
    from curation.tokens import count_tokens

    out = []
    code = data / "code" / "code_files.parquet"
    if code.exists():
        df = code_files(code)
        for max_doc in (32768, 16384):
            built = []
            for repo, g in df.sort_values(["repo", "path"]).groupby("repo"):
                built += concat_repo(repo, g["path"].tolist(), g["text"].tolist(), g["n_tokens"].tolist(), [str(i) for i in g.index],
                                     max_tokens=max_doc, count=lambda t: count_tokens(t, "qwen"))
            out.append((f"repo-level code, max_doc_tokens {max_doc}", np.array([d.n_tokens for d in built]) + 1, 32768))
    maths = [data / "math" / f for f in ("openstax_modules.jsonl.gz", "arxiv_abstracts.jsonl.gz", "stacks_project_chapters.jsonl.gz")]
    if all(p.exists() for p in maths):
        texts = [t for p in maths for t in pd.read_json(p, lines=True)["text"].astype(str)]
        n = count_tokens(texts, "qwen") + 1
        out += [("math & science documents", n, 32768), ("math & science documents", n, 4096)]
    web = data / "web" / "web_docs.parquet"
    if web.exists():
        w = pd.read_parquet(web, columns=["text"]).dropna()
        out.append(("web pages", count_tokens(w["text"].astype(str).tolist(), "qwen") + 1, 4096))
    return out


def main() -> None:
    import argparse

    ap = argparse.ArgumentParser()
    ap.add_argument("--data", type=Path, default=DATA)
    data = ap.parse_args().data
    if not data.is_dir():
        sys.exit(f"{data}: no such folder (give --data)")
    print("| set | seq | docs > seq | rule | sequences | fill | full chunks not ending their document | of them, next token another document's | CPU s |")
    print("|---|---:|---:|---|---:|---:|---:|---:|---:|")
    for name, lengths, seq in sets(data):
        for chain in (False, True):
            t = time.process_time()
            p = best_fit_pack(lengths, seq, chain_chunks=chain)
            dt = time.process_time() - t
            check_packing(p, lengths)
            full, wrong = chunk_continuations(p, lengths)
            rule = "chained (mixture)" if chain else "best fit only"
            print(f"| {name} | {seq} | {(lengths > seq).sum():,} | {rule} | {p.n_sequences:,} | {p.fill_rate:.4f} | {full:,} | {wrong:,} | {dt:.2f} |")


if __name__ == "__main__":
    main()
