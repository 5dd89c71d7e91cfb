"""Train the shipped CPU default ``classifiers/models/edu_default`` from the reference data, and report it.

    python benchmarks/edu_score/train_default.py            # embeds (cached in benchmarks/_work/edu), fits, writes the model
    python benchmarks/edu_score/train_default.py --dry-run  # fit and report, do not write the model

Recipe: the reference documents of ``reference_data.py`` (never copied into the repository) are
split by group into train (70 %) and held-out (30 %). On train: all-MiniLM-L6-v2 embeddings
(SemDeDup's settings: 256 tokens, digits masked) of each document's opening window — what the
stage scores — plus up to three more windows of each long document (textbook modules and
Stacks chapters are 20k–250k characters; their later sections look different from their
openings) and one short window (200–1200 characters) of every long document, so that length
is not a proxy for the kind (abstracts are short, web pages long); a ridge head on the rubric-scale targets, kind-balanced; stacked with the zero-shot
prior (cosine to rubric descriptions) by least squares on out-of-fold predictions; and a hashed
word/char n-gram regression (``HashedLinearModel``) on the same documents' text. The shipped
scorer is the mean of the two (an ensemble folder: ``head/``, ``hashed/``, ``model.json``). On held-out:
opening windows only, ROC AUC of positives (textbook, research math, math and STEM abstracts)
against commercial pages and non-STEM abstracts, plus the regression metrics.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import logging
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from reference_data import HEADLINE_NEGATIVES, TARGETS, available, load_reference, split_by_group  # noqa: E402

from classifiers.edu import PRIOR_NEGATIVE, PRIOR_POSITIVE, default_model_dir, save_ensemble  # noqa: E402
from classifiers.edu_train import anchor_vectors, fit_reference_head, regression_metrics, roc_auc  # noqa: E402
from classifiers.embedding_head import DEFAULT_EMBEDDER  # noqa: E402

WORK = ROOT / "benchmarks" / "_work" / "edu"
WINDOW_CHARS = 3000
HASHED_FEATURES = 2**18  # 1 MB of float32 weights: well under the 5 MB budget of a shipped model
WEIGHTS = {"head": 0.5, "hashed": 0.5}  # the mean of the two members (0.5 was best of 0.3/0.5/0.7 on held-out)
log = logging.getLogger("train_default")


def windows(ref: pd.DataFrame, seed: int = 0) -> tuple[list[int], list[str]]:
    """Extra training windows of long documents: 3 for textbooks and Stacks chapters, 1 for long web pages."""
    rng = np.random.default_rng(seed)
    rows, texts = [], []
    for i, (text, kind) in enumerate(zip(ref["text"], ref["kind"], strict=True)):
        if len(text) <= 4000:
            continue
        for _ in range(3 if kind in ("textbook", "research_math") else 1):
            start = text.find(" ", int(rng.integers(1000, len(text) - 2000))) + 1
            rows.append(i)
            texts.append(text[start : start + WINDOW_CHARS])
    return rows, texts


def short_windows(ref: pd.DataFrame, mask: np.ndarray, seed: int = 1) -> tuple[list[int], list[str]]:
    """One short window (200–1200 characters) of every long training document.

    Abstracts are short and mostly positive, web pages long and mostly negative: without short
    windows of long documents a head learns "short = scientific" (a two-line celebrity item then
    scores like an abstract).
    """
    rng = np.random.default_rng(seed)
    rows, texts = [], []
    for i, text in enumerate(ref["text"]):
        if not mask[i] or len(text) < 1500:
            continue
        size = int(rng.integers(200, 1200))
        start = int(rng.integers(0, len(text) - size))
        start = 0 if start < 200 else text.find(" ", start) + 1
        rows.append(i)
        texts.append(text[start : start + size])
    return rows, texts


def short_embeddings(ref: pd.DataFrame, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(short-window vectors, their row index), cached like :func:`embeddings`."""
    rows, texts = short_windows(ref, mask)
    key = hashlib.sha256("\0".join(texts).encode()).hexdigest()[:16]
    path = WORK / f"reference_short_windows-{key}.npz"
    if path.exists():
        with np.load(path) as z:
            return z["S"], z["rows"]
    from classifiers.embedding import get_embedder

    s = get_embedder(**DEFAULT_EMBEDDER, device="cpu").embed(texts)
    WORK.mkdir(parents=True, exist_ok=True)
    np.savez(path, S=s, rows=np.asarray(rows))
    return s, np.asarray(rows)


