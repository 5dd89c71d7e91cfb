import json

import numpy as np

from classifiers.embedding import resolve_model_path
from classifiers.static_distill import common_components, pca, quantize_int8, sif_weights


def test_quantize_int8_roundtrips_within_half_a_step():
    x = np.random.default_rng(0).standard_normal((50, 16)).astype(np.float32)
    codes, scales = quantize_int8(x)
    assert codes.dtype == np.int8 and scales.dtype == np.float32
    assert (np.abs(codes * scales[:, None] - x) <= scales[:, None] / 2 + 1e-6).all()


def test_pca_keeps_the_leading_directions_and_sif_downweights_frequent_ranks():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((400, 8)) * np.array([10, 5, 1, 1, 1, 1, 1, 1])
    y = pca(x, 2)
    assert y.shape == (400, 2) and y[:, 0].var() > y[:, 1].var() > 10
    w = sif_weights(1000)
    assert w[0] < w[10] < w[-1] <= 1.0


def test_common_components_are_the_shared_direction():
    rng = np.random.default_rng(2)
    shared = np.eye(6)[0]
    docs = shared + 0.3 * rng.standard_normal((200, 6))
    docs /= np.linalg.norm(docs, axis=1, keepdims=True)
    comp = common_components(docs, 1)
    assert abs(comp[0] @ shared) > 0.95
    assert common_components(docs, 0).shape == (0, 6)


def test_shipped_static_model_is_small_and_pickle_free():
    folder = resolve_model_path("minilm-static")
    size = sum(p.stat().st_size for p in folder.iterdir())
    assert size < 5_000_000
    card = json.loads((folder / "static.json").read_text())
    assert card["dim"] == 128 and card["common_components"] == 3
    for name in ("embeddings.npy", "scales.npy", "components.npy"):
        arr = np.load(folder / name, allow_pickle=False)  # raises if an object array were stored
        assert arr.dtype != object
