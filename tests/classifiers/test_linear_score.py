"""The grid scoring of :mod:`classifiers.linear_score` gives bit for bit the sums ``bincount`` gives
over :func:`classifiers.linear_features.counted_blocks`, whatever the batch and its lengths."""

from __future__ import annotations

import numpy as np
import pytest

import classifiers.linear as linear
from classifiers.linear import HashedLinearModel
from classifiers.linear_features import counted_blocks
from classifiers.linear_score import block_sums, column_sums

CONFIGS = [((1, 2), (2, 4), 2**18), ((1, 2), (3, 5), 2**16), ((1, 1), (1, 3), 2**16), ((0, 0), (1, 5), 97), ((2, 3), (6, 6), 1000)]


def _texts(n: int, seed: int) -> list[str]:
    rng = np.random.default_rng(seed)
    alphabet = list("abcXYZ 019_.,\n\t\x00éßİΣ函数的学习😀") + ["  ", "the ", "def ", "数据", "\u3000"]
    return ["".join(rng.choice(alphabet, size=int(rng.integers(0, 400)))) for _ in range(n)]


def _weights(n_features: int, seed: int = 0) -> np.ndarray:
    w = np.zeros(n_features + 1)
    w[:-1] = np.random.default_rng(seed).normal(scale=1e3, size=n_features).astype(np.float32)
    w[:n_features:7] = -0.0  # zero weights, signed, must change nothing either
    return w


def test_column_sums_add_each_column_top_to_bottom():
    rng = np.random.default_rng(0)
    a = rng.normal(size=(300, 5)) * 10.0 ** rng.integers(-8, 17, size=(300, 5))
    want = []
    for j in range(a.shape[1]):
        s = 0.0
        for x in a[:, j].tolist():
            s += x
        want.append(s)
    assert column_sums(a).tolist() == want
    with pytest.raises(ValueError):
        column_sums(a[:, :1])


@pytest.mark.parametrize(("word", "char", "n_features"), CONFIGS)
@pytest.mark.parametrize("batch", [_texts(40, 1), _texts(1, 2), ["", ""], [""], ["a"], ["ab", ""], ["x" * 900, "y"], []])
def test_block_sums_are_bincounts(batch, word, char, n_features):
    w = _weights(n_features)
    want = [
        (np.bincount(d, weights=w.take(c), minlength=len(batch)), n)
        for d, c, n in counted_blocks(batch, n_features, word, char, 300)
    ]
    got = list(block_sums(batch, w, n_features, word, char, 300))
    # blocks in which no document has an n-gram may be left out: they add 0.0 and count 0
    assert all(not s.any() for s, n in got + want if not n.any())
    got, want = [b for b in got if b[1].any()], [b for b in want if b[1].any()]
    assert len(got) == len(want)
    for (gs, gn), (ws, wn) in zip(got, want, strict=True):
        assert np.array_equal(gn, wn)
        assert (gs + 0.0).tobytes() == ws.tobytes()  # + 0.0: a -0.0 sum adds as +0.0 would


@pytest.mark.parametrize("cells", [1, 500, 2**17])
def test_scores_do_not_depend_on_the_grid_budget(monkeypatch, cells):
    texts = _texts(150, 3) + ["", "a", "z" * 5000, "\x00" * 3]
    model = HashedLinearModel(n_features=2**12, word_ngrams=(1, 2), char_ngrams=(2, 4), max_chars=1500)
    model.weights = np.random.default_rng(4).normal(size=2**12).astype(np.float32)
    want = [model.decision_function([t]).tobytes() for t in texts]
    monkeypatch.setattr(linear, "GRID_CELLS", cells)
    for batch_size in (1, 3, 128):
        got = model.decision_function(texts, batch_size=batch_size)
        assert [got[i : i + 1].tobytes() for i in range(len(texts))] == want