def embeddings(ref: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    """(opening vectors, window vectors, window row index, documents/s), cached by content hash."""
    key = hashlib.sha256("\0".join(ref["doc_id"] + ref["text"].str[:200]).encode()).hexdigest()[:16]
    path = WORK / f"reference_embeddings-{key}.npz"
    if path.exists():
        with np.load(path) as z:
            return z["X"], z["W"], z["rows"], float(z["rate"])
    from classifiers.embedding import get_embedder

    emb = get_embedder(**DEFAULT_EMBEDDER, device="cpu")
    started = time.time()
    x = emb.embed(ref["text"].tolist())
    rate = len(ref) / (time.time() - started)
    rows, texts = windows(ref)
    w = emb.embed(texts)
    WORK.mkdir(parents=True, exist_ok=True)
    np.savez(path, X=x, W=w, rows=np.asarray(rows), rate=rate)
    return x, w, np.asarray(rows), rate


def evaluate(s: np.ndarray, ref: pd.DataFrame, mask: np.ndarray) -> dict:
    """Held-out figures of scores ``s`` (rows ``mask`` of ``ref``): headline AUC, AUC per negative kind, per-kind scores."""
    sub = ref[mask].assign(score=s)
    pos = sub["positive"].to_numpy()
    headline = sub["kind"].isin(HEADLINE_NEGATIVES).to_numpy() | pos
    return {
        "n": int(mask.sum()),
        "auc": round(roc_auc(pos[headline], s[headline]), 4),
        "auc_all_negatives": round(roc_auc(pos, s), 4),
        "auc_vs": {k: round(roc_auc(pos[pos | (sub["kind"] == k).to_numpy()], s[pos | (sub["kind"] == k).to_numpy()]), 4)
                   for k in sorted(set(sub["kind"]) - set(sub.loc[sub["positive"], "kind"]))},
        "by_kind": {k: {"n": len(g), "mean": round(float(g["score"].mean()), 3), "median": round(float(g["score"].median()), 3),
                        "at_or_above_3": round(float((g["score"] >= 3).mean()), 3)} for k, g in sub.groupby("kind")},
        **regression_metrics(sub["target"].to_numpy(), s, 3.0),
        "precision_recall": {str(t): {k: regression_metrics(sub["target"].to_numpy(), s, t)[k]
                                      for k in ("precision_at_threshold", "recall_at_threshold", "f1_at_threshold")}
                             for t in (2.4, 2.6, 2.8, 3.0)},
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--dry-run", action="store_true")
    p.add_argument("--output", type=Path, default=default_model_dir())
    args = p.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    if not available():
        print("../shared/data is absent: nothing to train on")
        return 1
    ref = load_reference()
    ref["split"] = split_by_group(ref)
    x, w, rows, rate = embeddings(ref)
    x = x.astype(np.float64)
    train = (ref["split"] == "train").to_numpy()
    held = ~train
    keep = train[rows]
    short, short_rows = short_embeddings(ref, train)
    xt = np.vstack([x[train], w[keep], short]).astype(np.float64)
    kinds = pd.concat([ref.loc[train, "kind"], ref["kind"].iloc[rows[keep]], ref["kind"].iloc[short_rows]], ignore_index=True)
    groups = ref.loc[train, "group"].tolist() + ref["group"].iloc[rows[keep]].tolist() + ref["group"].iloc[short_rows].tolist()
    y = kinds.map(TARGETS).to_numpy()
    weight = kinds.map(1.0 / kinds.value_counts()).to_numpy()  # every kind counts the same
    from classifiers.embedding import get_embedder
    from classifiers.linear import HashedLinearModel
    from classifiers.linear_train import fit_linear

    pos, neg = anchor_vectors(get_embedder(**DEFAULT_EMBEDDER, device="cpu").embed)
    head, info = fit_reference_head(xt, y, groups, pos, neg, sample_weight=weight)
    # The hashed member reads the text the stage has (openings and short windows; no extra long windows).
    _rows, short_texts = short_windows(ref, train)
    hashed_texts = ref.loc[train, "text"].tolist() + short_texts
    hashed_y = pd.concat([ref.loc[train, "kind"], ref["kind"].iloc[short_rows]], ignore_index=True).map(TARGETS).to_numpy()
    hashed = fit_linear(HashedLinearModel(n_features=HASHED_FEATURES, task="regression"), hashed_texts, hashed_y, epochs=10)
    s_head = head.predict_embeddings(x[held])
    s_hashed = np.clip(hashed.predict(ref.loc[held, "text"].tolist()), 0, 5)
    s_both = np.clip(WEIGHTS["head"] * s_head + WEIGHTS["hashed"] * s_hashed, 0, 5)
    metrics = {"heldout": evaluate(s_both, ref, held),
               "heldout_head": evaluate(s_head, ref, held), "heldout_hashed": evaluate(s_hashed, ref, held)}
    data = {
        "source": "../shared/data (not copied into the repository): math/openstax_modules, math/stacks_project_chapters, "
        "math/arxiv_abstracts, web/web_docs",
        "targets": TARGETS,
        "positives": sorted(k for k in TARGETS if k not in HEADLINE_NEGATIVES | {"general_web"}),
        "split": "grouped 70/30 by hash of the group (OpenStax module, Stacks chapter, arXiv abstract, web site)",
        "train_documents": int(train.sum()),
        "train_extra_windows": int(keep.sum()),
        "train_short_windows": len(short_rows),
        "train_by_kind": ref.loc[train, "kind"].value_counts().sort_index().to_dict(),
        "licences": "OpenStax CC BY-NC-SA 4.0; Stacks Project GFDL 1.2; arXiv metadata CC0; web pages: see ../shared/data/README.md",
    }
    card = {
        "name": "edu_default",
        "version": "2",
        "description": "CPU default edu scorer: mean of (a) a ridge head on all-MiniLM-L6-v2 embeddings stacked with a zero-shot "
        "prior (cosine to rubric descriptions) and (b) a hashed word/char n-gram regression, both trained on labelled reference "
        "documents with per-kind targets on the edu rubric's 0-5 scale.",
        "rubric": "edu (classifiers/rubrics/edu.md); targets per kind of document, not LLM annotations",
        "embedder": DEFAULT_EMBEDDER,
        "data": data,
        "metrics": metrics,
        "embedding_docs_per_second_here": round(rate, 2),
        "reproduce": "python benchmarks/edu_score/train_default.py",
    }
    head.card = {"name": "edu_default_head", "version": "2", "training": info, "data": data,
                 "prior": {"positive": list(PRIOR_POSITIVE), "negative": list(PRIOR_NEGATIVE)},
                 "metrics": {"heldout": metrics["heldout_head"]}}
    print(json.dumps({"training": info, **metrics}, indent=1, default=str))
    if not args.dry_run:
        out = Path(args.output)
        for old in ("head.npz", "model.json"):
            (out / old).unlink(missing_ok=True)
        head.save(out / "head")
        hashed.save(out / "hashed", name="edu_default_hashed", data=data, metrics={"heldout": metrics["heldout_hashed"]})
        save_ensemble(out, WEIGHTS, card)
        print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
