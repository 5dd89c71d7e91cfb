"""Code-related web pages: page scores, recall decisions and the annotation of recalled pages.

A page is recalled by its HTML code tags and/or by a code-content classifier's probability, with
code-like characters in the windows it calls code (:func:`recall_method`); recalled pages are tiered together (group ``code_web``) and get their
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
    return 0.8 * float(np.average(scores, weights=sizes)) + 2.0 * explanation, main_language(langs, sizes.tolist())


def main_language(langs: Sequence[str | None], sizes: Sequence[float]) -> str | None:
    """The language of most blocks; a tie goes to the one with more code characters, then to the
    one that comes first on the page (the same answer in every process: no set order involved).

    >>> main_language(["Python", "SQL", None, "SQL", "Python"], [10, 5, 99, 5, 10])
    'Python'
    >>> main_language(["SQL", "Python"], [10, 10]), main_language([None], [3])
    ('SQL', None)
    """
    blocks: dict[str, list[float]] = {}  # language → [blocks, characters, -first position]
    for i, (lang, size) in enumerate(zip(langs, sizes, strict=True)):
        if lang:
            row = blocks.setdefault(lang, [0, 0.0, -i])
            row[0] += 1
            row[1] += size
    return max(blocks, key=lambda lang: tuple(blocks[lang])) if blocks else None


#: bytes that are not code-like characters: ASCII controls, space and DEL (what is left is ``[!-~]``)
_NOT_CODE_LIKE = bytes(range(33)) + b"\x7f"


def code_evidence(windows: Sequence[str], probs: Sequence[float], threshold: float) -> tuple[int, int]:
    """The code evidence a classifier-only recall needs: the code-like characters (ASCII letters,
    digits and punctuation, ``[!-~]``) in the windows whose probability is at least ``threshold``,
    and the lines of those windows that hold any. Source code is written in them whatever the
    language of its comments; CJK, Cyrillic, full-width punctuation and whitespace do not count.

    >>> code_evidence(["x = f(1)\\n很好", "很好，推荐！", "for i in range(3): print(i)"], [0.9, 0.9, 0.2], 0.7)
    (6, 1)
    """
    chars = lines = 0
    for w, q in zip(windows, probs, strict=True):
        if q >= threshold:
            for line in w.split("\n"):
                n = len(line.encode("ascii", "ignore").translate(None, _NOT_CODE_LIKE))
                chars += n
                lines += n > 0
    return chars, lines


def enough_evidence(chars: Any, lines: Any, min_chars: float) -> Any:
    """:func:`code_evidence` that a classifier-only recall accepts: ``min_chars`` code-like
    characters, or half as many on two lines or more (a one-line text needs them all).

    >>> enough_evidence(np.array([45, 28, 28, 0]), np.array([1, 4, 1, 0]), 40).tolist()
    [True, True, False, False]
    """
    return (chars >= min_chars) | ((chars >= min_chars / 2) & (lines >= 2))


#: the share of a window's non-space characters that must be code-like for it to stand in for code
CODE_SHARE = 0.5


def code_windows(windows: Sequence[str], probs: Sequence[float], threshold: float, min_chars: int) -> list[str]:
    """The windows that stand in for code blocks on a page without any: probability at least
    ``threshold`` and, unless ``min_chars`` is 0 (the probability alone), the recall's code evidence
    on the window alone (:func:`enough_evidence`) with code-like characters at least
    :data:`CODE_SHARE` of its non-space characters. The model's probability is not calibrated on
    prose outside English: Chinese sentences that name commands and APIs hold code-like characters
    enough for the evidence, but not half of their characters.

    >>> zh = "在 B+ Tree 中，节点中的 key 从左到右非递减排列，且不为 null\\n在叶子节点上二分查找，找出 key 对应的 data"
    >>> code_windows(["x = f(1)\\ny = g(x, 2) + h[0] * 3", zh, "x = 1"], [0.9, 0.9, 0.4], 0.5, 40)
    ['x = f(1)\\ny = g(x, 2) + h[0] * 3']
    >>> code_windows([zh], [0.9], 0.5, 0)  # 0: the probability alone
    ['在 B+ Tree 中，节点中的 key 从左到右非递减排列，且不为 null\\n在叶子节点上二分查找，找出 key 对应的 data']
    >>> code_evidence([zh], [0.9], 0.5)  # the recall's evidence alone would take it
    (20, 2)
    """
    out = []
    for w, q in zip(windows, probs, strict=True):
        if q >= threshold:
            chars, lines = code_evidence([w], [q], threshold)
            if min_chars <= 0 or (enough_evidence(chars, lines, min_chars) and chars >= CODE_SHARE * len("".join(w.split()))):
                out.append(w)
    return out


#: what :func:`recall_method` reads of the scores
RECALL_COLUMNS = ("pre_blocks", "highlighted", "code_chars", "content_prob", "content_code_chars", "content_code_lines",
                  "score")


def recall_method(s: pd.DataFrame | Mapping[str, Any], recall: Sequence[str], min_code_blocks: int, min_code_chars: int,
                  classifier_threshold: float, classifier_min_code_chars: int = 0) -> np.ndarray:
    """``html_tags`` | ``classifier`` | None per scored page (tags first when both apply); ``s``: the
    scores, a frame or a mapping of :data:`RECALL_COLUMNS` to arrays.

    The classifier recalls a page whose probability reaches ``classifier_threshold`` and whose
    windows at that probability hold ``classifier_min_code_chars`` code-like characters, or half
    as many on two lines or more (``content_code_chars``, ``content_code_lines``: :func:`code_evidence`).

    >>> s = pd.DataFrame({"pre_blocks": [2, 0, 0, 0, 0], "highlighted": [0] * 5, "code_chars": [90, 0, 0, 0, 0],
    ...                   "content_prob": [0.1, 0.9, 0.2, 0.9, 0.9], "content_code_chars": [0, 120, 0, 2, 28],
    ...                   "content_code_lines": [0, 4, 0, 1, 4], "score": [5.0, 4.0, 3.0, 4.0, 4.0]})
    >>> recall_method(s, ("html_tags", "classifier"), 1, 40, 0.7, 40).tolist()
    ['html_tags', 'classifier', None, None, 'classifier']
    """
    def col(name: str) -> np.ndarray:  # a frame's column or a plain array (score_frame's)
        return np.asarray(s[name])

    tags = (col("pre_blocks") + col("highlighted") >= max(min_code_blocks, 1)) & (col("code_chars") >= min_code_chars)
    clf = col("content_prob") >= classifier_threshold
    if classifier_min_code_chars > 0:
        clf &= enough_evidence(col("content_code_chars"), col("content_code_lines"), classifier_min_code_chars)
    score = col("score")
    out = np.full(len(score), None, dtype=object)
    if "classifier" in recall:
        out[clf] = "classifier"
    if "html_tags" in recall:
        out[tags] = "html_tags"
    out[pd.isna(score)] = None  # nothing code-like to keep after re-parsing
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
    """``df`` with the recall, tier, scores and re-parsed text of its recalled pages (``s``: their
    scores, ``recalled``: :func:`recall_method` of each). Each changed column is built as one
    array (the recalled pages' values put in by position) and set once."""
    df = df.copy()
    n = len(df)
    recall_col = np.full(n, None, dtype=object)
    # code_quality's columns on code files pass through: only recalled pages get new values
    tier_col = df["code_tier"].astype(object).to_numpy(copy=True) if "code_tier" in df.columns else np.full(n, None, dtype=object)
    col = "code_score_structural"
    structural = pd.to_numeric(df[col], errors="coerce").to_numpy(dtype="float64", copy=True) if col in df.columns else np.full(n, np.nan)
    web_score = np.full(n, np.nan)
    take = np.flatnonzero(~pd.isna(recalled)) if n and s is not None and recalled is not None else np.zeros(0, dtype=np.int64)
    strings: dict[str, np.ndarray] = {}
    tok_at, tok = [], []
    if len(take):
        ids = s["doc_id"].to_numpy()[take]
        row_of = {doc_id: k for k, doc_id in enumerate(ids.tolist())}
        # the recalled rows taken before converting (not every page's re-parsed text made a Python object)
        page = {c: s[c].iloc[take].to_numpy() for c in ("score", "content_prob", "language", "reparsed", "n_tokens")}
        tier_score = tier_scores(pd.DataFrame({"score": page["score"], "content_prob": page["content_prob"]}), weights)
        tier = assign_tiers(tier_score, np.full(len(take), GROUP, dtype=object), cuts, rule)
        for c in ("language", "meta", "text", "source"):
            strings[c] = df[c].astype(object).to_numpy(copy=True)  # all-null input columns read back as float
        pos = np.flatnonzero(df["doc_id"].isin(ids).to_numpy())
        rows = [row_of[doc_id] for doc_id in df["doc_id"].to_numpy()[pos].tolist()]
        for i, k in zip(pos.tolist(), rows, strict=True):
            recall_col[i], tier_col[i] = recalled[take[k]], tier[k]
            structural[i], web_score[i] = page["score"][k], tier_score[k]
            language, reparsed = page["language"][k], page["reparsed"][k]
            if isinstance(language, str):
                strings["language"][i] = language
            if isinstance(reparsed, str) and reparsed:
                strings["meta"][i] = with_original(strings["meta"][i], strings["text"][i], keep_original_max_chars)
                strings["text"][i] = reparsed
                tok_at.append(i)
                tok.append(int(page["n_tokens"][k]))
    df["code_web_recall"] = pd.Series(recall_col, index=df.index, dtype=object)
    df["code_tier"] = pd.Series(tier_col, index=df.index, dtype=object)
    df["code_score_structural"] = structural
    df["code_web_score"] = web_score
    df = mark_kept(df)
    for c, a in strings.items():
        df[c] = pd.Series(a, index=df.index, dtype=object)
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
