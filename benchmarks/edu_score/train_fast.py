"""Train the CPU edu scorer ``classifiers/models/edu_fast``: a hashed n-gram regression distilled from
the default settings' scorer, on English and Chinese text.

    python benchmarks/edu_score/train_fast.py              # trains, prints the held-out figures, writes the model
    python benchmarks/edu_score/train_fast.py --dry-run    # figures only

Teacher: ``classifiers/models/edu_default`` (all-MiniLM-L6-v2 head + hashed n-grams), scored on the
corpus of :mod:`distil_data` (vectors embedded once, cached in ``/tmp/edu-teacher``). Targets:

- English: the teacher's score;
- Chinese: the teacher's score put on the scale the teacher uses for the same kinds of English
  page. The transformer is English-only and squeezes every Chinese text into 1.3–2.1, though it
  still orders it (technical notes above reviews); a linear map sends the median Chinese review to
  the median English forum page (user-written opinion) and the median Chinese technical note to
  the median English documentation page (WCXB ``documentation``: Django, PostgreSQL, MDN …),
  both medians taken on the training split. The order within Chinese stays the teacher's.

Student: :class:`classifiers.linear.HashedLinearModel` (word 1–2-grams and character n-grams, so
unspaced Chinese gets features), trained with every kind of document weighted alike, then
calibrated by one linear map fitted on grouped out-of-fold predictions (a regression of a noisy
target shrinks toward the mean; the map restores the teacher's spread, so a textbook page
reaches 3 as often as under the teacher). Every figure is on the held-out split (grouped by
source document: OpenStax module, arXiv abstract, web site, note file, review).
"""

from __future__ import annotations

import argparse
import json
import sys
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
FEATURES = 2**18
WORD_NGRAMS = (1, 2)
CHAR_NGRAMS = (2, 4)
EPOCHS = 10
BANDS = (2.0, 3.0)
#: Chinese kind → the English kind whose teacher median it is mapped to.
ZH_ANCHORS = {"zh_review": "en_forum", "zh_note": "en_documentation"}


def english_page_types(df: pd.DataFrame) -> pd.Series:
    """``en_<page type>`` for WCXB pages of the corpus (forum, documentation, …), else ''."""
    web = pd.read_parquet(distil_data.data_dir() / "web" / "web_docs.parquet", columns=["doc_id", "source", "page_type"])
    web = web[web["source"] == "wcxb"]
    types = dict(zip("web:" + web["doc_id"].astype(str), "en_" + web["page_type"].astype(str), strict=True))
    return df["doc_id"].map(types).fillna("")


def zh_calibration(df: pd.DataFrame, teacher: np.ndarray) -> tuple[float, float, dict]:
    """(a, b) with target = a + b * teacher for Chinese rows, from training-split medians."""
    train = (df["split"] == "train").to_numpy()
    page = english_page_types(df)
    med = {}
    for zh_kind, en_kind in ZH_ANCHORS.items():
        med[zh_kind] = float(np.median(teacher[train & (df["kind"] == zh_kind).to_numpy()]))
        med[en_kind] = float(np.median(teacher[train & (page == en_kind).to_numpy()]))
    (lo_zh, hi_zh), (lo_en, hi_en) = ([med[k] for k in ZH_ANCHORS], [med[v] for v in ZH_ANCHORS.values()])
    b = (hi_en - lo_en) / (hi_zh - lo_zh)
    return lo_en - b * lo_zh, b, {k: round(v, 3) for k, v in med.items()}


def targets(df: pd.DataFrame, teacher: np.ndarray) -> tuple[np.ndarray, dict]:
    a, b, medians = zh_calibration(df, teacher)
    zh = (df["lang"] == "zh").to_numpy()
    y = teacher.copy()
    y[zh] = np.clip(a + b * teacher[zh], 0.0, 5.0)
    return y, {"zh_map": {"intercept": round(a, 4), "slope": round(b, 4)}, "medians_train": medians}


def kind_weights(kinds: pd.Series) -> np.ndarray:
    """Every kind weighs the same in total (Chinese windows count with their notes)."""
    k = kinds.replace({"zh_note_window": "zh_note"})
    w = k.map(1.0 / k.value_counts()).to_numpy()
    return w / w.mean()


