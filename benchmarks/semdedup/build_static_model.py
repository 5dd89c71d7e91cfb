"""Build the shipped static embedder ``classifiers/models/minilm_static`` (≈4.5 MB, no pickle).

    python benchmarks/semdedup/build_static_model.py

Distils all-MiniLM-L6-v2 (``classifiers.static_distill``: 128 dimensions, SIF 1e-4, int8) and
takes the 3 common directions from the *tune* half of the real web pages (``twins.load_pool``), so
the held-out *report* half used in RESULTS.md never shaped the model. Token vectors are cached
under ``benchmarks/_work/semdedup/`` (5 minutes on 2 busy cores).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import twins  # noqa: E402

from classifiers.embedding import resolve_model_path  # noqa: E402
from classifiers.static_distill import distill, token_vectors  # noqa: E402

OUT = twins.REPO / "classifiers" / "models" / "minilm_static"


def main() -> int:
    model = resolve_model_path("all-MiniLM-L6-v2")
    cache = twins.WORK / "token_vectors.npy"
    if not cache.exists():
        twins.WORK.mkdir(parents=True, exist_ok=True)
        np.save(cache, token_vectors(model)[0], allow_pickle=False)
    pool = twins.load_pool()
    corpus = pool.loc[pool["split"] == "tune", "text"].tolist()
    distill(model, OUT, dim=128, sif=1e-4, corpus=corpus, n_components=3, vectors=np.load(cache, allow_pickle=False))
    size = sum(p.stat().st_size for p in OUT.iterdir())
    print(f"wrote {OUT} ({size / 1e6:.2f} MB) with common directions from {len(corpus)} tune pages")
    return 0


if __name__ == "__main__":
    sys.exit(main())
