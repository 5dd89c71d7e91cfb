import numpy as np
import pytest

from classifiers.embedding import get_embedder

PAGES = [
    "Buy the Acme 3000 blender for $49.99. Free shipping on orders over $25. In stock: 12 units.",
    "Buy the Zenith 7100 blender for $59.49. Free shipping on orders over $35. In stock: 3 units.",
    "The mitochondrion is the powerhouse of the cell; it produces ATP through oxidative phosphorylation.",
    "",
]


def test_static_embedder_is_cached_unit_norm_and_tells_twins_from_strangers():
    emb = get_embedder(model="minilm-static", max_seq_length=256, mask_digits=True)
    assert emb is get_embedder(model="minilm-static", max_seq_length=256, mask_digits=True)  # once per process
    vecs = emb.embed(PAGES)
    assert vecs.dtype == np.float32 and vecs.shape == (4, emb.dim)
    np.testing.assert_allclose(np.linalg.norm(vecs[:3], axis=1), 1.0, atol=1e-5)
    assert np.linalg.norm(vecs[3]) == 0.0  # an empty text has no direction
    assert vecs[0] @ vecs[1] > 0.9 > vecs[0] @ vecs[2]
    assert emb.name == "minilm-static@seq256+mask_digits"
    assert emb.embed([]).shape == (0, emb.dim)


def test_static_window_truncates_like_the_transformer():
    emb = get_embedder(model="minilm-static", max_seq_length=8)
    a, b = emb.embed(["one two three four five six seven eight", "one two three four five six seven eight nine ten"])
    assert a @ b == pytest.approx(1.0, abs=1e-6)
    assert emb.last_stats["truncated"] == 2


@pytest.mark.slow
def test_transformer_embedder_matches_sentence_transformers_encode():
    emb = get_embedder(model="all-MiniLM-L6-v2", device="cpu", batch_size=2, max_seq_length=64, mask_digits=False)
    got = emb.embed(PAGES[:3] + ["word " * 500])
    assert emb.model.max_seq_length == 64
    # the same model through sentence-transformers' own encode (its own tokenisation, batching, pooling)
    want = emb.model.encode(PAGES[:3] + ["word " * 500], batch_size=2, normalize_embeddings=True)
    assert got.dtype == np.float32 and got.shape == (4, 384)
    np.testing.assert_allclose((got * want).sum(axis=1), 1.0, atol=1e-4)  # same vectors, another batch order
    assert emb.last_stats["truncated"] == 1 and emb.dim == 384


@pytest.mark.gpu
def test_transformer_embedder_uses_cuda_when_present():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device: the embedder runs on CPU here")
    emb = get_embedder(model="all-MiniLM-L6-v2", device="auto")
    assert emb.device == "cuda"
    cpu = get_embedder(model="all-MiniLM-L6-v2", device="cpu")  # same settings but the device
    np.testing.assert_allclose((emb.embed(PAGES[:3]) * cpu.embed(PAGES[:3])).sum(axis=1), 1.0, atol=2e-3)
