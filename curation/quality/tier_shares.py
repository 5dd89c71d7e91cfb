"""Asked and realised tier shares per language: a percentile cut keeps a tie at the cut in medium
whole (:func:`~curation.quality.code_tiers._percentile`), so raising ``tier_low`` can leave the low
tier as it is; these figures and warnings say so, and which tie holds it.

>>> from curation.quality.code_tiers import TierRule, score_histogram, thresholds
>>> scores = np.concatenate([[1.0] * 5, [5.0] * 60, [7.0] * 15, np.linspace(8, 9.9, 20)])
>>> h = score_histogram(np.array(["Go"] * 100), scores)
>>> rule = TierRule(high=80, low=30)
>>> shares, notes = tier_shares(h, thresholds(h, rule, min_files=10), rule, {}, min_files=10)
>>> shares["Go"]
{'asked': {'high': 20.0, 'low': 30.0}, 'realised': {'high': 20.0, 'low': 5.0}, 'files': 100}
>>> print(notes[0])
Go: the low tier holds 5 % of 100 files, not the 30 % that tier_low = 30 asks: 60 files score 5.00 alike at the cut, and a tie at a cut stays in medium whole; to cut by score instead, set tier_overrides={Go: {mode: absolute, new: true, low: 5.01, high: 8}}
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from curation.quality.code_tiers import N_BINS, NO_HIGH, TierRule

#: a realised share this many percentage points off the asked one (and off by more than half of it) is warned about
MIN_GAP = 5.0


def tier_shares(
    hist: pd.DataFrame,
    cuts: Mapping[str, tuple[float, float]],
    default: TierRule,
    overrides: Mapping[str, TierRule],
    min_files: int,
) -> tuple[dict[str, dict[str, Any]], list[str]]:
    """Per language cut by its own percentiles (``min_files`` files or more): the asked and the realised
    share (in %) of the high and the low tier; and a note per outer tier whose realised share is far
    from the asked one, naming the tie at the cut."""
    shares: dict[str, dict[str, Any]] = {}
    notes: list[str] = []
    if hist.empty:
        return shares, notes
    merged = hist.groupby(["language", "bin"], sort=True)["count"].sum().reset_index()
    for lang, g in merged.groupby("language", sort=True):
        lang = str(lang)
        rule = overrides.get(lang, default)
        total = int(g["count"].sum())
        if (
            rule.mode != "percentile"
            or lang == "*"
            or lang.startswith("group:")
            or total < min_files
            or lang not in cuts
        ):
            continue
        counts = np.zeros(N_BINS, dtype=np.int64)
        np.add.at(counts, g["bin"].to_numpy(), g["count"].to_numpy())
        score = np.arange(N_BINS) * 10.0 / N_BINS
        low, high = cuts[lang]
        asked = {"high": round(100.0 - float(rule.high), 2), "low": round(float(rule.low), 2)}
        realised = {
            "high": round(100.0 * float(counts[score >= high - 1e-9].sum()) / total, 2),
            "low": round(100.0 * float(counts[score < low - 1e-9].sum()) / total, 2),
        }
        shares[lang] = {"asked": asked, "realised": realised, "files": total}
        key = "tier_low" if lang not in overrides else f"tier_overrides.{lang}.low"
        new = "" if lang in overrides else "new: true, "  # a language the override table does not hold yet
        if _far(asked["low"], realised["low"]) and np.isfinite(low):
            tie = int(counts[int(round(low * N_BINS / 10.0))]) if low < 10.0 else 0
            notes.append(
                _note(
                    lang,
                    "low",
                    asked["low"],
                    realised["low"],
                    total,
                    key,
                    rule.low,
                    tie,
                    low,
                    f"{new}low: {low + 10.0 / N_BINS:.2f}, high: {_cut(high)}",
                )
            )
        key = "tier_high" if lang not in overrides else f"tier_overrides.{lang}.high"
        if _far(asked["high"], realised["high"]):
            below = np.flatnonzero(counts[: int(round(min(high, 10.0) * N_BINS / 10.0))])
            at = int(below[-1]) if len(below) else 0
            notes.append(
                _note(
                    lang,
                    "high",
                    asked["high"],
                    realised["high"],
                    total,
                    key,
                    rule.high,
                    int(counts[at]),
                    score[at],
                    f"{new}low: {_cut(low)}, high: {score[at]:.2f}",
                )
            )
    return shares, notes


def _far(asked: float, realised: float) -> bool:
    return abs(asked - realised) >= MIN_GAP and abs(asked - realised) > asked / 2


def _cut(value: float) -> str:
    return "0" if value == float("-inf") else f"{NO_HIGH:g}" if value == float("inf") else f"{value:g}"


def _note(
    lang: str,
    tier: str,
    asked: float,
    realised: float,
    total: int,
    key: str,
    value: float,
    tie: int,
    tie_score: float,
    absolute: str,
) -> str:
    why = (
        f"{tie:,} files score {tie_score:.2f} alike at the cut, and a tie at a cut stays in medium whole"
        if tie > 1
        else "the scores are too few or too far apart to cut there"
    )
    return (
        f"{lang}: the {tier} tier holds {realised:g} % of {total:,} files, not the {asked:g} % that {key} = {value:g} asks: "
        f"{why}; to cut by score instead, set tier_overrides={{{lang}: {{mode: absolute, {absolute}}}}}"
    )
