"""Edu decisions from scores: bands, the rich flag, counts from the histogram."""

import numpy as np
import pandas as pd

from curation.quality.edu_bands import HIST_BINS, band_counts, decide_bands, histogram_bins

NAMES = ("low", "medium", "high")


def test_decide_maps_scores_to_bands_and_rich_pages():
    out = decide_bands(pd.Series([0.0, 1.99, 2.0, 3.0, 4.7, np.nan]), pd.Series(["web", "web", "web", "math_science", "web", "code"]),
                       (2.0, 3.0), NAMES, 3.0, ("web",))
    assert out["edu_band"].tolist() == ["low", "low", "medium", "high", "high", None]
    assert "edu_repeat" not in out.columns  # what a band is worth is the mixture's decision
    assert out["edu_rich"].tolist()[:5] == [False, False, False, False, True]  # math_science is never "rich web"
    assert out["edu_rich"].isna().iloc[5]


def test_band_counts_come_from_the_histogram():
    hist = {"web": [0] * HIST_BINS}
    hist["web"][50] = 3  # scores 0.50–0.51
    hist["web"][320] = 2  # 3.20–3.21
    counts = band_counts(hist, (2.0, 3.0), NAMES, 3.0, ("web",))
    assert counts["bands"]["web"] == {"low": 3, "medium": 0, "high": 2} and counts["rich"] == 2
    moved = band_counts(hist, (0.4, 4.0), NAMES, 4.0, ("web",))
    assert moved["bands"]["web"] == {"low": 0, "medium": 5, "high": 0} and moved["rich"] == 0


def test_histogram_bins_cover_the_scale():
    assert histogram_bins(np.array([0.0, 0.505, 3.2, 5.0, 7.0])).tolist() == [0, 50, 320, HIST_BINS - 1, HIST_BINS - 1]
