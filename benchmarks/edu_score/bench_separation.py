"""How well edu_score separates math/science educational text from commercial and non-STEM text.

    python benchmarks/edu_score/bench_separation.py [--judge-per-kind 20]

On the held-out split of ``reference_data.py`` (grouped, never trained on), in one run:

- ``default``: the shipped head (``classifiers/models/edu_default``) on SemDeDup-style embeddings;
- ``prior``: the zero-shot prior alone (cosine to rubric descriptions);
- ``hashed``: a hashed word/char n-gram regression (``HashedLinearModel``, fastText-style) trained
  on the same train split and targets;
- ``judge``: the SmolLM2-135M local annotator's expected score, on a
  per-kind subsample of the held-out set, with ``default`` on the same subsample;
- leave-one-book-out: the default recipe refit without one OpenStax bundle, scored on it;
- sample_data: Spearman of the default with the generator's ``edu_label`` (synthetic, in-repo).

AUC = positives (textbook, research math, math/STEM abstracts) against commercial pages and
non-STEM abstracts. Results go to ``benchmarks/_work/edu/separation.json``.
"""

from __future__ import annotations

import argparse
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
from train_default import WORK, embeddings, windows  # noqa: E402,F401

from classifiers.edu import default_model_dir, get_edu_scorer  # noqa: E402
from classifiers.edu_train import anchor_vectors, fit_reference_head, roc_auc  # noqa: E402
from classifiers.embedding_head import DEFAULT_EMBEDDER, EmbeddingHead  # noqa: E402
from classifiers.scorer import Batch  # noqa: E402

log = logging.getLogger("bench_separation")


def headline_auc(frame: pd.DataFrame, score: np.ndarray) -> float:
    sel = (frame["positive"] | frame["kind"].isin(HEADLINE_NEGATIVES)).to_numpy()
    return round(roc_auc(frame["positive"].to_numpy()[sel], np.asarray(score)[sel]), 4)


def by_kind(frame: pd.DataFrame, score: np.ndarray) -> dict[str, float]:
    return {k: round(float(np.mean(np.asarray(score)[(frame["kind"] == k).to_numpy()])), 3) for k in sorted(set(frame["kind"]))}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--judge-per-kind", type=int, default=20, help="held-out documents per kind for the SmolLM2 judge (0 = skip)")
    p.add_argument("--judge-threads", type=int, default=1)
    args = p.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    if not available():
        print("../shared/data is absent")
        return 1
    import torch

    torch.set_num_threads(1)
    ref = load_reference()
    ref["split"] = split_by_group(ref)
    x, w, rows, rate = embeddings(ref)
    x = x.astype(np.float64)
    held = (ref["split"] == "heldout").to_numpy()
    train = ~held
    hf = ref[held].reset_index(drop=True)
    out: dict = {"heldout_by_kind": hf["kind"].value_counts().sort_index().to_dict(), "embedding_docs_per_s": round(rate, 2)}

    default = get_edu_scorer()
    t = time.perf_counter()
    s_default = default.score(Batch(hf["text"].tolist(), vectors=x[held]))  # the stage passes SemDeDup's vectors the same way
    out["default"] = {"auc": headline_auc(hf, s_default), "by_kind": by_kind(hf, s_default),
                      "docs_per_s_given_vectors": round(len(hf) / max(time.perf_counter() - t, 1e-9), 1)}
    head = EmbeddingHead.load(default_model_dir() / "head")
    s_head = head.predict_embeddings(x[held])
    out["default_head_member"] = {"auc": headline_auc(hf, s_head)}
    hashed_member = get_edu_scorer(default_model_dir() / "hashed")
    out["default_hashed_member"] = {"auc": headline_auc(hf, hashed_member.score(Batch(hf["text"].tolist())))}
    s_prior = head.prior(x[held])
    out["prior"] = {"auc": headline_auc(hf, s_prior)}

    from classifiers.linear import HashedLinearModel
    from classifiers.linear_train import fit_linear

    t = time.perf_counter()  # a peer: a fastText-style hashed n-gram model alone, 2^20 features, openings only
    hashed = fit_linear(HashedLinearModel(task="regression"), ref.loc[train, "text"].tolist(), ref.loc[train, "kind"].map(TARGETS), epochs=10)
    fit_s = time.perf_counter() - t
    t = time.perf_counter()
    s_hashed = np.clip(hashed.predict(hf["text"].tolist()), 0, 5)
    out["hashed"] = {"auc": headline_auc(hf, s_hashed), "by_kind": by_kind(hf, s_hashed), "fit_s": round(fit_s, 1),
                     "docs_per_s": round(len(hf) / (time.perf_counter() - t), 1)}

    # Leave one OpenStax bundle out: refit both members (openings only) without it; score that book.
    from classifiers.embedding import get_embedder

    pos, neg = anchor_vectors(get_embedder(**DEFAULT_EMBEDDER, device="cpu").embed)
    out["leave_one_book_out"] = {}
    fam = ref["family"].to_numpy()
    for bundle in sorted(set(fam[(ref["kind"] == "textbook").to_numpy()])):
        fit_rows = train & (fam != bundle)
        weight = ref.loc[fit_rows, "kind"].map(1.0 / ref.loc[fit_rows, "kind"].value_counts()).to_numpy()
        h, _ = fit_reference_head(x[fit_rows], ref.loc[fit_rows, "target"].to_numpy(), ref.loc[fit_rows, "group"].tolist(),
                                  pos, neg, sample_weight=weight, l2=0.3)
        hm = fit_linear(HashedLinearModel(n_features=2**18, task="regression"), ref.loc[fit_rows, "text"].tolist(),
                                                                        ref.loc[fit_rows, "target"].to_numpy(), epochs=10)
        test = (fam == bundle) | (held & ref["kind"].isin(HEADLINE_NEGATIVES).to_numpy())
        frame = ref[test]
        s_h = h.predict_embeddings(x[test])
        s_e = 0.5 * s_h + 0.5 * np.clip(hm.predict(frame["text"].tolist()), 0, 5)
        book = (frame["kind"] == "textbook").to_numpy()
        out["leave_one_book_out"][bundle.split("/")[-1]] = {
            "auc": headline_auc(frame, s_e), "auc_head_only": headline_auc(frame, s_h),
            "mean_textbook": round(float(s_e[book].mean()), 3), "textbook_at_or_above_3": round(float((s_e[book] >= 3).mean()), 3)}

    if args.judge_per_kind > 0:
        out["judge"] = judge(hf, s_default, args)
    out["sample_data"] = sample_data_agreement()
    WORK.mkdir(parents=True, exist_ok=True)
    (WORK / "separation.json").write_text(json.dumps(out, indent=1, sort_keys=True))
    print(json.dumps(out, indent=1, sort_keys=True))
    return 0


