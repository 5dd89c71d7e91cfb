"""Training and evaluating edu heads: ridge regression, grouped splits, the metrics the stats report.

Kept apart from :mod:`classifiers.edu` (inference). Everything here is numpy on in-memory arrays.

>>> y = np.array([0.0, 1.0, 4.0, 5.0]); p = np.array([0.5, 1.5, 3.5, 4.0])
>>> m = regression_metrics(y, p, threshold=3.0)
>>> m["mae"], m["f1_at_threshold"], m["confusion"][5][4]
(0.625, 1.0, 1)
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Sequence
from typing import Any

import numpy as np
from scipy.stats import rankdata, spearmanr

from classifiers.edu import PRIOR_NEGATIVE, PRIOR_POSITIVE
from classifiers.embedding_head import DEFAULT_EMBEDDER, SCALE, EmbeddingHead

log = logging.getLogger(__name__)

L2_GRID = (0.01, 0.03, 0.1, 0.3, 1.0, 3.0, 10.0)


def ridge_fit(x: np.ndarray, y: np.ndarray, l2: float, sample_weight: np.ndarray | None = None) -> tuple[np.ndarray, float]:
    """Weighted ridge regression with an unpenalised intercept (closed form, ``d × d`` solve)."""
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    w = np.ones(len(y)) if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
    w = w / w.sum()
    mx = w @ x
    my = float(w @ y)
    xc = x - mx
    gram = (xc * w[:, None]).T @ xc + l2 * np.eye(x.shape[1]) / len(y)
    coef = np.linalg.solve(gram, (xc * w[:, None]).T @ (y - my))
    return coef, my - float(mx @ coef)


def group_folds(groups: Sequence[str], k: int, salt: str = "folds") -> np.ndarray:
    """Fold number 0..k-1 of each row from a hash of its group (rows of a group stay together)."""
    return np.minimum((np.asarray([_unit_hash(f"{salt}:{g}") for g in groups]) * k).astype(int), k - 1)


def heldout_mask(groups: Sequence[str], fraction: float, salt: str = "heldout") -> np.ndarray:
    """True for rows whose group hashes below ``fraction``: a stable grouped split."""
    return np.asarray([_unit_hash(f"{salt}:{g}") < fraction for g in groups], dtype=bool)


def _unit_hash(key: str) -> float:
    return int.from_bytes(hashlib.blake2b(key.encode(), digest_size=8).digest(), "big") / 2**64


def oof_ridge(
    x: np.ndarray, y: np.ndarray, groups: Sequence[str], l2: float, k: int = 5, sample_weight: np.ndarray | None = None
) -> np.ndarray:
    """Out-of-fold ridge predictions (grouped k-fold)."""
    folds = group_folds(groups, k)
    out = np.zeros(len(y))
    for f in range(k):
        test = folds == f
        if not test.any() or test.all():
            continue
        sw = None if sample_weight is None else sample_weight[~test]
        coef, b = ridge_fit(x[~test], y[~test], l2, sw)
        out[test] = x[test] @ coef + b
    return out


def choose_l2(
    x: np.ndarray, y: np.ndarray, groups: Sequence[str], grid: Sequence[float] = L2_GRID, k: int = 5,
    sample_weight: np.ndarray | None = None,
) -> float:
    """The ``l2`` of ``grid`` with the lowest grouped k-fold MAE."""
    best, best_mae = grid[0], np.inf
    for l2 in grid:
        mae = float(np.mean(np.abs(np.clip(oof_ridge(x, y, groups, l2, k, sample_weight), *SCALE) - y)))
        if mae < best_mae:
            best, best_mae = l2, mae
    return float(best)


def roc_auc(labels: Sequence[bool] | np.ndarray, scores: np.ndarray) -> float:
    """Area under the ROC curve (Mann–Whitney U with tied ranks); NaN with one class only.

    >>> roc_auc([0, 0, 1, 1], np.array([0.1, 0.4, 0.35, 0.8]))
    0.75
    """
    labels = np.asarray(labels, dtype=bool)
    n_pos, n_neg = int(labels.sum()), int((~labels).sum())
    if n_pos == 0 or n_neg == 0:
        return float("nan")
    ranks = rankdata(scores)
    return float((ranks[labels].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


def regression_metrics(y: np.ndarray, pred: np.ndarray, threshold: float = 3.0, scale: tuple[float, float] = SCALE) -> dict[str, Any]:
    """MAE, Spearman, precision/recall/F1 of ``>= threshold`` and the confusion matrix of rounded scores.

    ``confusion[i][j]`` counts documents annotated ``i`` (rounded) and predicted ``j`` (rounded).
    """
    y = np.asarray(y, dtype=np.float64)
    pred = np.asarray(pred, dtype=np.float64)
    lo, hi = int(scale[0]), int(scale[1])
    true_pos = y >= threshold
    pred_pos = pred >= threshold
    tp = int((true_pos & pred_pos).sum())
    precision = tp / max(int(pred_pos.sum()), 1)
    recall = tp / max(int(true_pos.sum()), 1)
    f1 = 0.0 if tp == 0 else 2 * precision * recall / (precision + recall)
    conf = np.zeros((hi - lo + 1, hi - lo + 1), dtype=int)
    for a, b in zip(np.clip(np.floor(y + 0.5), lo, hi).astype(int), np.clip(np.floor(pred + 0.5), lo, hi).astype(int), strict=True):
        conf[a - lo, b - lo] += 1
    rho = spearmanr(y, pred).statistic if len(y) > 2 and np.ptp(y) > 0 and np.ptp(pred) > 0 else float("nan")
    return {
        "n": len(y),
        "mae": round(float(np.mean(np.abs(y - pred))), 4) if len(y) else float("nan"),
        "spearman": round(float(rho), 4),
        "threshold": threshold,
        "precision_at_threshold": round(precision, 4),
        "recall_at_threshold": round(recall, 4),
        "f1_at_threshold": round(f1, 4),
        "confusion": conf.tolist(),
    }


def distil_head(
    x: np.ndarray,
    y: np.ndarray,
    groups: Sequence[str] | None = None,
    *,
    embedder: dict[str, Any] | None = None,
    heldout_fraction: float = 0.2,
    threshold: float = 3.0,
    l2: float | None = None,
    card: dict[str, Any] | None = None,
) -> tuple[EmbeddingHead, dict[str, Any]]:
    """The FineWeb-Edu distillation: ridge head on embeddings of annotated documents.

    Fits on the training part of a grouped split and reports the held-out metrics; ``l2`` is
    chosen by grouped cross-validation on the training part when not given.
    """
    y = np.asarray(y, dtype=np.float64)
    groups = list(groups) if groups is not None else [str(i) for i in range(len(y))]
    held = heldout_mask(groups, heldout_fraction) if heldout_fraction > 0 else np.zeros(len(y), dtype=bool)
    if held.all() or (~held).sum() < 2:
        held = np.zeros(len(y), dtype=bool)
    train = ~held
    train_groups = [g for g, t in zip(groups, train, strict=True) if t]
    chosen = l2 if l2 is not None else choose_l2(x[train], y[train], train_groups, k=min(5, max(2, int(train.sum()) // 4)))
    coef, bias = ridge_fit(x[train], y[train], chosen)
    head = EmbeddingHead(weights=coef, bias=bias, embedder=dict(embedder or DEFAULT_EMBEDDER))
    metrics: dict[str, Any] = {
        "l2": chosen,
        "n_train": int(train.sum()),
        "train": regression_metrics(y[train], head.predict_embeddings(x[train]), threshold),
    }
    if held.any():
        metrics["heldout"] = regression_metrics(y[held], head.predict_embeddings(x[held]), threshold)
    head.card = {**(card or {}), "metrics": metrics}
    return head, metrics


def fit_reference_head(
    x: np.ndarray,
    target: np.ndarray,
    groups: Sequence[str],
    positive_anchors: np.ndarray,
    negative_anchors: np.ndarray,
    *,
    embedder: dict[str, Any] | None = None,
    sample_weight: np.ndarray | None = None,
    l2: float | None = None,
    card: dict[str, Any] | None = None,
) -> tuple[EmbeddingHead, dict[str, Any]]:
    """The shipped default: a ridge head stacked with the zero-shot prior, on the 0–5 scale.

    Stacking: grouped out-of-fold head predictions ``h`` and the prior ``p`` are combined by
    least squares ``target ≈ a·h + c·p + d``; the head and the combination are both linear, so
    the result is one :class:`EmbeddingHead` with ``prior_weight = c``.
    """
    target = np.asarray(target, dtype=np.float64)
    chosen = l2 if l2 is not None else choose_l2(x, target, groups, sample_weight=sample_weight)
    h = oof_ridge(x, target, groups, chosen, sample_weight=sample_weight)
    probe = EmbeddingHead(np.zeros(x.shape[1]), 0.0, {}, 1.0, positive_anchors, negative_anchors)
    p = probe.prior(x)
    design = np.column_stack([h, p, np.ones(len(h))])
    sw = np.ones(len(h)) if sample_weight is None else sample_weight
    a, c, d = np.linalg.lstsq(design * np.sqrt(sw)[:, None], target * np.sqrt(sw), rcond=None)[0]
    coef, bias = ridge_fit(x, target, chosen, sample_weight)
    head = EmbeddingHead(
        weights=a * coef, bias=a * bias + d, embedder=dict(embedder or DEFAULT_EMBEDDER), prior_weight=float(c),
        positive_anchors=positive_anchors, negative_anchors=negative_anchors,
    )
    info = {"l2": chosen, "stack": {"head": round(float(a), 4), "prior": round(float(c), 4), "intercept": round(float(d), 4)}}
    head.card = {**(card or {}), "training": info}
    return head, info


def anchor_vectors(embed: Any) -> tuple[np.ndarray, np.ndarray]:
    """Embeddings of :data:`PRIOR_POSITIVE` / :data:`PRIOR_NEGATIVE` with ``embed(texts)``."""
    return np.asarray(embed(list(PRIOR_POSITIVE)), dtype=np.float64), np.asarray(embed(list(PRIOR_NEGATIVE)), dtype=np.float64)
