"""Tiers of code files from their quality scores: a cheap decision step, re-run without re-scoring.

Scores (0–10, one column per scorer) are combined into one number per file; per language,
thresholds come either from percentiles of that language's scores in the run (``percentile``)
or from absolute scores (``absolute``). Percentiles are read from fixed-bin histograms, which
merge by addition, so the global step is a reduction of small counts.

>>> rule = TierRule(mode="absolute", high=7.0, low=4.0)
>>> assign_tiers(np.array([8.0, 5.0, 1.0]), np.array(["Go"] * 3), {}, rule)
['high', 'medium', 'low']
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import pandas as pd

from curation.config import MERGE, Config, ConfigError, check_choice, check_entries, check_range

TIERS = ("high", "medium", "low")
N_BINS = 1000  #: histogram bins over the 0–10 score range (0.01 wide)
SCORE_MAX = 10.0  #: scores lie in 0 … SCORE_MAX
NO_HIGH = 11.0  #: an absolute ``high`` no score reaches: no high tier (JSON, YAML, TOML are medium by default)
POOLED = "*"  #: the pseudo-language of all files together (fallback for rare languages)


@dataclasses.dataclass(frozen=True)
class TierRule:
    """``percentile``: high ≥ the ``high``-th percentile, low < the ``low``-th (each at most its share: a tie
    at a cut is medium); ``absolute``: scores (0–10; ``high`` 11: no high tier).

    >>> TierRule(mode="absolute", high=80, low=10)
    Traceback (most recent call last):
    ...
    ValueError: tier mode absolute takes scores (low 0 … 10, high 0 … 11), not high 80.0 / low 10.0 (percentiles?): set tier_high/tier_low in score units (e.g. 7.5/4.0)
    """

    mode: str = "percentile"
    high: float = 80.0
    low: float = 10.0

    def __post_init__(self) -> None:
        if self.mode not in ("percentile", "absolute"):
            raise ValueError(f"tier mode must be percentile or absolute, not {self.mode!r}")
        if self.low > self.high:
            raise ValueError(f"tier low ({self.low}) must not exceed high ({self.high})")
        problem = absolute_range_problem(self.mode, self.high, self.low)
        if problem:
            raise ValueError(f"{problem}: set tier_high/tier_low in score units (e.g. 7.5/4.0)")


def absolute_range_problem(mode: str, high: float, low: float) -> str | None:
    """What is wrong with absolute cuts outside the score range (a percentile such as 80 / 10 would put
    every file in the low tier), or None."""
    if mode != "absolute" or (0.0 <= low <= SCORE_MAX and 0.0 <= high <= NO_HIGH):
        return None
    return (f"tier mode absolute takes scores (low 0 … {SCORE_MAX:g}, high 0 … {NO_HIGH:g}), "
            f"not high {float(high)} / low {float(low)} (percentiles?)")


def combined_score(scores: pd.DataFrame, weights: Mapping[str, float]) -> np.ndarray:
    """Weighted mean over the scorer columns ``code_score_<name>`` present and not NaN.

    >>> df = pd.DataFrame({"code_score_structural": [6.0, 8.0], "code_score_learned": [4.0, np.nan]})
    >>> combined_score(df, {"structural": 1.0, "learned": 1.0}).tolist()
    [5.0, 8.0]
    """
    total = np.zeros(len(scores))
    weight = np.zeros(len(scores))
    for name, w in weights.items():
        col = f"code_score_{name}"
        if col not in scores.columns or w <= 0:
            continue
        v = pd.to_numeric(scores[col], errors="coerce").to_numpy(dtype=np.float64)
        ok = ~np.isnan(v)
        total[ok] += w * v[ok]
        weight[ok] += w
    with np.errstate(invalid="ignore"):
        return np.where(weight > 0, total / np.maximum(weight, 1e-12), np.nan)


def score_histogram(languages: np.ndarray, scores: np.ndarray, group_of: Callable[[str], str | None] | None = None) -> pd.DataFrame:
    """Counts per (language, bin) of one partition, plus the pooled language ``*``.

    With ``group_of`` (language → group, e.g. its family), rows for ``group:<name>`` are added
    too: the fallback of a language with few files (TypeScript files count toward JavaScript's).
    """
    ok = ~np.isnan(scores)
    langs = np.asarray(languages, dtype=object)[ok]
    bins = np.clip(np.floor(scores[ok] * (N_BINS / 10.0) + 1e-6).astype(np.int64), 0, N_BINS - 1)
    frame = pd.DataFrame({"language": [str(x) for x in langs], "bin": bins})
    parts = [frame, frame.assign(language=POOLED)]
    if group_of is not None:
        grp = [group_of(x) for x in frame["language"]]
        has = np.array([g is not None for g in grp], dtype=bool)
        parts.append(pd.DataFrame({"language": [f"group:{g}" for g in grp if g is not None], "bin": frame["bin"].to_numpy()[has]}))
    both = pd.concat(parts, ignore_index=True)
    out = both.groupby(["language", "bin"], sort=True).size().rename("count").reset_index()
    return out.astype({"language": object, "bin": "int64", "count": "int64"})


def thresholds(hist: pd.DataFrame, default: TierRule, overrides: Mapping[str, TierRule] | None = None,
               min_files: int = 50, group_of: Callable[[str], str | None] | None = None,
               unpooled: frozenset[str] = frozenset()) -> dict[str, tuple[float, float]]:
    """Per language (and ``*``): (low cut, high cut) in score units.

    Percentile rules read the language's own histogram when it has ``min_files`` files, else
    its group's (``group:<name>`` rows, see :func:`score_histogram`) when that has enough,
    else the pooled one — except for languages whose group is in ``unpooled`` (data, markup and
    prose formats, which neither source code nor another format calibrates: each scores on a
    scale of its own): those get no cut, every file medium. Absolute rules are their scores.

    >>> h = score_histogram(np.array(["Go"] * 100), np.linspace(0, 9.9, 100))
    >>> thresholds(h, TierRule(high=80, low=10), min_files=10)["Go"]
    (1.0, 8.0)
    """
    overrides = overrides or {}
    merged = hist.groupby(["language", "bin"], sort=True)["count"].sum().reset_index() if len(hist) else hist
    by_lang = {str(k): g for k, g in merged.groupby("language", sort=True)} if len(merged) else {}
    out: dict[str, tuple[float, float]] = {}
    pooled = by_lang.get(POOLED)
    for lang in sorted(set(by_lang) | set(overrides)):
        rule = overrides.get(lang, default)
        if rule.mode == "absolute":
            out[lang] = (rule.low, rule.high)
            continue
        if lang.startswith("group:"):
            continue
        g = by_lang.get(lang)
        if g is None or g["count"].sum() < min_files:
            group = group_of(lang) if group_of is not None else None
            grp = by_lang.get(f"group:{group}")
            if group in unpooled:  # one data format does not calibrate another (TOML scores above JSON)
                out[lang] = (float("-inf"), float("inf"))
                continue
            g = grp if grp is not None and grp["count"].sum() >= min_files else pooled
        if g is None:
            out[lang] = (float("-inf"), float("inf"))
            continue
        out[lang] = (_percentile(g, rule.low), _percentile(g, rule.high, upper=True))
    return out


def _percentile(g: pd.DataFrame, pct: float, upper: bool = False) -> float:
    """The cut at the ``pct``-th percentile of one histogram: at most ``pct`` % of the files score below a
    lower cut, at most ``100 - pct`` % at or above an upper one (``upper``).

    A bin that straddles the percentile (files the scorer cannot tell apart, such as a block of
    headers that all score 9.16) goes to the middle tier, whole: a tie never fills an outer tier
    past its share, and a language whose files all score alike is all medium.
    """
    counts = np.zeros(N_BINS, dtype=np.int64)
    np.add.at(counts, g["bin"].to_numpy(), g["count"].to_numpy())
    cum = np.cumsum(counts) * 100  # in units of 1/100 file: compared with total × pct exactly
    if pct <= 0:
        return float("-inf")
    if pct >= 100:
        return float("inf")
    target = cum[-1] / 100 * pct
    if not upper:  # the lower edge of the first bin past the pct-th share: "< cut" holds at most pct % of the files
        return round(int(np.searchsorted(cum, target, side="right")) * 10.0 / N_BINS, 6)
    # the first bin wholly past the pct-th share, at its first file: ">= cut" holds at most 100 - pct % of the files
    last_below = int(np.searchsorted(cum, target, side="left"))
    above = np.flatnonzero(counts[last_below + 1 :])
    if not len(above):  # no file is wholly past the share: no high tier
        return float("inf")
    return round((last_below + 1 + int(above[0])) * 10.0 / N_BINS, 6)


def assign_tiers(scores: np.ndarray, languages: np.ndarray, cuts: Mapping[str, tuple[float, float]], default: TierRule,
                 overrides: Mapping[str, TierRule] | None = None) -> list[str]:
    """Tier of each file; a NaN score is ``medium`` (nothing to judge it by). What a tier is worth
    (its repeat factor, the low tier's exclusion) is the mixture policy's decision."""
    overrides = overrides or {}
    tiers: list[str] = []
    for s, lang in zip(scores, languages, strict=True):
        lang = str(lang)
        if lang in cuts:
            low, high = cuts[lang]
        elif (overrides.get(lang) or default).mode == "absolute":
            rule = overrides.get(lang) or default
            low, high = rule.low, rule.high
        else:
            low, high = cuts.get(POOLED, (float("-inf"), float("inf")))
        if np.isnan(s):
            tiers.append("medium")
        elif s >= high:
            tiers.append("high")
        elif s < low:
            tiers.append("low")
        else:
            tiers.append("medium")
    return tiers


def tier_rules(mode: str, high: float, low: float, overrides: Mapping[str, Mapping[str, Any]] | None) -> tuple[TierRule, dict[str, TierRule]]:
    """The default rule and per-language rules from recipe values (an override may set any key)."""
    default = TierRule(mode=mode, high=float(high), low=float(low))
    out = {}
    for lang, spec in (overrides or {}).items():
        merged = {**dataclasses.asdict(default), **dict(spec)}
        out[str(lang)] = TierRule(mode=str(merged["mode"]), high=float(merged["high"]), low=float(merged["low"]))
    return default, out


@dataclasses.dataclass(frozen=True)
class TierPolicy(Config):
    """How scores become tiers (a stage's ``tiers`` sub-config; flat keys ``tier_<name>``).

    ``weights`` combine the ``code_score_<name>`` columns; ``min_files``: fewer scored files in a
    language and its cuts come from its family, else from all files pooled (a rare data, markup or
    prose format is medium); ``overrides``: per language ``{mode, high, low}``.

    >>> TierPolicy.from_dict({"mode": "absolute", "high": 7.5, "low": 4}).rules()[0]
    TierRule(mode='absolute', high=7.5, low=4.0)
    """

    mode: str = "percentile"
    high: float = 80.0
    low: float = 10.0
    min_files: int = 50
    weights: dict[str, float] = dataclasses.field(default_factory=lambda: {"structural": 1.0, "learned": 1.0})
    # one rule per language: a recipe's entry replaces the default's whole (JSON: {mode: percentile} takes no absolute cut)
    overrides: dict[str, dict[str, Any]] = dataclasses.field(default_factory=dict, metadata={MERGE: "entry"})

    def validate(self) -> None:
        check_choice(self, "mode", ("percentile", "absolute"))
        check_range(self, "min_files", 1, None)
        if self.mode == "percentile":
            check_range(self, "high", 0.0, 100.0)
            check_range(self, "low", 0.0, 100.0)
        if self.low > self.high:
            raise ConfigError(f"TierPolicy.low ({self.low}) must not exceed high ({self.high})")
        problem = absolute_range_problem(self.mode, self.high, self.low)
        if problem:
            raise ConfigError(f"TierPolicy: {problem}: set tier_high/tier_low in score units (e.g. 7.5/4.0)")
        check_entries("overrides", self.overrides, [f.name for f in dataclasses.fields(TierRule)])
        for lang, spec in self.overrides.items():  # keys an entry leaves out come from the stage's own rule
            merged = {"mode": self.mode, "high": self.high, "low": self.low, **spec}
            try:
                problem = absolute_range_problem(str(merged["mode"]), float(merged["high"]), float(merged["low"]))
            except (TypeError, ValueError):
                problem = None  # not a number: rules() below says so
            if problem:
                raise ConfigError(f"TierPolicy.overrides.{lang}: {problem} (a key the entry leaves out comes from tier_mode/"
                                  f"tier_high/tier_low): give the entry its high and low in score units "
                                  f"(e.g. {{{lang}: {{mode: absolute, high: 7.5, low: 4.0}}}})")
        try:
            self.rules()
        except (ValueError, TypeError, KeyError) as exc:
            raise ConfigError(f"TierPolicy.overrides: {exc}") from exc

    def rules(self) -> tuple[TierRule, dict[str, TierRule]]:
        """The default rule and the per-language ones."""
        return tier_rules(self.mode, self.high, self.low, self.overrides)