def judge(hf: pd.DataFrame, s_default: np.ndarray, args: argparse.Namespace) -> dict:
    """SmolLM2's expected score on a per-kind subsample (annotations cached in benchmarks/_work/edu)."""
    from classifiers.annotation import get_annotator
    from classifiers.rubrics import get_rubric

    pick = hf.groupby("kind", group_keys=False).apply(lambda g: g.sample(min(len(g), args.judge_per_kind), random_state=0))
    idx = pick.index.to_numpy()
    ann = get_annotator({"backend": "local", "threads": args.judge_threads, "cache_dir": str(WORK / "annotation_cache")})
    res = ann.annotate(pick["text"].tolist(), get_rubric("edu"))
    sub = hf.loc[idx].reset_index(drop=True)
    ok = ~np.isnan(res.scores)
    sub[["doc_id", "kind"]].assign(judge=res.scores).to_parquet(WORK / "judge_scores.parquet")
    from scipy.stats import spearmanr

    return {
        "n": int(len(sub)), "failures": int((~ok).sum()),
        "auc": headline_auc(sub[ok], res.scores[ok]),
        "default_auc_same_docs": headline_auc(sub, s_default[idx]),
        "spearman_with_targets": round(float(spearmanr(sub.loc[ok, "target"], res.scores[ok]).statistic), 4),
        "by_kind": by_kind(sub[ok], res.scores[ok]),
        "stats": res.stats.to_dict(),
    }


def sample_data_agreement() -> dict:
    path = ROOT / "sample_data" / "math_science" / "math_science.jsonl.gz"
    if not path.exists():
        return {}
    from scipy.stats import spearmanr

    df = pd.read_json(path, lines=True)
    label = df["meta"].map(lambda m: m["edu_label"])
    s = get_edu_scorer(device="cpu").score(Batch(df["text"].tolist()))
    return {"n": len(df), "spearman_with_edu_label": round(float(spearmanr(label, s).statistic), 4),
            "mean_by_label": {int(k): round(float(v), 3) for k, v in pd.Series(s).groupby(label).mean().items()}}


if __name__ == "__main__":
    raise SystemExit(main())
