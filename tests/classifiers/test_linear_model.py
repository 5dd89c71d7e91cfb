"""HashedLinearModel: features, training, save/load without pickle, speed sanity."""

from __future__ import annotations

import json
import zipfile

import numpy as np
import pytest

from classifiers.linear import FEATURE_VERSION, HashedLinearModel, hashed_ngrams
from classifiers.linear_train import featurize, fit_linear

GOOD = [
    "The committee reviewed the proposal and published a detailed report on its findings.",
    "Researchers measured the temperature of the lake every morning for three years.",
    "She explained how the engine converts heat into mechanical work, step by step.",
    "The library opened a new reading room with a collection of historical maps.",
]
BAD = [
    "click here buy now cheap deals login register cart",
    "home | about | contact | privacy policy | terms | sitemap",
    "cookies accept all cookies we use cookies click accept",
    "buy cheap best price free shipping click now sale sale",
]


def test_features_do_not_cross_documents() -> None:
    # the same text alone or next to another document gives the same n-grams
    alone = featurize(["hello world"], 2**16)
    paired = featurize(["zzz qqq", "hello world"], 2**16)
    assert (alone[0] != paired[1]).nnz == 0


def test_features_are_ngram_shares() -> None:
    x = featurize(["a a a"], 2**16, word_ngrams=(1, 1), char_ngrams=(3, 3))
    # text "a a a": char 3-grams "a a", " a ", "a a" and words a, a, a → 6 n-grams
    assert x.sum() == pytest.approx(1.0)
    assert sorted(np.round(x.data * 6).astype(int).tolist()) == [1, 2, 3]


def test_case_and_whitespace_are_folded() -> None:
    a = featurize(["Hello   World\n"], 2**16)
    b = featurize(["hello world"], 2**16)
    assert (a != b).nnz == 0


def test_word_bigrams_depend_on_order() -> None:
    doc1, col1 = hashed_ngrams(["red car"], 2**20, word_ngrams=(2, 2), char_ngrams=(0, 0))
    doc2, col2 = hashed_ngrams(["car red"], 2**20, word_ngrams=(2, 2), char_ngrams=(0, 0))
    assert len(col1) == len(col2) == 1
    assert col1[0] != col2[0]


def test_non_latin_and_odd_characters_are_featurised() -> None:
    x = featurize(["Привет мир 你好世界 🙂", "", "\x00x\ud800"], 2**16)
    assert x[0].nnz > 5
    assert x[1].nnz == 0


def test_binary_fit_separates_classes() -> None:
    texts = GOOD * 10 + BAD * 10
    y = [1] * 40 + [0] * 40
    m = fit_linear(HashedLinearModel(n_features=2**16), texts, y, epochs=8)
    p = m.predict(["The report measured the lake temperature.", "buy now click here cheap"])
    assert p[0] > 0.5 > p[1]
    assert ((p >= 0) & (p <= 1)).all()


def test_regression_fit_predicts_values() -> None:
    texts = GOOD * 10 + BAD * 10
    y = [4.0] * 40 + [1.0] * 40
    m = fit_linear(HashedLinearModel(n_features=2**16, task="regression"), texts, y, epochs=20, lr=0.5)
    p = m.predict(GOOD[:1] + BAD[:1])
    assert p[0] > 3.0 and p[1] < 2.0


def test_bad_labels_are_rejected() -> None:
    with pytest.raises(ValueError, match="labels 0/1"):
        fit_linear(HashedLinearModel(n_features=64), ["a", "b"], [0, 2])
    with pytest.raises(ValueError, match="2 texts but 1 labels"):
        fit_linear(HashedLinearModel(n_features=64), ["a", "b"], [0])
    with pytest.raises(ValueError, match="task"):
        HashedLinearModel(task="ranking")


def test_save_load_roundtrip_without_pickle(tmp_path) -> None:
    m = HashedLinearModel(n_features=2**14, word_ngrams=(1, 3), char_ngrams=(2, 4))
    fit_linear(m, GOOD * 5 + BAD * 5, [1] * 20 + [0] * 20, epochs=3)
    folder = m.save(tmp_path / "model", data="unit test")
    card = json.loads((folder / "model.json").read_text())
    assert card["feature_version"] == FEATURE_VERSION
    assert card["config"]["word_ngrams"] == [1, 3]
    assert card["data"] == "unit test"
    # NPZ members are plain .npy arrays, not pickled objects
    with zipfile.ZipFile(folder / "weights.npz") as z:
        assert sorted(z.namelist()) == ["bias.npy", "weights.npy"]
    with np.load(folder / "weights.npz", allow_pickle=False) as data:
        assert data["weights"].dtype == np.float32
    loaded = HashedLinearModel.load(folder)
    probe = GOOD + BAD + ["unseen words entirely"]
    np.testing.assert_allclose(loaded.predict(probe), m.predict(probe), rtol=1e-5)
    assert loaded.card["data"] == "unit test"


def test_load_rejects_other_feature_versions(tmp_path) -> None:
    folder = HashedLinearModel(n_features=64).save(tmp_path / "m")
    card = json.loads((folder / "model.json").read_text())
    card["feature_version"] = "something-else"
    (folder / "model.json").write_text(json.dumps(card))
    with pytest.raises(ValueError, match="retrain"):
        HashedLinearModel.load(folder)
    with pytest.raises(FileNotFoundError):
        HashedLinearModel.load(tmp_path / "missing")


def test_prediction_is_batch_independent() -> None:
    m = fit_linear(HashedLinearModel(n_features=2**14), GOOD * 5 + BAD * 5, [1] * 20 + [0] * 20, epochs=2)
    texts = GOOD + BAD
    np.testing.assert_allclose(m.predict(texts, batch_size=3), m.predict(texts, batch_size=100))


def test_thousands_of_docs_per_second() -> None:
    import time

    rng = np.random.default_rng(0)
    words = np.array(["alpha", "beta", "gamma", "delta", "epsilon", "the", "of", "and", "research", "page"])
    texts = [" ".join(rng.choice(words, 300)) for _ in range(2000)]  # ~2,000 chars each
    m = HashedLinearModel()
    m.predict(texts[:10])
    started = time.perf_counter()
    m.predict(texts)
    rate = len(texts) / (time.perf_counter() - started)
    assert rate > 500, f"{rate:.0f} docs/s (expected thousands on an idle core)"
