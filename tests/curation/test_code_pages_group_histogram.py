"""code_web's histogram of one group (a ``bincount``) equals the general group-by histogram
(:func:`curation.quality.code_tiers.score_histogram`, the reference) row for row and dtype for dtype."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from curation.quality.code_pages import GROUP, group_histogram, page_histogram
from curation.quality.code_tiers import score_histogram


def _reference(scores: np.ndarray) -> pd.DataFrame:
    return score_histogram(np.full(len(scores), GROUP, dtype=object), scores)


CASES = [
    np.array([]), np.array([np.nan]), np.array([np.nan, np.nan]), np.array([0.0]), np.array([10.0]), np.array([-3.0, 12.0]),
    np.array([0.0, 0.0099999, 0.01, 9.99, 9.999999, 10.0]), np.array([5.0] * 7 + [np.nan] * 3),
    np.array([0.1 * i for i in range(101)]), np.array([1e-7, 0.0099999999, 4.2999999999, 4.3]),
]


@pytest.mark.parametrize("scores", CASES)
def test_equal_to_the_group_by_histogram(scores: np.ndarray) -> None:
    pd.testing.assert_frame_equal(group_histogram(scores.astype(np.float64)), _reference(scores.astype(np.float64)))


@pytest.mark.parametrize("seed", range(8))
def test_equal_on_random_scores(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(0, 3000))
    scores = rng.uniform(-1, 11, n)
    scores[rng.random(n) < 0.4] = np.nan
    edges = rng.random(n) < 0.1
    scores[edges] = rng.integers(0, 1001, int(edges.sum())) / 100.0  # exact bin edges too
    pd.testing.assert_frame_equal(group_histogram(scores), _reference(scores))


def test_page_histogram_of_recalled_pages_only() -> None:
    s = pd.DataFrame({"score": [5.0, 7.25, np.nan, 2.0], "content_prob": [0.9, 0.1, 0.8, 0.5]})
    recalled = np.array(["html_tags", None, "classifier", "classifier"], dtype=object)
    weights = {"structural": 1.0, "content": 0.5}
    from curation.quality.code_pages import tier_scores

    score = tier_scores(s, weights)
    score[pd.isna(recalled)] = np.nan
    pd.testing.assert_frame_equal(page_histogram(s, recalled, weights), _reference(score))
