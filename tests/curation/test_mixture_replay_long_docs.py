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
