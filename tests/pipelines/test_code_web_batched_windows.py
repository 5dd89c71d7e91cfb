"""code_web scores all windows of a partition in one model call and reuses the windows predict
scored: pinned to the per-page reference (the stage before the batching, kept here), bit for bit."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from classifiers.code_content import CodeContentClassifier, all_windows, sample_windows, windows
from curation.quality.code_pages import code_evidence, code_windows, page_html, page_score
from curation.quality.html_code import code_blocks, code_tag_stats, parse, reparse_html
from curation.tokens import count_tokens
from pipelines.stages.code_web import CODE_WINDOW, SCORE_COLUMNS, CodeWebConfig, block_score, score_frame
from pipelines.stages.code_web_pages import TAG_COLUMNS


def reference_windows(text: str, window_lines: int = 12, max_chars: int = 1500, max_windows: int = 64, min_chars: int = 0) -> list[str]:
    lines = [ln for ln in text.split("\n") if ln.strip()]
    out = ["\n".join(lines[i : i + window_lines])[:max_chars] for i in range(0, len(lines), window_lines)]
    if min_chars:
        long_enough = [w for w in out if len(w) >= min_chars]
        out = long_enough or (["\n".join(lines)[:max_chars]] if lines else [])
    if len(out) > max_windows:
        idx = np.linspace(0, len(out) - 1, max_windows).astype(int)
        out = [out[i] for i in idx]
    return out


def reference_predict(clf: CodeContentClassifier, texts: list[str]) -> np.ndarray:
    per_doc = [reference_windows(t or "", clf.window_lines, min_chars=clf.min_chars) for t in texts]
    flat = [w for ws in per_doc for w in ws]
    probs = clf.predict_windows(flat)
    out = np.zeros(len(texts), dtype=np.float64)
    i = 0
    for d, ws in enumerate(per_doc):
        if ws:
            out[d] = float(probs[i : i + len(ws)].max())
        i += len(ws)
    return out


def reference_score_frame(df: pd.DataFrame, cfg: CodeWebConfig, tokenizer: str) -> pd.DataFrame:
    """score_frame without ingest's tags, one model call and one token count per recalled page."""
    scope = df[df["source"].isin(cfg.sources)]
    texts = [t if isinstance(t, str) else "" for t in scope["text"].tolist()]
    clf = CodeContentClassifier(cfg.classifier_model)
    probs = reference_predict(clf, texts) if texts else np.zeros(0)
    per_page = [reference_windows(t, clf.window_lines, min_chars=clf.min_chars) for t in texts]
    evidence = np.array([code_evidence(ws, clf.predict_windows(ws) if ws else np.zeros(0), cfg.classifier_threshold)
                         for ws in per_page], dtype="int64").reshape(-1, 2)
    s = pd.DataFrame({"doc_id": scope["doc_id"].to_numpy(), "content_prob": probs.astype("float64"),
                      "content_code_chars": evidence[:, 0], "content_code_lines": evidence[:, 1],
                      "reparsed": None, "score": np.nan, "language": None, "n_tokens": -1})
    roots = {}
    for col in TAG_COLUMNS:
        s[col] = 0
    s["has_html"] = False
    for i, (doc_id, meta) in enumerate(zip(scope["doc_id"], scope["meta"], strict=True)):
        html = page_html(meta)
        root = parse(html) if html else None
        stats = code_tag_stats(None, root)
        s.iloc[i, [s.columns.get_loc(c) for c in ["has_html", *TAG_COLUMNS]]] = [root is not None, stats.pre_blocks,
                                                                                 stats.code_elements, stats.highlighted, stats.code_chars]
        if html:
            roots[doc_id] = root
    take = ~pd.isna(cfg.recalled(s.assign(score=0.0)))
    text_of = dict(zip(scope["doc_id"].tolist(), texts, strict=True))
    ids = s["doc_id"].tolist()
    reparsed, language = s["reparsed"].to_numpy(dtype=object, copy=True), s["language"].to_numpy(dtype=object, copy=True)
    score, n_tokens = s["score"].to_numpy(dtype="float64", copy=True), s["n_tokens"].to_numpy(dtype="int64", copy=True)
    for i in np.flatnonzero(take):
        doc_id = ids[i]
        root, text = roots.get(doc_id), text_of[doc_id]
        new_text = reparse_html(None, root) if (root is not None and cfg.reparse) else ""
        reparsed[i] = new_text or None
        base = new_text or text
        blocks = [b for b in code_blocks(base) if b[1].strip()]  # a page without a re-parse: its text's fences
        if not blocks:
            ws = reference_windows(base, clf.window_lines, max_windows=10_000, min_chars=clf.min_chars)
            p = clf.predict_windows(ws) if ws else np.zeros(0)
            blocks = [("", w) for w in code_windows(ws, p, CODE_WINDOW, cfg.classifier_min_code_chars)]
        score[i], language[i] = page_score(base, blocks, block_score)
        if new_text:
            n_tokens[i] = int(count_tokens([new_text], tokenizer)[0])
    s["reparsed"], s["language"] = (pd.Series(a, index=s.index, dtype=object) for a in (reparsed, language))
    s["score"], s["n_tokens"] = score, n_tokens
    s["html_parsed"] = s["doc_id"].isin(roots.keys()).to_numpy()
    return s[SCORE_COLUMNS]


