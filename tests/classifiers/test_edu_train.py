"""Training pieces of the edu heads: ridge, grouped splits, metrics, distillation, the stacked default."""

from __future__ import annotations

import numpy as np
import pytest

from classifiers.edu_train import (
    choose_l2,
    distil_head,
    fit_reference_head,
    group_folds,
    heldout_mask,
    regression_metrics,
    ridge_fit,
    roc_auc,
)
from classifiers.embedding_head import EmbeddingHead


def unit(x: np.ndarray) -> np.ndarray:
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def synthetic(n: int = 400, d: int = 16, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    x = unit(rng.normal(size=(n, d)))
    w = rng.normal(size=d)
    y = np.clip(2.5 + 2.0 * (x @ w) / np.abs(x @ w).max() * 1.2, 0, 5)
    return x, y, w


def test_ridge_recovers_a_linear_target():
    x, y, _ = synthetic()
    coef, b = ridge_fit(x, y, l2=1e-6)
    assert np.abs(x @ coef + b - y).mean() < 0.1
    heavy, _ = ridge_fit(x, y, l2=1e6)
    assert np.abs(heavy).max() < 1e-2  # a large penalty shrinks to the mean


def test_sample_weights_pull_the_fit():
    x = np.array([[0.0], [1.0], [1.0]])
    y = np.array([0.0, 1.0, 3.0])
    coef_a, _ = ridge_fit(x, y, 1e-9, np.array([1.0, 1.0, 0.001]))
    coef_b, _ = ridge_fit(x, y, 1e-9, np.array([1.0, 0.001, 1.0]))
    assert coef_a[0] == pytest.approx(1.0, abs=0.01) and coef_b[0] == pytest.approx(3.0, abs=0.01)


def test_grouped_split_keeps_groups_together():
    groups = [f"site{i // 5}" for i in range(500)]
    held = heldout_mask(groups, 0.3)
    for g in set(groups):
        members = [h for h, gg in zip(held, groups, strict=True) if gg == g]
        assert len(set(members)) == 1
    assert 0.15 < held.mean() < 0.45
    folds = group_folds(groups, 5)
    assert set(folds) == set(range(5))
    assert all(len({f for f, gg in zip(folds, groups, strict=True) if gg == g}) == 1 for g in set(groups))


def test_roc_auc_matches_definition():
    assert roc_auc([0, 1], np.array([0.1, 0.9])) == 1.0
    assert roc_auc([0, 1], np.array([0.9, 0.1])) == 0.0
    assert roc_auc([0, 0, 1, 1], np.array([1.0, 1.0, 1.0, 1.0])) == 0.5
    assert np.isnan(roc_auc([1, 1], np.array([0.1, 0.2])))


def test_metrics_report_mae_spearman_f1_and_confusion():
    y = np.array([0, 1, 2, 3, 4, 5], dtype=float)
    m = regression_metrics(y, y + 0.4, threshold=3.0)
    assert m["mae"] == pytest.approx(0.4) and m["spearman"] == pytest.approx(1.0)
    assert m["f1_at_threshold"] == 1.0 and np.trace(np.array(m["confusion"])) == 6
    shifted = regression_metrics(y, y - 1.0, threshold=3.0)
    assert shifted["recall_at_threshold"] == pytest.approx(2 / 3, abs=1e-4)
    assert np.array(shifted["confusion"])[3, 2] == 1  # annotated 3, predicted 2


def test_distil_head_reports_heldout_metrics_and_round_trips(tmp_path):
    x, y, _ = synthetic()
    head, metrics = distil_head(x, y, [f"g{i}" for i in range(len(y))], embedder={"model": "toy"}, card={"name": "t"})
    assert metrics["heldout"]["spearman"] > 0.95 and metrics["heldout"]["mae"] < 0.3
    assert 0 < metrics["n_train"] < len(y)
    head.save(tmp_path / "m")
    loaded = EmbeddingHead.load(tmp_path / "m")
    np.testing.assert_allclose(loaded.predict_embeddings(x), head.predict_embeddings(x), atol=1e-5)
    assert loaded.card["metrics"]["heldout"]["n"] == metrics["heldout"]["n"]
    assert loaded.embedder == {"model": "toy"}
    assert not any(p.suffix == ".pkl" for p in (tmp_path / "m").iterdir())


def test_choose_l2_prefers_more_penalty_on_noise():
    rng = np.random.default_rng(1)
    x = unit(rng.normal(size=(120, 40)))
    noise = rng.normal(size=120)
    assert choose_l2(x, noise, [str(i) for i in range(120)]) >= 1.0


def test_reference_head_stacks_the_prior():
    rng = np.random.default_rng(2)
    d = 8
    pos, neg = unit(rng.normal(size=(2, d))), unit(rng.normal(size=(2, d)))
    x = unit(np.vstack([pos[i % 2] + 0.1 * rng.normal(size=d) for i in range(60)] + [neg[i % 2] + 0.1 * rng.normal(size=d) for i in range(60)]))
    y = np.r_[np.full(60, 4.5), np.full(60, 0.5)]
    head, info = fit_reference_head(x, y, [str(i) for i in range(120)], pos, neg)
    assert head.prior_weight == pytest.approx(info["stack"]["prior"], abs=1e-4) and head.prior_weight > 0
    pred = head.predict_embeddings(x)
    assert pred[:60].min() > pred[60:].max()
    assert pred.min() >= 0.0 and pred.max() <= 5.0
