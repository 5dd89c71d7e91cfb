"""Spherical k-means with faiss (GPU when faiss-gpu and a GPU are present), and nearest-centroid assignment.

>>> rng = np.random.default_rng(0)
>>> centres = np.eye(3, 8, dtype=np.float32)
>>> x = centres[rng.integers(0, 3, 300)] + 0.05 * rng.standard_normal((300, 8)).astype(np.float32)
>>> x /= np.linalg.norm(x, axis=1, keepdims=True)
>>> cents = train_kmeans(x, 3, seed=1)
>>> labels, sims = assign(x, cents)
>>> len(set(labels.tolist())), bool(sims.min() > 0.8)
(3, True)
"""

from __future__ import annotations

import logging
import math

import numpy as np

log = logging.getLogger(__name__)

#: Clusters of ~10⁴–10⁵ members, as in SemDeDup's LAION run (440M images, 50k clusters,
#: ~8.8k per cluster): k defaults to one cluster per this many documents.
DEFAULT_CLUSTER_SIZE = 10_000
#: faiss warns below 39 training points per centroid; we sample up to this many per centroid.
POINTS_PER_CENTROID = 256


def default_k(n: int, cluster_size: int = DEFAULT_CLUSTER_SIZE) -> int:
    """Clusters for ``n`` vectors: ``ceil(n / cluster_size)``, at least 1.

    >>> default_k(2_000), default_k(1_000_000), default_k(10_000_000_000)
    (1, 100, 1000000)
    """
    return max(1, math.ceil(n / max(1, cluster_size)))


def sample_size(k: int, n: int, cap: int | None = None) -> int:
    """Training sample for k-means: ``POINTS_PER_CENTROID * k`` vectors (at most ``n``, ``cap``).

    >>> sample_size(100, 1_000_000), sample_size(100, 5_000)
    (25600, 5000)
    """
    want = POINTS_PER_CENTROID * k
    if cap is not None:
        want = min(want, cap)
    return int(min(n, max(want, k)))


def gpu_available() -> bool:
    """True when faiss was built with GPU support and sees at least one GPU."""
    try:
        import faiss
    except ImportError:
        return False
    get = getattr(faiss, "get_num_gpus", None)
    return bool(get and get() > 0)


def train_kmeans(
    sample: np.ndarray, k: int, *, niter: int = 20, seed: int = 0, use_gpu: bool | None = None
) -> np.ndarray:
    """Centroids ``(k, d)`` (unit rows) of spherical k-means trained on ``sample`` (unit rows).

    ``k`` is lowered to the sample size if larger. ``use_gpu=None`` means "when available".
    """
    import faiss

    x = np.ascontiguousarray(sample, dtype=np.float32)
    if x.ndim != 2 or len(x) == 0:
        raise ValueError("k-means needs a non-empty 2-d sample")
    k = int(min(k, len(x)))
    gpu = gpu_available() if use_gpu is None else use_gpu
    if k == 1:  # the mean direction is the exact optimum; no need for faiss
        c = x.mean(axis=0, keepdims=True)
        return _unit(c if np.linalg.norm(c) > 0 else x[:1])
    km = faiss.Kmeans(
        x.shape[1], k, niter=niter, seed=int(seed) % (2**31), spherical=True, gpu=gpu,
        max_points_per_centroid=max(POINTS_PER_CENTROID, math.ceil(len(x) / k)), verbose=False,
    )
    km.train(x)
    log.info("k-means: k=%d on %d vectors (gpu=%s), objective %.4f", k, len(x), gpu, km.obj[-1] if len(km.obj) else float("nan"))
    return _unit(km.centroids)


def assign(
    vectors: np.ndarray, centroids: np.ndarray, *, use_gpu: bool | None = None, block: int = 65_536
) -> tuple[np.ndarray, np.ndarray]:
    """Nearest centroid by cosine: ``(labels int64, similarity float32)`` for every row."""
    import faiss

    x = np.ascontiguousarray(vectors, dtype=np.float32)
    c = np.ascontiguousarray(centroids, dtype=np.float32)
    if len(x) == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.float32)
    index = faiss.IndexFlatIP(c.shape[1])
    if gpu_available() if use_gpu is None else use_gpu:
        index = faiss.index_cpu_to_all_gpus(index)
    index.add(c)
    labels = np.empty(len(x), np.int64)
    sims = np.empty(len(x), np.float32)
    for start in range(0, len(x), block):  # bounded memory for very large partitions
        d, i = index.search(x[start : start + block], 1)
        labels[start : start + block] = i[:, 0]
        sims[start : start + block] = d[:, 0]
    return labels, sims


def _unit(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, dtype=np.float32)
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    return np.divide(x, norms, out=np.zeros_like(x), where=norms > 0)
