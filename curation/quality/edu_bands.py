"""Edu decisions: scores on the 0–5 rubric scale → a named band and the math/science-rich flag.

Pure functions of the scores and the configuration (the edu_score stage applies them per partition
and to the scores' histogram), so changing a band edge or the threshold re-runs no model.

>>> decide_bands(pd.Series([1.0, 2.5, 3.0, np.nan]), pd.Series(["web"] * 4), (2.0, 3.0), ("low", "medium", "high"),
...              3.0, ("web",)).values.tolist()
[['low', False], ['medium', False], ['high', True], [None, <NA>]]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

#: Score histogram resolution (0–5 in bins of 0.01): band counts for any edge on a 0.01 grid.
HIST_BINS = 500
SCALE_MAX = 5.0


def decide_bands(scores: pd.Series, sources: pd.Series, band_edges: Sequence[float], band_names: Sequence[str],
                 threshold: float, rich_sources: Sequence[str]) -> pd.DataFrame:
    """``edu_band`` (the band a score falls in) and ``edu_rich`` (at or above ``threshold`` and from one
    of ``rich_sources``); a NaN score gets nulls. What a band is worth is the mixture's decision."""
    s = scores.to_numpy(dtype=np.float64)
    scored = ~np.isnan(s)
    idx = np.searchsorted(np.asarray(band_edges, dtype=np.float64), np.nan_to_num(s), side="right")
    names = np.asarray(band_names, dtype=object)[idx]
    rich = scored & (s >= threshold) & sources.isin(list(rich_sources)).to_numpy()
    return pd.DataFrame(
        {
            "edu_band": pd.Series(np.where(scored, names, None), index=scores.index, dtype=object),
            "edu_rich": pd.array(np.where(scored, rich, None), dtype="boolean"),
        },
        index=scores.index,
    )


def histogram_bins(scores: np.ndarray) -> np.ndarray:
    """The histogram bin of each score (0–5 in :data:`HIST_BINS` bins)."""
    return np.clip((np.asarray(scores) * HIST_BINS / SCALE_MAX).astype(int), 0, HIST_BINS - 1)


def band_counts(histogram: dict[str, list[int]], band_edges: Sequence[float], band_names: Sequence[str],
                threshold: float, rich_sources: Sequence[str]) -> dict[str, Any]:
    """Documents per band and source, and rich documents, from a score histogram (no re-scoring).

    >>> band_counts({"web": [0] * 50 + [3] + [0] * 449}, (2.0, 3.0), ("low", "medium", "high"), 3.0, ("web",))
    {'bands': {'web': {'low': 3, 'medium': 0, 'high': 0}}, 'rich': 0, 'threshold': 3.0}
    """
    centres = (np.arange(HIST_BINS) + 0.5) * (SCALE_MAX / HIST_BINS)
    idx = np.searchsorted(np.asarray(band_edges), centres, side="right")
    out: dict[str, Any] = {"bands": {}, "rich": 0, "threshold": threshold}
    for source, counts in histogram.items():
        c = np.asarray(counts)
        out["bands"][source] = {name: int(c[idx == i].sum()) for i, name in enumerate(band_names)}
        if source in rich_sources:
            out["rich"] += int(c[centres >= threshold].sum())
    return out
