"""code_web's annotation of a partition builds each changed column as one array: the same frame,
column for column and dtype for dtype, as the annotation through an indexed scores frame (the
reference, kept here), on Dask-like (Arrow string) and plain (object, all-null float) inputs."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from curation.quality.code_pages import GROUP, annotate_pages, tier_scores, with_original
from curation.quality.code_tiers import TierRule, assign_tiers
from curation.schema import mark_kept


def _reference(df, s, recalled, weights, rule, cuts, keep_original_max_chars):
    df = df.copy()
    df["code_web_recall"] = pd.Series([None] * len(df), index=df.index, dtype=object)
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
        df[col] = df[col].astype(object)
    pos = np.flatnonzero(df["doc_id"].isin(s.index).to_numpy())
    rows = s.loc[df["doc_id"].to_numpy()[pos]]
    obj = {c: df[c].to_numpy(dtype=object, copy=True) for c in ("code_web_recall", "code_tier", "language", "meta", "text")}
    flt = {c: df[c].to_numpy(dtype="float64", copy=True) for c in ("code_score_structural", "code_web_score")}
    tok_at, tok = [], []
    for i, recall, tier, score, tier_score, language, reparsed, n_tokens in zip(
            pos, *(rows[c].tolist() for c in ("recall", "tier", "score", "tier_score", "language", "reparsed", "n_tokens")), strict=True):
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


ARROW = pd.StringDtype("pyarrow")
TEXTS = ["plain prose", "x = 1\nprint(x)", "中文 代码", "emoji 😀 page", "", "a" * 3000]


def _docs(n: int, seed: int, arrow: bool, code_cols: bool) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    s = (lambda v: pd.Series(v, dtype=ARROW)) if arrow else (lambda v: pd.Series(v, dtype=object))
    df = pd.DataFrame({
        "doc_id": s([f"d{i}" for i in range(n)]), "text": s([TEXTS[i % len(TEXTS)] for i in range(n)]),
        "source": s(["web" if i % 4 else "code" for i in range(n)]),
        "language": s([None if i % 3 else "Python" for i in range(n)]) if arrow else pd.Series([np.nan] * n),
        "n_tokens": rng.integers(0, 500, n),
        "meta": s([None if i % 5 == 0 else ('{"k": 1}' if i % 5 == 1 else ("not json" if i % 5 == 2 else '["x"]')) for i in range(n)]),
        "lang": s(["en"] * n), "quality_score_linear": rng.random(n),
    })
    if code_cols:
        df["code_score_structural"] = [np.nan if i % 2 else float(i % 10) for i in range(n)]
        df["code_tier"] = s([None if i % 2 else "high" for i in range(n)])
    return df


def _scores(df: pd.DataFrame, seed: int, drop_some: bool) -> tuple[pd.DataFrame, np.ndarray]:
    rng = np.random.default_rng(seed + 1)
    web = df[df["source"].astype(object) == "web"]
    ids = web["doc_id"].astype(object).tolist() + (["not-in-df"] if drop_some else [])
    n = len(ids)
    s = pd.DataFrame({
        "doc_id": ids, "content_prob": rng.random(n), "score": np.where(rng.random(n) < 0.2, np.nan, rng.uniform(0, 10, n)),
        "language": [None if i % 2 else "python" for i in range(n)],
        "reparsed": [None if i % 4 == 0 else ("" if i % 4 == 1 else f"re-parsed {i} ```py\nx\n``` 中文 😀") for i in range(n)],
        "n_tokens": rng.integers(-1, 300, n),
    })
    recalled = np.array([None if i % 3 == 0 else ("html_tags" if i % 3 == 1 else "classifier") for i in range(n)], dtype=object)
    return s, recalled


RULE = TierRule(high=80, low=10)


@pytest.mark.parametrize("arrow", [True, False])
@pytest.mark.parametrize("code_cols", [True, False])
@pytest.mark.parametrize("n", [0, 1, 7, 60])
@pytest.mark.parametrize("keep", [0, 20, 5000])
def test_same_frame_as_the_indexed_annotation(arrow: bool, code_cols: bool, n: int, keep: int) -> None:
    df = _docs(n, n, arrow, code_cols)
    s, recalled = _scores(df, n, drop_some=n % 2 == 1)
    weights = {"structural": 1.0, "content": 0.5 if n % 2 else 0.0}
    cuts = {GROUP: (3.0, 7.0)}
    got = annotate_pages(df, s, recalled, weights, RULE, cuts, keep)
    pd.testing.assert_frame_equal(got, _reference(df, s, recalled, weights, RULE, cuts, keep))


@pytest.mark.parametrize("arrow", [True, False])
def test_no_scores_none_recalled_and_ids_elsewhere(arrow: bool) -> None:
    df = _docs(9, 3, arrow, True)
    s, recalled = _scores(df, 3, drop_some=False)
    cuts = {GROUP: (float("-inf"), float("inf"))}
    cases = [(None, None), (s, None), (s, np.full(len(s), None, dtype=object)),
             (s.assign(doc_id=[f"x{i}" for i in range(len(s))]), recalled)]
    for scores, rec in cases:
        got = annotate_pages(df, scores, rec, {"structural": 1.0}, RULE, cuts, 100)
        pd.testing.assert_frame_equal(got, _reference(df, scores, rec, {"structural": 1.0}, RULE, cuts, 100))
