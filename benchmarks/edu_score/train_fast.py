"""Train the CPU edu scorer ``classifiers/models/edu_fast``: a hashed n-gram regression distilled from
the default settings' scorer, on English and Chinese text.

    python benchmarks/edu_score/train_fast.py              # trains, prints the held-out figures, writes the model
    python benchmarks/edu_score/train_fast.py --dry-run    # figures only

Teacher: ``classifiers/models/edu_default`` (all-MiniLM-L6-v2 head + hashed n-grams), scored on the
corpus of :mod:`distil_data` (vectors embedded once, cached in ``/tmp/edu-teacher``). Targets:

- English: the teacher's score;
- Chinese: the teacher's order within each kind, on a scale it cannot give. The transformer is
  English-only and squeezes every Chinese text into 1.0–2.7, though it still orders it (technical
  notes above reviews, AUC 0.85). Per kind, target = anchor + stretch × (teacher − the kind's
  median): the stretch is how far apart the teacher puts English forum and documentation pages
  over how far apart it puts Chinese reviews and notes; reviews are anchored where it puts English
  forum pages (user-written opinion), the technical notes at 2.5, the middle of the medium band (the
  rubric counts computer science that explains concepts; the English reference set, and so the
  teacher, puts programming documentation with general web pages, which would leave every Chinese
  text in the low band). See :func:`zh_calibration`.

Student: one :class:`classifiers.linear.HashedLinearModel` (word 1–2-grams, character 3–5-grams, so
unspaced Chinese gets features; the default's own hashed member's features). The teacher is the
mean of a transformer head and that hashed member, so the student is the mean of the hashed member
and a new hashed model ``g`` trained on ``2 * target - hashed`` — for English that is the head's score,
the transformer's half of the teacher distilled into n-grams; for Chinese the rest of the calibrated
target. Both halves share the featurisation, so they are stored as one weight vector. Every kind of
document weighs alike in training. Last, a monotone piecewise-linear map (kind-weighted quantiles of
grouped out-of-fold student scores → those of the targets, training split) restores the teacher's
spread: a regression of a noisy target shrinks toward the mean, and a textbook page should reach 3
as often as under the teacher. Chinese gets a map of its own (fitted on Chinese rows, used for texts
whose letters are mostly Han): with ten note files, a held-out topic is scored well below the
targets of the topics seen. Every figure is on the held-out split (grouped by source document:
OpenStax module, arXiv abstract, web site, note file, review).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.stats import spearmanr

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import distil_data  # noqa: E402
from reference_data import HEADLINE_NEGATIVES, POSITIVE  # noqa: E402

from classifiers.edu_train import group_folds, roc_auc  # noqa: E402

OUT = ROOT / "classifiers" / "models" / "edu_fast"
EPOCHS = 20
LR = 1.0
KNOTS = 41
#: Texts whose letters are at least this share Han take the Chinese map (classifiers.edu.han_share).
HAN_SHARE = 0.3
BANDS = (2.0, 3.0)
#: Chinese kind → where its median goes: the teacher's median of an English kind, or a level of the rubric.
ZH_ANCHORS: dict[str, str | float] = {"zh_review": "en_forum", "zh_note": 2.5}
#: The stretch of the teacher's Chinese scores comes from this pair of English kinds (see :func:`zh_calibration`).
STRETCH = ("en_forum", "en_documentation")


def english_page_types(df: pd.DataFrame) -> pd.Series:
    """``en_<page type>`` for WCXB pages of the corpus (forum, documentation, …), else ''."""
    web = pd.read_parquet(distil_data.data_dir() / "web" / "web_docs.parquet", columns=["doc_id", "source", "page_type"])
    web = web[web["source"] == "wcxb"]
    types = dict(zip("web:" + web["doc_id"].astype(str), "en_" + web["page_type"].astype(str), strict=True))
    return df["doc_id"].map(types).fillna("")


def zh_calibration(df: pd.DataFrame, teacher: np.ndarray) -> dict:
    """Per Chinese kind: target = anchor + stretch * (teacher - the kind's teacher median), from the training split.

    The stretch is the teacher's: how far apart it puts English forum pages and English documentation
    pages, over how far apart it puts Chinese reviews and Chinese technical notes (~1.8: the English
    transformer squeezes Chinese). Reviews go where the teacher puts English forum pages; the notes —
    computer-science tutorials, which the rubric counts as science when they explain concepts — to the
    middle of the medium band (2.5), since the teacher has no Chinese scale of its own to read it from.
    """
    train = (df["split"] == "train").to_numpy()
    page = english_page_types(df)
    kind = df["kind"].replace({"zh_note_window": "zh_note"})
    med = {k: float(np.median(teacher[train & (kind == k).to_numpy()])) for k in ZH_ANCHORS}
    med |= {k: float(np.median(teacher[train & (page == k).to_numpy()])) for k in STRETCH}
    stretch = (med[STRETCH[1]] - med[STRETCH[0]]) / (med["zh_note"] - med["zh_review"])
    anchors = {k: med[v] if isinstance(v, str) else float(v) for k, v in ZH_ANCHORS.items()}
    return {"stretch": round(stretch, 4), "anchors": {k: round(v, 4) for k, v in anchors.items()},
            "medians_train": {k: round(v, 4) for k, v in med.items()}}


def targets(df: pd.DataFrame, teacher: np.ndarray) -> tuple[np.ndarray, dict]:
    info = zh_calibration(df, teacher)
    kind = df["kind"].replace({"zh_note_window": "zh_note"})
    y = teacher.copy()
    for k, anchor in info["anchors"].items():
        rows = (kind == k).to_numpy()
        y[rows] = np.clip(anchor + info["stretch"] * (teacher[rows] - info["medians_train"][k]), 0.0, 5.0)
    return y, {"zh_targets": info}


def kind_weights(kinds: pd.Series) -> np.ndarray:
    """Every kind weighs the same in total (Chinese windows count with their notes)."""
    k = kinds.replace({"zh_note_window": "zh_note"})
    w = k.map(1.0 / k.value_counts()).to_numpy()
    return w / w.mean()


def fit(texts: list[str], residual: np.ndarray, weights: np.ndarray, base):
    """The student before calibration: ``base`` (the default's hashed member) averaged with ``g`` fit on ``residual``."""
    from classifiers.linear import HashedLinearModel
    from classifiers.linear_train import fit_linear

    model = HashedLinearModel(n_features=base.n_features, word_ngrams=base.word_ngrams, char_ngrams=base.char_ngrams,
                              task="regression", max_chars=base.max_chars)
    g = fit_linear(model, texts, residual, epochs=EPOCHS, lr=LR, sample_weight=weights)
    g.weights = (0.5 * base.weights + 0.5 * g.weights).astype(np.float32)
    g.bias = 0.5 * base.bias + 0.5 * g.bias
    return g


def calibration(df: pd.DataFrame, y: np.ndarray, residual: np.ndarray, w: np.ndarray, base, k: int = 3) -> dict:
    """Knots of the monotone map: quantiles of grouped out-of-fold student scores → quantiles of the targets,
    on the English rows (the teacher's own scale)."""
    folds = group_folds(df["group"].tolist(), k, salt="edu-fast-calibration")
    oof = np.zeros(len(df))
    texts = df["text"].tolist()
    for f in range(k):
        test = folds == f
        m = fit([t for t, keep in zip(texts, ~test, strict=True) if keep], residual[~test], w[~test], base)
        oof[test] = m.predict([t for t, keep in zip(texts, test, strict=True) if keep])
    en = (df["lang"] == "en").to_numpy()
    return {"en": quantile_map(oof[en], y[en], w[en], "English training rows"),
            "zh": {**quantile_map(oof[~en], y[~en], w[~en], "Chinese training rows"), "min_share": HAN_SHARE}}


def quantile_map(oof: np.ndarray, y: np.ndarray, w: np.ndarray, rows: str) -> dict:
    """Knots at the kind-weighted quantiles (every kind weighs alike, as in training)."""
    q = np.linspace(0.0, 1.0, KNOTS)
    raw = np.maximum.accumulate(np.quantile(oof, q, weights=w, method="inverted_cdf"))
    raw = raw + np.arange(KNOTS) * 1e-6  # strictly increasing for np.interp
    score = np.quantile(y, q, weights=w, method="inverted_cdf")
    return {"raw": [round(float(x), 5) for x in raw], "score": [round(float(x), 5) for x in score],
            "fitted_on": f"kind-weighted quantiles of grouped 3-fold out-of-fold scores and of the targets, {rows}"}


def bands(s: np.ndarray) -> dict[str, float]:
    return {"low": round(float((s < BANDS[0]).mean()), 3), "medium": round(float(((s >= BANDS[0]) & (s < BANDS[1])).mean()), 3),
            "high": round(float((s >= BANDS[1]).mean()), 3)}


def report(df: pd.DataFrame, scores: dict[str, np.ndarray]) -> dict:
    """Held-out figures of every scorer in ``scores`` (arrays over the held-out rows of ``df``)."""
    kind = df["kind"].to_numpy()
    en = (df["lang"] == "en").to_numpy() & (kind != "textbook_page")
    zh = (df["lang"] == "zh").to_numpy()
    pos = np.isin(kind, sorted(POSITIVE))
    headline = en & (pos | np.isin(kind, sorted(HEADLINE_NEGATIVES)))
    note = np.isin(kind, ["zh_note", "zh_note_window"])
    out = {}
    for name, s in scores.items():
        fig = {
            "auc_en": round(roc_auc(pos[headline], s[headline]), 4),
            "auc_en_all_negatives": round(roc_auc(pos[en], s[en]), 4),
            "textbook_pages_at_or_above_3": round(float((s[kind == "textbook_page"] >= 3).mean()), 3),
            "general_web_at_or_above_3": round(float((s[kind == "general_web"] >= 3).mean()), 3),
            "auc_zh_notes_vs_reviews": round(roc_auc(note[zh], s[zh]), 4),
            "zh_note_bands": bands(s[kind == "zh_note"]), "zh_note_window_bands": bands(s[kind == "zh_note_window"]),
            "zh_review_bands": bands(s[kind == "zh_review"]),
            "mean_by_kind": {k: round(float(s[kind == k].mean()), 2) for k in sorted(set(kind))},
        }
        if name != "teacher":
            t = scores["teacher"]
            fig["spearman_vs_teacher_en"] = round(float(spearmanr(t[en], s[en]).statistic), 4)
            fig["spearman_vs_teacher_zh"] = round(float(spearmanr(t[zh], s[zh]).statistic), 4)
            fig["auc_vs_teacher_high_en"] = round(roc_auc(t[en] >= 3, s[en]), 4)
        out[name] = fig
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dry-run", action="store_true")
    ap.add_argument("--output", type=Path, default=OUT)
    ap.add_argument("--cache", type=Path, default=distil_data.CACHE)
    args = ap.parse_args(argv)
    df = distil_data.load_corpus()
    members = distil_data.teacher_members(df, args.cache)
    teacher = members["teacher"]
    y, zh_info = targets(df, teacher)
    residual = 2.0 * y - members["hashed"]
    train = (df["split"] == "train").to_numpy()
    tr = df[train & (df["kind"] != "textbook_page").to_numpy()].reset_index(drop=True)  # pages: the modules again, scored only
    w = kind_weights(tr["kind"])
    from classifiers.edu import get_edu_scorer
    from classifiers.linear import HashedLinearModel
    from classifiers.scorer import Batch

    base = HashedLinearModel.load(ROOT / "classifiers" / "models" / "edu_default" / "hashed")
    started = time.time()
    fit_rows = train & (df["kind"] != "textbook_page").to_numpy()
    cal = calibration(tr, y[fit_rows], residual[fit_rows], w, base)
    model = fit(tr["text"].tolist(), residual[fit_rows], w, base)
    seconds = time.time() - started
    ho = df[~train].reset_index(drop=True)
    old_fast = get_edu_scorer(ROOT / "classifiers" / "models" / "edu_default" / "hashed")
    t0 = time.time()
    model.card = {"calibration": cal["en"], "calibration_han": cal["zh"]}
    with tempfile.TemporaryDirectory() as tmp:
        model.save(tmp)
        student = get_edu_scorer(tmp).score(Batch(ho["text"].tolist()))
    rate = len(ho) / (time.time() - t0)
    scores = {"teacher": teacher[~train], "student": student, "previous_fast": old_fast.score(Batch(ho["text"].tolist())),
              "target": y[~train]}
    figures = report(ho, scores)
    data = {
        "source": "../shared/data (not copied into the repository): math/openstax_modules, math/stacks_project_chapters, "
        "math/arxiv_abstracts, web/web_docs, zh/zh_tech_notes, zh/zh_reviews",
        "teacher": "classifiers/models/edu_default (all-MiniLM-L6-v2 head + hashed n-grams), its score of each document",
        "chinese_targets": {**zh_info["zh_targets"], "anchored_to": ZH_ANCHORS, "stretch_from": STRETCH},
        "split": "held out by source document: the reference set's grouped 30 % (OpenStax module, Stacks chapter, arXiv "
        "abstract, web site), 3 of the 10 Chinese note files, 30 % of the reviews",
        "train_by_kind": tr["kind"].value_counts().sort_index().to_dict(),
        "licences": "OpenStax CC BY-NC-SA 4.0; Stacks Project GFDL 1.2; arXiv metadata CC0; CS-Notes CC BY-NC-SA 4.0; "
        "web pages and reviews: see ../shared/data/README.md",
    }
    card = {"name": "edu_fast", "version": "1",
            "description": "CPU edu scorer: hashed word/char n-gram regression distilled from the default scorer (transformer "
            "vectors + n-grams) on English and Chinese text: the default's hashed member averaged with n-grams fit to the "
            "rest of the teacher's score, then a monotone map onto the teacher's spread; no transformer needed.",
            "rubric": "edu (classifiers/rubrics/edu.md), on the default scorer's scale",
            "calibration": cal["en"], "calibration_han": cal["zh"],
            "data": data, "metrics": {"heldout": figures["student"]},
            "train_seconds": round(seconds, 1), "docs_per_second_here": round(rate, 1),
            "reproduce": "python benchmarks/edu_score/train_fast.py"}
    print(json.dumps({**zh_info, **figures}, indent=1))
    if not args.dry_run:
        model.card = {}
        model.save(args.output, **card)
        print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
