"""Cluster + prune time and peak memory on synthetic 384-d vectors with planted near-duplicates.

    python benchmarks/semdedup/bench_prune.py --sizes 100000 1000000 --k 1000

Each size runs in a fresh subprocess (peak RSS is per process). Vectors: 2,000 topic directions
plus noise (cosine ~0.5 to their topic), and 5 % planted near-duplicates (cosine ~0.97 to their
original). Steps timed: spherical k-means (faiss, on ``sample_size(k, n)`` vectors), assignment of
every vector, and the similarity pass over every cluster (``curation.dedup.semantic.similarity_pass``,
blocked), then the ε decision. This is the library path the stage runs inside its Dask tasks;
the Dask shuffle around it is not included. Runs with one BLAS/OpenMP thread per process, as a Dask
worker does.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time

import numpy as np
import pandas as pd


def synthetic(n: int, dim: int = 384, topics: int = 2000, dup_rate: float = 0.05, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Unit vectors and the index of each planted duplicate's original (-1 for originals)."""
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((topics, dim)).astype(np.float32)
    centres /= np.linalg.norm(centres, axis=1, keepdims=True)
    n_dup = int(n * dup_rate)
    n_orig = n - n_dup
    x = np.empty((n, dim), dtype=np.float32)
    step = 100_000
    for a in range(0, n_orig, step):  # in chunks: the noise matrix is as large as the data
        b = min(n_orig, a + step)
        x[a:b] = centres[rng.integers(0, topics, b - a)] + rng.standard_normal((b - a, dim), dtype=np.float32) / np.sqrt(dim)
    origin = np.full(n, -1, dtype=np.int64)
    origin[n_orig:] = rng.integers(0, n_orig, n_dup)
    x[n_orig:] = x[origin[n_orig:]] + 0.25 * rng.standard_normal((n_dup, dim), dtype=np.float32) / np.sqrt(dim)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    return x, origin


def run_one(n: int, k: int, eps: float, sample_cap: int | None = None) -> dict:
    from curation.dedup.kmeans import assign, sample_size, train_kmeans
    from curation.dedup.semantic import decide, similarity_pass

    t0 = time.perf_counter()
    x, origin = synthetic(n)
    t_gen = time.perf_counter() - t0
    rng = np.random.default_rng(1)
    sample = x[rng.choice(n, sample_size(k, n, sample_cap), replace=False)]
    t0 = time.perf_counter()
    cents = train_kmeans(sample, k, niter=20, seed=1)
    t_train = time.perf_counter() - t0
    t0 = time.perf_counter()
    labels, csims = assign(x, cents)
    t_assign = time.perf_counter() - t0
    members = pd.DataFrame({"doc_id": [f"d{i:08d}" for i in range(n)], "_part": 0, "source": "web",
                            "cluster": labels, "keep_key": csims.astype(np.float64)})
    t0 = time.perf_counter()
    sims = similarity_pass(members, x)
    t_prune = time.perf_counter() - t0
    t0 = time.perf_counter()
    removed = decide(sims, eps)
    t_decide = time.perf_counter() - t0
    sizes = np.bincount(labels, minlength=k)
    removed_idx = removed["doc_id"].str[1:].astype(int).to_numpy()
    planted = origin >= 0
    # a planted pair counts as found when one of the two is removed
    pair_hit = np.isin(np.flatnonzero(planted), removed_idx) | np.isin(origin[planted], removed_idx)
    return {
        "n": n, "k": k, "eps": eps, "kmeans_sample": len(sample),
        "seconds": {"generate": round(t_gen, 1), "kmeans_train": round(t_train, 1), "assign": round(t_assign, 1),
                    "similarity_pass": round(t_prune, 1), "decide": round(t_decide, 1),
                    "cluster_plus_prune": round(t_train + t_assign + t_prune + t_decide, 1)},
        "cluster_sizes": {"max": int(sizes.max()), "median": int(np.median(sizes)), "empty": int((sizes == 0).sum())},
        "removed": len(removed), "planted": int(planted.sum()), "planted_pairs_found": round(float(pair_hit.mean()), 4),
        "peak_rss_gib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20, 2),
        "input_gib": round(x.nbytes / 2**30, 2),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--k", type=int, default=1000)
    parser.add_argument("--eps", type=float, default=0.12)
    parser.add_argument("--kmeans-sample", type=int, default=None, help="cap on the k-means sample (stage: kmeans_sample)")
    parser.add_argument("--one", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(run_one(args.sizes[0], args.k, args.eps, args.kmeans_sample)))
        return 0
    for n in args.sizes:
        # One BLAS thread, as in a Dask worker (the nanny sets OPENBLAS/OMP/MKL_NUM_THREADS=1): on a busy
        # machine OpenBLAS's threads spin on the many small per-cluster products and run 10-100x slower.
        env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
        cap = [] if args.kmeans_sample is None else ["--kmeans-sample", str(args.kmeans_sample)]
        out = subprocess.run([sys.executable, __file__, "--one", "--sizes", str(n), "--k", str(args.k), "--eps", str(args.eps), *cap],
                             capture_output=True, text=True, check=True, env=env)
        print(out.stdout.strip().splitlines()[-1], flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
