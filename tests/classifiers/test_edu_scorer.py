"""The edu scorers: the shipped default on text, the head file format, the hashed alternative."""

from __future__ import annotations

import json

import numpy as np
import pytest

from classifiers.edu import EnsembleEduScorer, default_model_dir, get_edu_scorer, save_ensemble
from classifiers.embedding_head import DEFAULT_EMBEDDER, EmbeddingHead, EmbeddingHeadScorer
from classifiers.scorer import Batch, model_fingerprint

from .edu_texts import OTHER, SCIENCE


@pytest.fixture(scope="module")
def default_scorer():
    return get_edu_scorer()


def test_shipped_default_has_a_card_with_data_and_metrics():
    card = json.loads((default_model_dir() / "model.json").read_text())
    assert card["kind"] == "ensemble" and card["embedder"] == DEFAULT_EMBEDDER
    assert {m["path"] for m in card["members"]} == {"head", "hashed"}
    assert card["metrics"]["heldout"]["auc"] >= 0.9 and card["metrics"]["heldout"]["n"] > 1000
    assert "data" in card and card["scale"] == [0.0, 5.0]
    head_card = json.loads((default_model_dir() / "head" / "model.json").read_text())
    assert head_card["embedder"] == DEFAULT_EMBEDDER and head_card["kind"] == "embedding_head"
    assert sum(f.stat().st_size for f in default_model_dir().rglob("*") if f.is_file()) < 5 * 2**20
    assert not list(default_model_dir().rglob("*.pkl"))


@pytest.mark.slow
def test_default_ranks_science_above_commerce_and_humanities(default_scorer):
    scores = default_scorer.score(Batch(SCIENCE + OTHER))
    assert scores.shape == (8,) and ((scores >= 0) & (scores <= 5)).all()
    science, other = scores[:4], scores[4:]
    assert science.min() > max(other[0], other[1], other[3])  # above the shop, the sales page and the essay
    assert (science[:3] >= 3.0).all() and (other < 3.0).all()  # the threshold decides the right way
    assert science.mean() - other.mean() > 2.0


def test_head_prior_and_clipping():
    pos = np.array([[1.0, 0.0]])
    neg = np.array([[0.0, 1.0]])
    head = EmbeddingHead(np.zeros(2), 2.5, {}, prior_weight=2.0, positive_anchors=pos, negative_anchors=neg)
    np.testing.assert_allclose(head.prior(np.array([[1.0, 0.0], [0.0, 1.0]])), [1.0, -1.0])
    np.testing.assert_allclose(head.predict_embeddings(np.array([[1.0, 0.0], [0.0, 1.0]])), [4.5, 0.5])
    big = EmbeddingHead(np.array([100.0, -100.0]), 0.0, {})
    assert big.predict_embeddings(np.array([[1.0, 0.0], [0.0, 1.0]])).tolist() == [5.0, 0.0]
    assert big.predict_embeddings(np.zeros((0, 2))).shape == (0,)


def test_saved_head_is_npz_without_pickle_and_fingerprinted(tmp_path):
    head = EmbeddingHead(np.array([0.5, -0.5]), 1.0, {"model": "x"}, card={"name": "toy", "version": "3"})
    head.save(tmp_path / "h")
    with np.load(tmp_path / "h" / "head.npz", allow_pickle=False) as z:
        assert set(z.files) >= {"weights", "bias", "prior_weight"}
    fp = model_fingerprint(tmp_path / "h")
    scorer = get_edu_scorer(tmp_path / "h")
    assert isinstance(scorer, EmbeddingHeadScorer) and scorer.name == "toy" and scorer.version == f"3+{fp}"
    np.testing.assert_allclose(scorer.score(Batch(["t"], vectors=np.array([[1.0, 0.0]]))), [1.5])
    EmbeddingHead(np.array([0.5, 0.5]), 1.0, {"model": "x"}).save(tmp_path / "h")
    assert model_fingerprint(tmp_path / "h") != fp


def test_ensemble_averages_members_and_reuses_vectors(tmp_path):
    EmbeddingHead(np.array([2.0, 0.0]), 1.0, {"model": "x"}).save(tmp_path / "e" / "a")
    EmbeddingHead(np.array([0.0, 2.0]), 3.0, {"model": "x"}).save(tmp_path / "e" / "b")
    save_ensemble(tmp_path / "e", {"a": 1.0, "b": 3.0}, {"name": "toy"})
    scorer = get_edu_scorer(tmp_path / "e")
    assert isinstance(scorer, EnsembleEduScorer) and "vectors" in scorer.needs and scorer.name == "toy"
    got = scorer.score(Batch(["t1", "t2"], vectors=np.array([[1.0, 0.0], [0.0, 1.0]])))
    np.testing.assert_allclose(got, [(3.0 + 3 * 3.0) / 4, (1.0 + 3 * 5.0) / 4])
    assert scorer.embedder == {"model": "x"}


def test_hashed_scorer_learns_from_annotations(tmp_path):
    from classifiers.linear import HashedLinearModel
    from classifiers.linear_train import fit_linear

    texts = SCIENCE * 10 + OTHER * 10
    y = np.r_[np.full(40, 4.0), np.full(40, 0.5)]
    model = fit_linear(HashedLinearModel(n_features=2**16, task="regression"), texts, y, epochs=10)
    model.save(tmp_path / "hashed", name="edu_hashed")
    scorer = get_edu_scorer(tmp_path / "hashed")
    pred = scorer.score(Batch(SCIENCE + OTHER + ["Buy boots with free shipping"]))
    assert pred[:4].min() > pred[4:].max() and ((pred >= 0) & (pred <= 5)).all()
    assert scorer.score(Batch([])).shape == (0,)
