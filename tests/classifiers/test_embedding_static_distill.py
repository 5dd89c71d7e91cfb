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


def test_fit_to_teacher_turns_the_table_towards_the_teacher():
    from classifiers.static_distill import fit_to_teacher, teacher_basis

    rng = np.random.default_rng(3)
    truth = rng.standard_normal((40, 8)).astype(np.float32)  # the "teacher": a hidden token table
    docs = [rng.choice(40, size=6) for _ in range(400)]
    teacher = np.stack([truth[d].sum(axis=0) for d in docs])
    teacher /= np.linalg.norm(teacher, axis=1, keepdims=True)
    basis = teacher_basis(teacher, 8)
    assert np.allclose(basis @ basis.T, np.eye(8), atol=1e-5)
    start = rng.standard_normal((40, 8)).astype(np.float32)

    def mean_cos(table):
        pred = np.stack([table[d].sum(axis=0) for d in docs])
        pred /= np.linalg.norm(pred, axis=1, keepdims=True)
        return float((pred * (teacher @ basis.T)).sum(axis=1).mean())

    fitted = fit_to_teacher(start, docs, teacher @ basis.T, epochs=30, batch=64, lr=0.05, pairs=1.0)
    assert mean_cos(start) < 0.5 < 0.95 < mean_cos(fitted)
    again = fit_to_teacher(start, docs, teacher @ basis.T, epochs=30, batch=64, lr=0.05, pairs=1.0)
    np.testing.assert_array_equal(fitted, again)  # deterministic for a seed


def test_shipped_bilingual_model_is_small_pickle_free_and_fitted_on_both_languages():
    folder = resolve_model_path("minilm-static-bi")
    assert sum(p.stat().st_size for p in folder.iterdir()) < 5_000_000
    card = json.loads((folder / "static.json").read_text())
    assert card["name"] == "minilm-static-bi" and card["dim"] == 128 and card["common_components"] == 0
    assert card["fit"]["corpus"]["zh_reviews"] > 0 and card["fit"]["corpus"]["web_tune"] > 0
    for name in ("embeddings.npy", "scales.npy", "components.npy"):
        assert np.load(folder / name, allow_pickle=False).dtype != object


def test_bilingual_model_separates_chinese_template_twins_from_other_pages():
    """On the sample's Chinese pages (sample_data/web/web_zh.jsonl.gz): every product page of a site has a
    sibling above the CPU profile's bar (cosine > 0.95), no article is near a product page, and articles
    on other topics rarely are near each other; the English-only model puts nearly every article next
    to an article on another topic."""
    from pathlib import Path

    import pandas as pd
    import pytest

    from classifiers.embedding import get_embedder

    path = Path(__file__).resolve().parents[2] / "sample_data" / "web" / "web_zh.jsonl.gz"
    if not path.exists():
        pytest.skip("no generated sample data (run the sample_data generator first)")
    pages = pd.read_json(path, lines=True)
    kind = pages["meta"].map(lambda m: m.get("kind"))
    products, articles = pages[kind == "template"], pages[kind == "article"]
    topic = articles["meta"].map(lambda m: m.get("topic")).to_numpy()
    other_topic = topic[:, None] != topic[None, :]
    assert len(products) >= 6 and other_topic.any()

    def near_other_topic(model):
        emb = get_embedder(model=model, mask_digits=True)
        vp, va = emb.embed(products["text"].tolist()), emb.embed(articles["text"].tolist())
        sp = vp @ vp.T
        np.fill_diagonal(sp, -1)
        return sp.max(axis=1), (va @ vp.T).max(), (np.where(other_topic, va @ va.T, -1).max(axis=1) > 0.95).mean()

    sibling, article_product, strangers = near_other_topic("minilm-static-bi")
    assert (sibling > 0.95).all() and article_product < 0.9 and strangers < 0.15
    assert near_other_topic("minilm-static")[2] > 0.9
