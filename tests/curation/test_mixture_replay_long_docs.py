"""The replay's choice of the documents shown once more when a few long documents dominate a group."""

from __future__ import annotations

import numpy as np
import pytest

from curation.mixture.replay import CLOSE_ENOUGH, CopyPlan, shard_copies


def group() -> tuple[list[str], np.ndarray]:
    """330 short documents and 10 long ones holding 95 % of the tokens, as math_science/high of a
    mix of abstracts and a few textbooks is."""
    rng = np.random.default_rng(0)
    long = [40_000, 52_000, 61_000, 75_000, 88_000, 103_000, 120_000, 150_000, 200_000, 309_000]
    tokens = np.concatenate([rng.integers(50, 400, 330), long])
    return [f"m{i:03d}" for i in range(len(tokens))], tokens


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("epochs", [0.91, 0.7, 0.3])
def test_short_documents_get_about_their_share_when_long_ones_make_the_hash_order_miss(seed: int, epochs: float) -> None:
    ids, tokens = group()
    copies = shard_copies(ids, tokens, CopyPlan(steps=(("p1", epochs),)), seed=seed)
    target = epochs * tokens.sum()
    assert abs(int((copies * tokens).sum()) - target) <= CLOSE_ENOUGH * target  # the plan, replayed
    shown_short = (copies[:330] > 0).mean()
    # each short document is shown with about the group's fraction, not only the long ones (the
    # longest-first choice showed 13 of 340 documents, 3 short ones, at 0.91 epochs)
    assert shown_short >= epochs / 3, (shown_short, epochs)
    assert set(np.unique(copies)) <= {0, 1}


@pytest.mark.parametrize("epochs", [1.5, 2.05, 0.5])
def test_short_and_long_documents_each_get_about_their_token_share_of_the_extra_copies(epochs: float) -> None:
    """When the hash order lands near the target by itself, its back-fill after the first long
    document that does not fit went to the short ones: all 310 short documents got the extra copy
    at 1.5 epochs, and 14 of 30 long ones."""
    fraction, short_off, long_off = epochs - int(epochs), [], []
    for seed in range(10):
        rng = np.random.default_rng(seed)
        tokens = np.concatenate([rng.integers(50, 400, 310), rng.integers(3000, 60000, 30)])
        ids = [f"d{i:03d}" for i in range(len(tokens))]
        extra = shard_copies(ids, tokens, CopyPlan(steps=(("p1", epochs),)), seed=seed) - int(epochs)
        assert abs(int(((extra + int(epochs)) * tokens).sum()) - epochs * tokens.sum()) <= CLOSE_ENOUGH * epochs * tokens.sum()
        short_off.append(abs((extra[:310] * tokens[:310]).sum() / tokens[:310].sum() - fraction))
        long_off.append(abs((extra[310:] * tokens[310:]).sum() / tokens[310:].sum() - fraction))
    # the short ones absorb the long ones' rounding (half a long document is a large share of them)
    assert np.mean(short_off) < 0.15 and np.mean(long_off) < 0.05, (np.mean(short_off), np.mean(long_off))
