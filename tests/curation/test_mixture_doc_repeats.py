"""A group whose documents have different repeat factors (``language_repeat``): each document is
shown in proportion to its factor, the group still replays its plan, and the caps hold per document."""

from __future__ import annotations

import math

import numpy as np
import pytest

from curation.mixture.doc_repeats import copies_by_repeat, spread
from curation.mixture.replay import CopyPlan, shard_copies


def two_languages(seed: int, n: int = 300) -> tuple[list[str], np.ndarray, np.ndarray]:
    """``n`` documents of real-looking lengths, every third one Chinese (factor 2.0 × the table's 0.5)."""
    rng = np.random.default_rng(seed)
    tokens = rng.integers(40, 900, n)
    repeats = np.where(np.arange(n) % 3 == 0, 1.0, 0.5)
    return [f"d{i:04d}" for i in range(n)], tokens, repeats


def epochs_by_factor(copies: np.ndarray, tokens: np.ndarray, repeats: np.ndarray) -> dict[float, float]:
    return {float(r): float((copies * tokens)[repeats == r].sum() / tokens[repeats == r].sum()) for r in np.unique(repeats)}


@pytest.mark.parametrize("seed", range(4))
def test_a_language_with_factor_2_gets_twice_the_copies_and_the_group_replays_its_plan(seed: int) -> None:
    ids, tokens, repeats = two_languages(seed)
    plan = CopyPlan((("p1", 0.38),), 4.0)  # the tester's web/medium_low at 0.38 epochs
    copies = copies_by_repeat(ids, tokens, repeats, plan, seed)
    e = epochs_by_factor(copies, tokens, repeats)
    assert 1.85 <= e[1.0] / e[0.5] <= 2.15, e  # by one expected epochs for the whole group: 1.0 (the tester's +0.012 for both)
    assert abs(int((copies * tokens).sum()) - 0.38 * tokens.sum()) <= 2 * tokens.max()  # the plan, within a document a class
    rbar = float((repeats * tokens).sum() / tokens.sum())
    assert e[1.0] == pytest.approx(0.38 * 1.0 / rbar, abs=0.02)  # e × r_d / r̄
    assert copies.max() <= 1


@pytest.mark.parametrize("seed", range(6))
def test_over_two_phases_the_cap_holds_per_document_and_a_class_at_its_cap_leaves_the_rest_to_the_others(seed: int) -> None:
    ids, tokens, repeats = two_languages(seed, 200)
    steps = (("p1", 2.9), ("p2", 0.9))  # e × 2 / r̄ passes the cap of 4: the Chinese class is held at 4
    total = sum(copies_by_repeat(ids, tokens, repeats, CopyPlan(steps[: k + 1], 4.0), seed) for k in range(2))
    assert total.max() <= 4
    assert (total[repeats == 1.0] == 4).all()
    for k in range(2):  # each phase replays its plan, within a document a class
        c = copies_by_repeat(ids, tokens, repeats, CopyPlan(steps[: k + 1], 4.0), seed)
        assert abs(int((c * tokens).sum()) - steps[k][1] * tokens.sum()) <= 2 * tokens.max()
    assert int((total * tokens).sum()) <= 4 * tokens.sum()


def test_one_factor_replays_as_the_whole_group() -> None:
    ids, tokens, _ = two_languages(1)
    plan = CopyPlan((("p1", 1.7), ("p2", 0.6)), 4.0)
    same = copies_by_repeat(ids, tokens, np.full(len(ids), 2.0), plan, 7)
    assert same.tolist() == shard_copies(ids, tokens, plan, 7).tolist()


@pytest.mark.parametrize("epochs", [0.1, 1.0, 2.5, 3.3, 3.99, 4.0])
def test_spread_keeps_the_tokens_and_the_cap(epochs: float) -> None:
    repeats, tokens = np.array([0.5, 1.0, 3.0]), np.array([500.0, 300.0, 200.0])
    out = spread(epochs, 4.0, repeats, tokens)
    assert float((out * tokens).sum()) == pytest.approx(epochs * tokens.sum())
    assert out.max() <= 4.0 + 1e-12
    free = out < 4.0 - 1e-9  # the classes under the cap keep the ratio of their factors
    assert not free.any() or np.allclose(out[free] / repeats[free], (out[free] / repeats[free])[0])
    uncapped = spread(1.2, math.inf, repeats, tokens)  # no cap (max_epochs "*": null): the ratio of the factors
    assert math.isclose(uncapped[2] / uncapped[0], 6.0) and float((uncapped * tokens).sum()) == pytest.approx(1.2 * tokens.sum())
