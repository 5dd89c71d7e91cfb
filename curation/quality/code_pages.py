"""Code-related web pages: page scores, recall decisions and the annotation of recalled pages.

A page is recalled by its HTML code tags and/or by a code-content classifier's probability
(:func:`recall_method`); recalled pages are tiered together (group ``code_web``) and get their
re-parsed text (:func:`annotate_pages`). Scorers are passed in as functions: this module knows
nothing of models.

>>> score, lang = page_score("see:\\n" + "x = 1\\n" * 20, [("python", "x = 1\\n" * 20)], lambda code, lang: 5.0)
>>> round(score, 6), lang
(4.4, 'Python')
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from curation.quality.code_language import language_from_name
from curation.quality.code_tiers import N_BINS, POOLED, TierRule, assign_tiers, combined_score
from curation.schema import mark_kept

GROUP = "code_web"  #: recalled pages are tiered together (their language is often unknown)


def page_html(meta: Any) -> str | None:
    """The page HTML carried in ``meta`` (``{"html": …}``) or None."""
    if not isinstance(meta, str) or '"html"' not in meta:
        return None
    try:
        value = json.loads(meta).get("html")
    except (json.JSONDecodeError, AttributeError):
        return None
    return value if isinstance(value, str) and value.strip() else None


def page_score(text: str, blocks: list[tuple[str, str]], block_score: Callable[[str, str | None], float]) -> tuple[float, str | None]:
    """0–10 score of a code page and its main code language.

    80 %: ``block_score(code, language)`` of its code blocks (weighted by size); 20 %: explanation,
    i.e. prose around the code (a bare code dump or a page with a one-line snippet score lower).
    """
    blocks = [(lang, code) for lang, code in blocks if code.strip()]
    if not blocks:
        return float("nan"), None
    sizes = np.array([len(c) for _l, c in blocks], dtype=np.float64)
    langs = [language_from_name(lang) for lang, _c in blocks]
    scores = np.array([block_score(c, lg) for (_l, c), lg in zip(blocks, langs, strict=True)])
    code_share = float(sizes.sum()) / max(len(text), 1)
    explanation = float(np.clip(min(code_share / 0.1, (1.0 - code_share) / 0.2), 0.0, 1.0))
    known = [lg for lg in langs if lg]
    main = max(set(known), key=known.count) if known else None
    return 0.8 * float(np.average(scores, weights=sizes)) + 2.0 * explanation, main


def recall_method(s: pd.DataFrame, recall: Sequence[str], min_code_blocks: int, min_code_chars: int,
                  classifier_threshold: float) -> np.ndarray:
    """``html_tags`` | ``classifier`` | None per scored page (tags first when both apply).

    >>> s = pd.DataFrame({"pre_blocks": [2, 0, 0], "highlighted": [0, 0, 0], "code_chars": [90, 0, 0],
    ...                   "content_prob": [0.1, 0.9, 0.2], "score": [5.0, 4.0, 3.0]})
    >>> recall_method(s, ("html_tags", "classifier"), 1, 40, 0.7).tolist()
    ['html_tags', 'classifier', None]
    """
    tags = (s["pre_blocks"] + s["highlighted"] >= max(min_code_blocks, 1)) & (s["code_chars"] >= min_code_chars)
    clf = s["content_prob"] >= classifier_threshold
    out = np.full(len(s), None, dtype=object)
    if "classifier" in recall:
        out[clf.to_numpy()] = "classifier"
    if "html_tags" in recall:
        out[tags.to_numpy()] = "html_tags"
    out[s["score"].isna().to_numpy()] = None  # nothing code-like to keep after re-parsing
    return out


def tier_scores(s: pd.DataFrame, weights: Mapping[str, float]) -> np.ndarray:
    """The score pages are tiered by: page structure (``structural``) and classifier (``content``, ×10)."""
    frame = pd.DataFrame({"code_score_structural": s["score"], "code_score_content": s["content_prob"] * 10.0})
    return combined_score(frame, weights)


def page_histogram(s: pd.DataFrame, recalled: np.ndarray, weights: Mapping[str, float]) -> pd.DataFrame:
    """Score histogram of the recalled pages (one group)."""
    score = tier_scores(s, weights)
    score[pd.isna(recalled)] = np.nan
    return group_histogram(score)


def group_histogram(scores: np.ndarray) -> pd.DataFrame:
    """:func:`~curation.quality.code_tiers.score_histogram` of pages that are all of one group
    (:data:`GROUP`): the rows of ``GROUP`` and of the pooled ``*`` carry the same counts, so one
    ``bincount`` gives both (no group-by).

    >>> group_histogram(np.array([0.001, 0.005, np.nan, 9.999])).values.tolist()
    [['*', 0, 2], ['*', 999, 1], ['code_web', 0, 2], ['code_web', 999, 1]]
    """
    ok = ~np.isnan(scores)
    bins = np.clip(np.floor(scores[ok] * (N_BINS / 10.0) + 1e-6).astype(np.int64), 0, N_BINS - 1)
    counts = np.bincount(bins, minlength=N_BINS)
    at = np.flatnonzero(counts)
    labels = sorted([POOLED, GROUP])  # in the order a group-by on (language, bin) gives
    return pd.DataFrame({"language": pd.Series([lab for lab in labels for _ in at], dtype=object),
                         "bin": np.tile(at, len(labels)).astype(np.int64), "count": np.tile(counts[at], len(labels)).astype(np.int64)})


def annotate_pages(df: pd.DataFrame, s: pd.DataFrame | None, recalled: np.ndarray | None, weights: Mapping[str, float],
                   rule: TierRule, cuts: Mapping[str, tuple[float, float]], keep_original_max_chars: int) -> pd.DataFrame:
    """``df`` with the recall, tier, scores and re-parsed text of its recalled pages (``s``: their scores)."""
    df = df.copy()
    df["code_web_recall"] = pd.Series([None] * len(df), index=df.index, dtype=object)
    # code_quality's columns on code files pass through: only recalled pages get new values
    df["code_tier"] = df["code_tier"].astype(object) if "code_tier" in df.columns else pd.Series([None] * len(df), index=df.index, dtype=object)
    col = "code_score_structural"
    df[col] = pd.to_numeric(df[col], errors="coerce").astype("float64") if col in df.columns else np.nan
    df["code_web_score"] = np.nan
    df = mark_kept(df)
    if df.empty or s is None or recalled is None:
        return df
    s = s[~pd.isna(recalled)].assign(recall=recalled[~pd.isna(recalled)])
    if s.empty:
        return df
    s = s.assign(tier_score=tier_scores(s, weights)).set_index("doc_id")
    s["tier"] = assign_tiers(s["tier_score"].to_numpy(), np.full(len(s), GROUP, dtype=object), cuts, rule)
    for col in ("language", "meta", "text", "source"):
        df[col] = df[col].astype(object)  # all-null input columns read back as float
    pos = np.flatnonzero(df["doc_id"].isin(s.index).to_numpy())
    rows = s.loc[df["doc_id"].to_numpy()[pos]]
    # per page into plain arrays, set as columns once (a pandas cell write per page costs more than the page)
    obj = {c: df[c].to_numpy(dtype=object, copy=True) for c in ("code_web_recall", "code_tier", "language", "meta", "text")}
    flt = {c: df[c].to_numpy(dtype="float64", copy=True) for c in ("code_score_structural", "code_web_score")}
    tok_at, tok = [], []
    for i, recall, tier, score, tier_score, language, reparsed, n_tokens in zip(
            pos, *(rows[c].tolist() for c in ("recall", "tier", "score", "tier_score", "language", "reparsed", "n_tokens")),
            strict=True):
        obj["code_web_recall"][i], obj["code_tier"][i] = recall, tier
        flt["code_score_structural"][i], flt["code_web_score"][i] = score, tier_score
        if isinstance(language, str):
            obj["language"][i] = language
        if isinstance(reparsed, str) and reparsed:
            obj["meta"][i] = with_original(obj["meta"][i], obj["text"][i], keep_original_max_chars)
            obj["text"][i] = reparsed
            tok_at.append(i)
            tok.append(int(n_tokens))
    for c, a in obj.items():
        df[c] = pd.Series(a, index=df.index, dtype=object)
    for c, a in flt.items():
        df[c] = a
    if tok_at:
        df.iloc[tok_at, df.columns.get_loc("n_tokens")] = tok
    return df


def with_original(meta: Any, original: Any, max_chars: int) -> str:
    """``meta`` (JSON) with ``original_text`` when the original is at most ``max_chars`` long.

    >>> with_original('{"a": 1}', "old", 10)
    '{"a": 1, "original_text": "old"}'
    """
    data = {}
    if isinstance(meta, str) and meta:
        try:
            parsed = json.loads(meta)
            data = parsed if isinstance(parsed, dict) else {"meta": meta}
        except json.JSONDecodeError:
            data = {"meta": meta}
    if isinstance(original, str) and len(original) <= max_chars:
        data["original_text"] = original
    return json.dumps(data, sort_keys=True, ensure_ascii=False)