CODE_LINES = ["def f(x):", "    return x * 2", "for i in range(10):", "    print(f(i))", "if x == 1:", "    y = {'a': 1}",
              "import os", "class A:", "    pass", "while True: break"]
PROSE_LINES = ["The quick brown fox jumps over the lazy dog.", "We went to the market on Sunday morning.",
               "This article explains how the new policy works.", "Contact us for more information.", "Home", "Next"]


def _text(rng: np.random.Generator, n_lines: int, code_share: float) -> str:
    out = []
    for _ in range(n_lines):
        pool = CODE_LINES if rng.random() < code_share else PROSE_LINES
        out.append(pool[int(rng.integers(len(pool)))] + (" " * int(rng.integers(3))))
        if rng.random() < 0.1:
            out.append("")
    return "\n".join(out)


def _frame(seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    for k in range(40):
        share = float(rng.choice([0.0, 0.3, 0.8, 1.0]))
        n_lines = int(rng.choice([0, 3, 20, 200, 1200]))  # 1200 lines: over 64 windows (sampled)
        text = _text(rng, n_lines, share)
        meta = None
        if k % 3 == 0:  # HTML with and without code markup
            code = "\n".join(CODE_LINES[: int(rng.integers(1, 10))])
            body = f"<pre><code class='language-python'>{code}</code></pre>" if k % 2 else f"<p>{text[:2000]}</p>"
            meta = json.dumps({"html": f"<html><body><nav>Menu</nav><p>Intro text.</p>{body}</body></html>"})
        rows.append({"doc_id": f"d{k:03d}", "text": text if k % 17 else None, "source": "web" if k % 11 else "code", "meta": meta})
    return pd.DataFrame(rows)


@pytest.mark.parametrize("text", ["", "a", "x\n\ny", "\n".join(f"line {i} = {i} * 2" for i in range(2000)),
                                  "\n".join(["short"] * 40), "\n".join(CODE_LINES * 30)])
@pytest.mark.parametrize("max_windows", [1, 64, 10_000])
def test_windows_are_the_reference(text: str, max_windows: int) -> None:
    for min_chars in (0, 40):
        ref = reference_windows(text, 12, max_windows=max_windows, min_chars=min_chars)
        assert windows(text, 12, max_windows=max_windows, min_chars=min_chars) == ref
        assert sample_windows(all_windows(text, 12, min_chars=min_chars), max_windows) == ref


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_predict_pages_is_the_per_page_reference_bit_for_bit(seed: int) -> None:
    clf = CodeContentClassifier()
    texts = [t if isinstance(t, str) else "" for t in _frame(seed)["text"]]
    ref = reference_predict(clf, texts)
    assert clf.predict(texts).tobytes() == ref.tobytes()
    probs, parts = clf.predict_pages([sample_windows(all_windows(t, clf.window_lines, min_chars=clf.min_chars)) for t in texts])
    assert probs.tobytes() == ref.tobytes()
    for t, part in zip(texts, parts, strict=True):  # a page's windows score as they do on their own
        ws = reference_windows(t, clf.window_lines, min_chars=clf.min_chars)
        assert part.tobytes() == clf.predict_windows(ws).tobytes()


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
@pytest.mark.parametrize("reparse", [True, False])
def test_score_frame_is_the_per_page_reference(seed: int, reparse: bool) -> None:
    df = _frame(seed)
    cfg = CodeWebConfig(reparse=reparse, classifier_threshold=0.3)
    got = score_frame(df, cfg, "whitespace")
    ref = reference_score_frame(df, cfg, "whitespace")
    assert got["reparsed"].notna().any() or not reparse
    assert (~pd.isna(cfg.recalled(got))).sum() >= 5  # recalled pages: the comparison is not vacuous
    pd.testing.assert_frame_equal(got, ref, check_exact=True)
    assert got["score"].to_numpy().tobytes() == ref["score"].to_numpy().tobytes()