def fit(texts: list[str], y: np.ndarray, weights: np.ndarray, seed: int = 0):
    from classifiers.linear import HashedLinearModel
    from classifiers.linear_train import fit_linear

    model = HashedLinearModel(n_features=FEATURES, word_ngrams=WORD_NGRAMS, char_ngrams=CHAR_NGRAMS, task="regression")
    return fit_linear(model, texts, y, epochs=EPOCHS, sample_weight=weights, seed=seed)


def calibration(df: pd.DataFrame, y: np.ndarray, w: np.ndarray, k: int = 3) -> tuple[float, float]:
    """Linear map of the student's raw output onto the target, fitted on grouped out-of-fold predictions."""
    folds = group_folds(df["group"].tolist(), k, salt="edu-fast-calibration")
    oof = np.zeros(len(df))
    texts = df["text"].tolist()
    for f in range(k):
        test = folds == f
        m = fit([t for t, keep in zip(texts, ~test, strict=True) if keep], y[~test], w[~test])
        oof[test] = m.predict([t for t, keep in zip(texts, test, strict=True) if keep])
    design = np.column_stack([oof, np.ones(len(oof))]) * np.sqrt(w)[:, None]
    slope, intercept = np.linalg.lstsq(design, y * np.sqrt(w), rcond=None)[0]
    return float(intercept), float(slope)


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
    teacher = distil_data.teacher_scores(df, args.cache)
    y, zh_info = targets(df, teacher)
    train = (df["split"] == "train").to_numpy()
    tr = df[train].reset_index(drop=True)
    w = kind_weights(tr["kind"])
    started = time.time()
    a, b = calibration(tr, y[train], w)
    model = fit(tr["text"].tolist(), y[train], w)
    model.weights = (model.weights * b).astype(np.float32)
    model.bias = a + b * model.bias
    seconds = time.time() - started
    from classifiers.edu import get_edu_scorer
    from classifiers.scorer import Batch

    ho = df[~train].reset_index(drop=True)
    old_fast = get_edu_scorer(ROOT / "classifiers" / "models" / "edu_default" / "hashed")
    t0 = time.time()
    student = np.clip(model.predict(ho["text"].tolist()), 0.0, 5.0)
    rate = len(ho) / (time.time() - t0)
    scores = {"teacher": teacher[~train], "student": student, "previous_fast": old_fast.score(Batch(ho["text"].tolist())),
              "target": y[~train]}
    figures = report(ho, scores)
    data = {
        "source": "../shared/data (not copied into the repository): math/openstax_modules, math/stacks_project_chapters, "
        "math/arxiv_abstracts, web/web_docs, zh/zh_tech_notes, zh/zh_reviews",
        "teacher": "classifiers/models/edu_default (all-MiniLM-L6-v2 head + hashed n-grams), its score of each document",
        "chinese_targets": {**zh_info, "anchors": ZH_ANCHORS},
        "split": "held out by source document: the reference set's grouped 30 % (OpenStax module, Stacks chapter, arXiv "
        "abstract, web site), 3 of the 10 Chinese note files, 30 % of the reviews",
        "train_by_kind": tr["kind"].value_counts().sort_index().to_dict(),
        "licences": "OpenStax CC BY-NC-SA 4.0; Stacks Project GFDL 1.2; arXiv metadata CC0; CS-Notes CC BY-NC-SA 4.0; "
        "web pages and reviews: see ../shared/data/README.md",
    }
    card = {"name": "edu_fast", "version": "1",
            "description": "CPU edu scorer: hashed word/char n-gram regression distilled from the default scorer (transformer "
            "vectors + n-grams) on English and Chinese text; no transformer needed.",
            "rubric": "edu (classifiers/rubrics/edu.md), on the default scorer's scale",
            "calibration": {"intercept": round(a, 4), "slope": round(b, 4)},
            "data": data, "metrics": {"heldout": figures["student"]},
            "train_seconds": round(seconds, 1), "docs_per_second_here": round(rate, 1),
            "reproduce": "python benchmarks/edu_score/train_fast.py"}
    print(json.dumps({"calibration": [a, b], **zh_info, **figures}, indent=1))
    if not args.dry_run:
        model.card = {}
        model.save(args.output, **card)
        print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
