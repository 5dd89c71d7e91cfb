"""Training of :class:`classifiers.linear.HashedLinearModel` (mini-batch AdaGrad over hashed n-grams)
and the sparse feature matrix it is equivalent to (:func:`featurize`, for inspection).

>>> from classifiers.linear import HashedLinearModel
>>> m = fit_linear(HashedLinearModel(n_features=2**10, task="regression"), ["aaa", "bbb"] * 10, [1.0, 3.0] * 10,
...                epochs=20, lr=0.5)
>>> [round(float(v)) for v in m.predict(["aaa", "bbb"])]
[1, 3]
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence

import numpy as np
import scipy.sparse as sp

from classifiers.linear import HashedLinearModel, hashed_ngrams

log = logging.getLogger(__name__)


def doc_features(model: HashedLinearModel, texts: list[str], chunk: int = 256) -> list[tuple[np.ndarray, np.ndarray]]:
    """Per document: unique feature indices (int32) and their share of its n-grams (float32)."""
    out: list[tuple[np.ndarray, np.ndarray]] = []
    for i in range(0, len(texts), chunk):
        batch = texts[i : i + chunk]
        doc, col = model.ngrams(batch)
        valid = col < model.n_features
        key = doc[valid] * (model.n_features + 1) + col[valid]
        uniq, counts = np.unique(key, return_counts=True)
        udoc, ucol = np.divmod(uniq, model.n_features + 1)
        totals = np.bincount(udoc, weights=counts, minlength=len(batch))
        bounds = np.searchsorted(udoc, np.arange(len(batch) + 1))
        for d in range(len(batch)):
            a, b = bounds[d], bounds[d + 1]
            share = counts[a:b] / max(totals[d], 1.0)
            out.append((ucol[a:b].astype(np.int32), share.astype(np.float32)))
    return out


def fit_linear(
    model: HashedLinearModel,
    texts: Sequence[str],
    y: Sequence[float] | np.ndarray,
    *,
    epochs: int = 5,
    lr: float = 0.5,
    l2: float = 1e-6,
    batch_size: int = 32,
    sample_weight: Sequence[float] | np.ndarray | None = None,
    seed: int = 0,
) -> HashedLinearModel:
    """Train ``model`` from scratch with mini-batch AdaGrad; returns it.

    ``y`` is 0/1 for ``binary`` (class balance is left to ``sample_weight``) and a number
    for ``regression``. ``l2`` is the weight decay applied to the features a batch touches.
    The unique n-grams of every training document are held in memory (~8 bytes each).
    """
    texts = [str(t) for t in texts]
    yv = np.asarray(y, dtype=np.float64)
    if len(texts) != len(yv):
        raise ValueError(f"{len(texts)} texts but {len(yv)} labels")
    if len(texts) == 0:
        raise ValueError("cannot fit on zero documents")
    if model.task == "binary" and not np.isin(yv, (0.0, 1.0)).all():
        raise ValueError("binary task needs labels 0/1")
    sw = np.ones(len(yv)) if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
    started = time.time()
    feats = doc_features(model, texts)
    w = np.zeros(model.n_features, dtype=np.float64)
    acc = np.full(model.n_features, 1e-8, dtype=np.float64)
    if model.task == "binary":
        p = float(np.clip(np.average(yv, weights=sw), 1e-3, 1 - 1e-3))
        b = float(np.log(p / (1 - p)))
    else:
        b = float(np.average(yv, weights=sw))
    b_acc = 1e-8
    rng = np.random.default_rng(seed)
    for epoch in range(epochs):
        order = rng.permutation(len(yv))
        loss = 0.0
        for i in range(0, len(order), batch_size):
            idx = order[i : i + batch_size]
            cols = np.concatenate([feats[j][0] for j in idx])
            vals = np.concatenate([feats[j][1] for j in idx]).astype(np.float64)
            row = np.repeat(np.arange(len(idx)), [len(feats[j][0]) for j in idx])
            z = np.bincount(row, weights=w[cols] * vals, minlength=len(idx)) + b
            if model.task == "binary":
                pred = 1.0 / (1.0 + np.exp(-np.clip(z, -30, 30)))
                loss += float(np.sum(sw[idx] * -np.log(np.where(yv[idx] > 0.5, pred, 1 - pred) + 1e-12)))
            else:
                pred = z
                loss += float(np.sum(sw[idx] * (pred - yv[idx]) ** 2))
            r = sw[idx] * (pred - yv[idx]) / len(idx)
            ucols, inverse = np.unique(cols, return_inverse=True)
            g = np.bincount(inverse, weights=r[row] * vals, minlength=len(ucols)) + l2 * w[ucols]
            acc[ucols] += g * g
            w[ucols] -= lr * g / np.sqrt(acc[ucols])
            gb = float(r.sum())
            b_acc += gb * gb
            b -= lr * gb / np.sqrt(b_acc)
        log.debug("epoch %d: mean loss %.4f", epoch + 1, loss / max(sw.sum(), 1e-12))
    model.weights = w.astype(np.float32)
    model.bias = float(b)
    model.card.update({
        "n_train": len(texts), "epochs": int(epochs), "lr": float(lr), "l2": float(l2),
        "batch_size": int(batch_size), "seed": int(seed), "train_seconds": round(time.time() - started, 3),
    })
    return model


def featurize(
    texts: Sequence[str],
    n_features: int,
    *,
    word_ngrams: tuple[int, int] = (1, 2),
    char_ngrams: tuple[int, int] = (3, 5),
    max_chars: int = 20000,
) -> sp.csr_matrix:
    """Sparse (len(texts), n_features) matrix: each n-gram's share of the document's n-grams.

    This is fastText's document representation (the mean of its n-grams' vectors) written
    as a matrix; the model itself never builds it (see :meth:`HashedLinearModel.predict`).
    """
    doc, col = hashed_ngrams(texts, n_features, word_ngrams=word_ngrams, char_ngrams=char_ngrams, max_chars=max_chars)
    valid = col < n_features
    doc, col = doc[valid], col[valid]
    n = np.bincount(doc, minlength=len(texts)).astype(np.float64)
    data = 1.0 / np.maximum(n[doc], 1.0)
    x = sp.csr_matrix((data, (doc, col)), shape=(len(texts), n_features))
    x.sum_duplicates()
    return x
