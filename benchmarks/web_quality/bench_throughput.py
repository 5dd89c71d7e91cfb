"""Throughput of each web-quality scorer per core on real pages, peers measured in the same run.

    python benchmarks/web_quality/bench_throughput.py [--repeat 3]

Pages: the raw Common Crawl WET records (dolma) and the whole visible text of the wcxb /
trafilatura / scrapinghub HTML pages (../shared/data). One process, one thread (torch and BLAS
limited to 1), so the figures are per core; each timing is the best of ``--repeat`` runs because
the machine is shared. Peers, same process, same pages:

- datatrove's GopherQualityFilter + GopherRepetitionFilter + C4QualityFilter + FineWebQualityFilter
  (the rules our ``heuristics`` signals reproduce as numbers);
- fastText (``fasttext`` package) supervised, word 1–2-grams — predict only (what a DCLM-style
  classifier costs), trained on the same data as ours;
- scikit-learn HashingVectorizer (char 3–5 + word 1–2, 2^20) + a linear model's decision function.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(var, "1")

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import data  # noqa: E402

from classifiers.scorer import Batch  # noqa: E402
from classifiers.web_quality import get_scorer  # noqa: E402


def best_of(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        fn()
        times.append(time.perf_counter() - started)
    return min(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--out", type=Path, default=data.WORK / "throughput.json")
    args = ap.parse_args()
    import torch

    torch.set_num_threads(1)
    wet = data.wet()["text"].tolist()
    pages = data.pages()["text"].tolist()
    sets = {"cc_wet": wet, "html_pages": pages[:600]}
    rows = []

    def record(scorer: str, corpus: str, texts: list[str], seconds: float, note: str = "") -> None:
        chars = sum(len(t) for t in texts)
        rows.append({"scorer": scorer, "corpus": corpus, "docs": len(texts), "mean_chars": round(chars / len(texts)),
                     "seconds": round(seconds, 3), "docs_per_s": round(len(texts) / seconds, 1),
                     "mchars_per_s": round(chars / seconds / 1e6, 2), "note": note})
        print(rows[-1])

    heur, lin = get_scorer("heuristics"), get_scorer("linear")
    lin.score(Batch(["warm up"]))
    heur.score(Batch(["warm up"]))
    peers = _peers(wet)
    for corpus, texts in sets.items():
        record("heuristics (all signals + score)", corpus, texts, best_of(lambda t=texts: heur.score(Batch(t)), args.repeat))
        record("linear (shipped, 2^18 hashed word 1-2 + char 3-5)", corpus, texts, best_of(lambda t=texts: lin.score(Batch(t)), args.repeat))
        for name, fn in peers.items():
            record(name, corpus, texts, best_of(lambda t=texts, f=fn: f(t), args.repeat), "peer")
    # embedding head: over stored vectors (what the stage does when semdedup ran) and with embedding
    from classifiers.embedding import get_embedder

    static = get_embedder(model="minilm-static", max_seq_length=256)
    vecs = static.embed(wet)
    w = np.random.default_rng(0).normal(size=vecs.shape[1]).astype(np.float32)
    record("embedding head over stored vectors", "cc_wet", wet, best_of(lambda: vecs @ w, args.repeat), "dot product only")
    record("embedding head + minilm-static embedding", "cc_wet", wet, best_of(lambda: static.embed(wet) @ w, 1))
    mini = get_embedder(model="all-MiniLM-L6-v2", max_seq_length=256, batch_size=32)
    sub = wet[:96]
    record("embedding head + all-MiniLM-L6-v2 embedding (256 tokens)", "cc_wet", sub, best_of(lambda: mini.embed(sub), 1), "1 thread")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(rows, indent=1))
    print(f"wrote {args.out}")


def _peers(train_texts: list[str]) -> dict:
    peers = {}
    try:
        from datatrove.data import Document
        from datatrove.pipeline.filters import (
            C4QualityFilter,
            FineWebQualityFilter,
            GopherQualityFilter,
            GopherRepetitionFilter,
        )

        filters = [GopherQualityFilter(), GopherRepetitionFilter(), C4QualityFilter(filter_no_terminal_punct=False), FineWebQualityFilter()]

        def run_datatrove(texts: list[str]) -> None:
            for i, t in enumerate(texts):
                for f in filters:  # all four, even after a failure: the same work as our signals
                    f.filter(Document(text=t, id=str(i)))

        run_datatrove(["warm up text. " * 20])
        peers["peer: datatrove Gopher+C4+FineWeb filters"] = run_datatrove
    except ImportError:
        print("datatrove not installed: peer skipped")
    try:
        import fasttext

        tmp = data.WORK / "ft_train.txt"
        tmp.parent.mkdir(parents=True, exist_ok=True)
        ref = data.reference()["text"].tolist()[:500]
        with open(tmp, "w") as fh:
            for t in ref:
                fh.write("__label__hq " + " ".join(t.split()) + "\n")
            for t in train_texts:
                fh.write("__label__cc " + " ".join(t.split()) + "\n")
        ft = fasttext.train_supervised(str(tmp), wordNgrams=2, epoch=3, verbose=0)

        def run_fasttext(texts: list[str]) -> None:
            for t in texts:
                ft.f.predict(" ".join(t.split()) + "\n", 1, 0.0, "strict")

        peers["peer: fastText supervised predict (word 1-2)"] = run_fasttext
    except ImportError:
        print("fasttext not installed: peer skipped")
    try:
        from sklearn.feature_extraction.text import HashingVectorizer

        cv = HashingVectorizer(analyzer="char", ngram_range=(3, 5), n_features=2**20, alternate_sign=False)
        wv = HashingVectorizer(analyzer="word", ngram_range=(1, 2), n_features=2**20, alternate_sign=False)
        w = np.random.default_rng(0).normal(size=2**20)

        def run_sklearn(texts: list[str]) -> None:
            (cv.transform(texts) @ w) + (wv.transform(texts) @ w)

        peers["peer: sklearn HashingVectorizer char3-5+word1-2 @ w"] = run_sklearn
    except ImportError:
        print("scikit-learn not installed: peer skipped")
    return peers


if __name__ == "__main__":
    main()
