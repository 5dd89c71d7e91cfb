"""Build the shipped static embedders (no pickle): ``minilm-static`` and ``minilm-static-bi``.

    python benchmarks/semdedup/build_static_model.py               # classifiers/models/minilm_static (≈4.5 MB)
    python benchmarks/semdedup/build_static_model.py --bilingual   # classifiers/models/minilm_static_bi (≈4.5 MB)

``minilm-static`` (English; the default's second opinion): distils all-MiniLM-L6-v2
(``classifiers.static_distill.distill``: 128 dimensions, SIF 1e-4, int8) and takes the 3 common
directions from the *tune* half of the real web pages (``twins.load_pool``), so the held-out
*report* half used in RESULTS.md never shaped the model.

``minilm-static-bi`` (English and Chinese; the CPU profile's embedder): the same token vectors,
fitted to the transformer's own vectors (digits masked, 256 tokens, as the stage embeds) of
the tune half of the web pages, 459 OpenStax modules and 2,000 arXiv abstracts, and 20,000 real
Chinese reviews (``classifiers.static_distill.distill_to_teacher``). Held out: the report half of
the web pages, the 3,000 reviews the Chinese twin benchmark samples from and every Chinese
tutorial section (``benchmarks/languages/bench_semdedup.py``).

Token vectors and teacher vectors are cached under ``benchmarks/_work/semdedup/`` (first run:
~2 minutes for the token vectors, ~20 minutes for the teacher's vectors on 2 busy cores; the fit
itself ~1 minute).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "languages"))

import data  # noqa: E402
import twins  # noqa: E402

from classifiers.embedding import get_embedder, resolve_model_path  # noqa: E402
from classifiers.static_distill import distill, distill_to_teacher, token_vectors  # noqa: E402

MODELS = twins.REPO / "classifiers" / "models"
ZH_REVIEWS = 20_000
ARXIV = 2_000
EPOCHS, LR, PAIRS = 10, 0.1, 20.0  # chosen on the tune data (Chinese reviews outside training and the benchmark)


def cached_token_vectors(model: Path) -> np.ndarray:
    cache = twins.WORK / "token_vectors.npy"
    if not cache.exists():
        twins.WORK.mkdir(parents=True, exist_ok=True)
        np.save(cache, token_vectors(model)[0], allow_pickle=False)
    return np.load(cache, allow_pickle=False)


def bilingual_corpus() -> dict[str, list[str]]:
    """The training texts by part; nothing a held-out benchmark reads."""
    pool = twins.load_pool()
    math = data.require() / "math"
    arxiv = pd.read_json(math / "arxiv_abstracts.jsonl.gz", lines=True).sample(n=ARXIV, random_state=3)
    openstax = pd.read_json(math / "openstax_modules.jsonl.gz", lines=True)
    reviews = pd.read_json(data.require() / "zh" / "zh_reviews.jsonl.gz", lines=True)
    reviews = reviews[reviews["text"].astype(str).str.strip().str.len() > 0]
    benchmarked = set(data.zh_reviews(3000, seed=5)["doc_id"])  # the Chinese twin benchmark's sample
    reviews = reviews[~("zhr-" + reviews["id"].astype(str)).isin(benchmarked)].sample(n=ZH_REVIEWS, random_state=11)
    return {"web_tune": pool.loc[pool["split"] == "tune", "text"].tolist(),
            "math": openstax["text"].astype(str).tolist() + arxiv["text"].astype(str).tolist(),
            "zh_reviews": reviews["text"].astype(str).tolist()}


def build_bilingual(model: Path) -> Path:
    import torch

    torch.set_num_threads(1)
    corpus = bilingual_corpus()
    teacher = get_embedder(model="all-MiniLM-L6-v2", mask_digits=True, max_seq_length=256)
    keys = {"web_tune": "minilm-mask1", "math": "math-minilm-mask1", "zh_reviews": "zhtrain-minilm-mask1"}
    texts = [t for part in corpus.values() for t in part]
    targets = np.vstack([twins.embed_cached(corpus[p], keys[p], teacher.embed) for p in corpus])
    tokenizer = get_embedder(model="minilm-static", mask_digits=True, max_seq_length=256)  # same tokenizer
    out = MODELS / "minilm_static_bi"
    distill_to_teacher(model, out, tokenizer.token_ids(texts), targets, vectors=cached_token_vectors(model),
                       epochs=EPOCHS, lr=LR, pairs=PAIRS, corpus={p: len(t) for p, t in corpus.items()})
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bilingual", action="store_true", help="build minilm-static-bi instead of minilm-static")
    args = parser.parse_args()
    model = resolve_model_path("all-MiniLM-L6-v2")
    if args.bilingual:
        out = build_bilingual(model)
        note = "fitted to the teacher on English and Chinese"
    else:
        out = MODELS / "minilm_static"
        pool = twins.load_pool()
        corpus = pool.loc[pool["split"] == "tune", "text"].tolist()
        distill(model, out, dim=128, sif=1e-4, corpus=corpus, n_components=3, vectors=cached_token_vectors(model))
        note = f"common directions from {len(corpus)} tune pages"
    size = sum(p.stat().st_size for p in out.iterdir())
    print(f"wrote {out} ({size / 1e6:.2f} MB), {note}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
