"""Source files: score (language, rule signals, scorer outputs), then decide (rule reasons, tiers).

The scoring half reads the text once and is cached by the stage; the deciding half is a pure
function of the scores and the recipe's thresholds, so a changed threshold never re-scores.
Scorers are passed in as functions (``{name: score(texts, languages, paths, cut) -> array}``, ``cut``:
per text, whether it is the start of a longer file; the stage wraps each model's ``score(Batch)``):
this module knows nothing of models.

>>> def flat(texts, languages, paths, cut):
...     return np.full(len(texts), 5.0)
>>> df = pd.DataFrame({"doc_id": ["a"], "text": ["def f():\\n    return 1\\n"], "source": ["code"],
...                    "path": ["a.py"], "language": [None]})
>>> s = score_frame(df, {"structural": flat}, sources=("code",))
>>> s[["doc_id", "language", "code_score_structural"]].values.tolist()
[['a', 'Python', 5.0]]
>>> decide_frame(s, RuleThresholds(), {"structural": 1.0})[["rule_reason", "combined"]].values.tolist()
[[None, 5.0]]
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from curation.quality.code_language import detect_language, tier_group
from curation.quality.code_rules import RuleThresholds, decide_rule, rule_signals
from curation.quality.code_tiers import POOLED, TierPolicy, assign_tiers, combined_score, score_histogram
from curation.schema import DROP_DETAIL, DROP_REASON, mark_kept


def score_frame(df: pd.DataFrame, scorers: Mapping[str, Callable[..., Any]], *, sources: Sequence[str], language_from: str = "missing",
                header_lines: int = 10, long_line: int = 300, max_chars: int = 200_000) -> pd.DataFrame:
    """One row per file of ``sources``: doc_id, language, ``sig_*`` rule signals, ``code_score_<scorer>``.

    ``language_from="missing"`` detects a language only where the input has none (``always``: everywhere);
    scorers read at most ``max_chars`` characters of a file, and are told which files were cut short
    (a cut file is the start of a file, not a broken one).
    """
    scope = df[df["source"].isin(sources)]
    texts = [t if isinstance(t, str) else "" for t in scope["text"]]
    paths = [p if isinstance(p, str) else None for p in scope["path"]]
    given = scope["language"].tolist() if "language" in scope.columns else [None] * len(scope)
    langs = [
        g if (language_from == "missing" and isinstance(g, str) and g) else (detect_language(p, t) or (g or None))
        for g, p, t in zip(given, paths, texts, strict=True)
    ]
    sigs = [rule_signals(t, p, lang, header_lines, long_line) for t, p, lang in zip(texts, paths, langs, strict=True)]
    out = pd.DataFrame({"doc_id": scope["doc_id"].astype(object).to_numpy(), "language": pd.Series(langs, dtype=object)})
    sig_frame = pd.DataFrame(sigs)
    for col in sig_frame.columns:
        out[f"sig_{col}"] = sig_frame[col].to_numpy()
    clipped = [t[:max_chars] for t in texts]
    cut = [len(t) > max_chars for t in texts]
    for name, score in scorers.items():
        out[f"code_score_{name}"] = score(clipped, langs, paths, cut) if len(out) else []
    return out


def decide_frame(scores: pd.DataFrame, thresholds: RuleThresholds, weights: Mapping[str, float]) -> pd.DataFrame:
    """Per scored file: rule reason + detail, combined score (NaN when a rule fails)."""
    sig_cols = [c for c in scores.columns if c.startswith("sig_")]
    sigs = scores[sig_cols].rename(columns=lambda c: c[4:]).to_dict("records")
    decided = [decide_rule(s, thresholds, lang) for s, lang in zip(sigs, scores["language"], strict=True)]
    out = pd.DataFrame({"doc_id": scores["doc_id"].to_numpy(), "language": scores["language"].to_numpy()})
    out["rule_reason"] = [r for r, _ in decided]
    out["rule_detail"] = [d for _, d in decided]
    combined = combined_score(scores, weights)
    combined[out["rule_reason"].notna().to_numpy()] = np.nan
    out["combined"] = combined
    return out


def file_histogram(scores: pd.DataFrame, thresholds: RuleThresholds, weights: Mapping[str, float]) -> pd.DataFrame:
    """Score histogram per language (and language family) of the rule-passing files."""
    d = decide_frame(scores, thresholds, weights)
    return score_histogram(d["language"].fillna("unknown").to_numpy(), d["combined"].to_numpy(), tier_group)


def annotate_files(df: pd.DataFrame, scores: pd.DataFrame | None, scorers: Sequence[str], thresholds: RuleThresholds,
                   policy: TierPolicy, cuts: Mapping[str, tuple[float, float]]) -> pd.DataFrame:
    """``df`` with ``code_score_*``, ``code_tier`` and the rule drops of its scored files (others kept as they are)."""
    df = df.copy()
    score_cols = [f"code_score_{n}" for n in scorers]
    for col in score_cols:
        df[col] = np.nan
    df["code_tier"] = pd.Series([None] * len(df), index=df.index, dtype=object)
    df = mark_kept(df)
    if scores is None or df.empty or scores.empty:
        return df
    decided = decide_frame(scores, thresholds, policy.weights).set_index("doc_id")
    scores = scores.set_index("doc_id")
    hit = df["doc_id"].isin(decided.index).to_numpy()
    ids = df.loc[hit, "doc_id"].to_numpy()
    d = decided.loc[ids]
    df["language"] = df["language"].astype(object)  # an all-null input column reads back as float
    df.loc[hit, "language"] = d["language"].to_numpy()
    for col in score_cols:
        df.loc[hit, col] = scores.loc[ids, col].to_numpy(dtype=np.float64)
    default, overrides = policy.rules()
    tiers = assign_tiers(d["combined"].to_numpy(), d["language"].fillna("unknown").to_numpy(), cuts, default, overrides)
    failed = [isinstance(r, str) for r in d["rule_reason"]]
    tiers = [None if f else t for t, f in zip(tiers, failed, strict=True)]  # rule failures have no tier
    df.loc[hit, "code_tier"] = np.array(tiers, dtype=object)
    df.loc[hit, DROP_REASON] = np.array([r if f else None for r, f in zip(d["rule_reason"], failed, strict=True)], dtype=object)
    df.loc[hit, DROP_DETAIL] = np.array([x if f else None for x, f in zip(d["rule_detail"], failed, strict=True)], dtype=object)
    return df


def tier_counts(hist: pd.DataFrame, cuts: Mapping[str, tuple[float, float]]) -> dict[str, dict[str, int]]:
    """Files per language and tier (rule-passing files), read off the histograms: one entry per language,
    so the entries add up to the run's totals (the pooled ``*`` and ``group:`` rows are fallbacks of the
    cuts, not languages, and have none)."""
    out: dict[str, dict[str, int]] = {}
    if hist.empty:
        return out
    merged = hist.groupby(["language", "bin"], sort=True)["count"].sum().reset_index()
    for lang, g in merged.groupby("language", sort=True):
        if str(lang).startswith("group:") or lang == POOLED:
            continue
        low, high = cuts.get(str(lang), cuts.get("*", (float("-inf"), float("inf"))))
        score = g["bin"].to_numpy() / 100.0
        counts = g["count"].to_numpy()
        out[str(lang)] = {
            "high": int(counts[score >= high].sum()),
            "medium": int(counts[(score >= low) & (score < high)].sum()),
            "low": int(counts[score < low].sum()),
        }
    return out
