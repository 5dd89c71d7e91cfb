import numpy as np
import pytest

from curation.dedup.kmeans import assign, default_k, gpu_available, sample_size, train_kmeans


def planted(n_per=60, k=4, dim=24, noise=0.08, seed=0):
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((k, dim)).astype(np.float32)
    centres /= np.linalg.norm(centres, axis=1, keepdims=True)
    labels = np.repeat(np.arange(k), n_per)
    x = centres[labels] + noise * rng.standard_normal((len(labels), dim)).astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True), labels


def test_default_k_follows_corpus_size():
    assert default_k(0) == 1 and default_k(9_999) == 1 and default_k(10_001) == 2
    assert default_k(1_000_000, cluster_size=1000) == 1000
    assert sample_size(1000, 10_000_000, cap=100_000) == 100_000
    assert sample_size(10, 50) == 50


def test_spherical_kmeans_recovers_planted_clusters():
    x, labels = planted()
    cents = train_kmeans(x, 4, seed=3)
    np.testing.assert_allclose(np.linalg.norm(cents, axis=1), 1.0, atol=1e-5)
    got, sims = assign(x, cents)
    # each planted cluster maps to exactly one k-means cluster
    for c in range(4):
        assert len(set(got[labels == c].tolist())) == 1
    assert len(set(got.tolist())) == 4
    assert sims.min() > 0.8


def test_assign_is_the_nearest_centroid_by_cosine():
    x, _ = planted(n_per=20, seed=1)
    cents = train_kmeans(x, 4, seed=1)
    got, sims = assign(x, cents, block=7)  # blocks of 7 rows give the same answer
    dense = x @ cents.T
    np.testing.assert_array_equal(got, dense.argmax(axis=1))
    np.testing.assert_allclose(sims, dense.max(axis=1), atol=1e-5)


def test_k_one_is_the_mean_direction_and_k_is_capped_by_the_sample():
    x, _ = planted(n_per=5, k=2)
    one = train_kmeans(x, 1)
    mean = x.mean(axis=0)
    np.testing.assert_allclose(one[0], mean / np.linalg.norm(mean), atol=1e-6)
    assert train_kmeans(x[:3], 50).shape == (3, x.shape[1])
    labels, _ = assign(np.zeros((0, x.shape[1]), np.float32), one)
    assert labels.shape == (0,)


@pytest.mark.gpu
def test_faiss_gpu_matches_cpu():
    if not gpu_available():
        pytest.skip("faiss-gpu with a visible GPU is needed (install the [gpu] extra on a CUDA machine)")
    x, _ = planted(n_per=200)
    cents = train_kmeans(x, 4, seed=3, use_gpu=False)
    cpu, _ = assign(x, cents, use_gpu=False)
    gpu, _ = assign(x, cents, use_gpu=True)
    np.testing.assert_array_equal(cpu, gpu)
    assert train_kmeans(x, 4, seed=3, use_gpu=True).shape == cents.shape
