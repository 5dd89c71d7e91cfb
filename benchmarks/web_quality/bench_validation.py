"""Does the default ensemble rank real web pages the way people do? Three held-out checks.

    python benchmarks/web_quality/bench_validation.py [--out benchmarks/_work/web_quality/validation.json]

1. **Judged CC pages** — 328 distinct raw Common Crawl WET records (dolma), each judged 1–5 by
   reading it (``wet_judgements.csv``; never used to fit anything). AUC of "good" (≥ 4) vs the
   rest and of "acceptable" (≥ 3) vs the rest, Spearman with the grade; on all pages and on the
   English ones (English stop-word share > 0.15), since the default linear model is English-centric.
   Reference points: every single signal, datatrove's Gopher/C4/FineWeb filters (peer, number of
   filters passed), and a logistic regression fitted on the judgements themselves (5-fold CV).
2. **Main content vs whole page, held-out domains** — wcxb's human-reviewed main content against
   the whole visible text of the same pages, for domains the linear model was not trained on
   (the linear model is retrained here without them; the heuristics are never trained).
3. **Corruptions** — held-out reference articles against three corrupted versions of themselves:
   navigation/cookie lines interleaved, sentences shuffled into word salad, a paragraph repeated.
   Pairwise accuracy: share of pairs where the original scores higher.

Also: Spearman agreement between scorers and the token share of each level when the corpus of
judged pages is bucketed with the default recipe (mean judgement per level).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.stats import rankdata, spearmanr

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import data  # noqa: E402
from build_defaults import boilerplate, prose  # noqa: E402

from classifiers.heuristics_signals import SIGNAL_NAMES, signal_matrix  # noqa: E402
from classifiers.linear import HashedLinearModel  # noqa: E402
from classifiers.linear_train import fit_linear  # noqa: E402
from classifiers.scorer import Batch  # noqa: E402
from classifiers.web_quality import get_scorer  # noqa: E402
from curation.quality.bucketing import decide  # noqa: E402
from curation.quality.sketch import QuantileSketch, combined_rank, percentile_grid, token_weights  # noqa: E402
from pipelines.recipe import load_recipe, stage_config  # noqa: E402
from pipelines.stages.web_quality import WebQualityConfig  # noqa: E402

NAV = ["Home", "About us", "Contact", "Login | Register", "Accept all cookies", "Privacy Policy", "Share on Facebook",
       "Subscribe to our newsletter", "Cart (0)", "© 2024 All rights reserved", "Menu", "Search"]


def auc(y: np.ndarray, s: np.ndarray) -> float:
    y = np.asarray(y, dtype=bool)
    r = rankdata(s)
    n1, n0 = y.sum(), (~y).sum()
    return float((r[y].sum() - n1 * (n1 + 1) / 2) / (n1 * n0))


def datatrove_passes(texts: list[str]) -> np.ndarray | None:
    """Peer: how many of datatrove's Gopher quality, Gopher repetition, C4 and FineWeb filters pass (0–4)."""
    try:
        from datatrove.data import Document
        from datatrove.pipeline.filters import (
            C4QualityFilter,
            FineWebQualityFilter,
            GopherQualityFilter,
            GopherRepetitionFilter,
        )
    except ImportError:
        return None
    filters = [GopherQualityFilter(), GopherRepetitionFilter(), C4QualityFilter(filter_no_terminal_punct=False), FineWebQualityFilter()]
    out = np.zeros(len(texts))
    for i, t in enumerate(texts):
        for f in filters:
            try:
                ok = f.filter(Document(text=t, id=str(i)))
            except Exception:  # noqa: BLE001 - a peer crashing on a page counts as a failed filter
                ok = False
            out[i] += 1.0 if ok is True else 0.0
    return out


def judged_check(res: dict) -> None:
    j = data.judged()
    texts = j["text"].tolist()
    x = signal_matrix(texts)
    heur, lin = get_scorer("heuristics"), get_scorer("linear")
    scores = {"heuristics": heur.model.combine(x), "linear": lin.score(Batch(texts))}
    cfg = stage_config(load_recipe(None), "web_quality", WebQualityConfig)
    ntok = np.array([max(1, len(t.split())) for t in texts])  # words as token weights (no tokenizer needed)
    sketches = {k: QuantileSketch.from_values(v, token_weights(ntok)) for k, v in scores.items()}
    th = {k: s.thresholds(percentile_grid(cfg.n_buckets)) for k, s in sketches.items()}
    dmax = decide(scores, th, cfg.levels, cfg.repeat, "max", sketches)
    rank = combined_rank(scores, sketches, "mean")
    cth = QuantileSketch.from_values(rank, token_weights(ntok)).thresholds(percentile_grid(cfg.n_buckets))
    dmean = decide(scores, th, cfg.levels, cfg.repeat, "mean", sketches, cth)
    candidates = {
        "ensemble bucket (mean, default)": dmean.bucket.astype(float),
        "ensemble percentile (mean, default)": dmean.percentile,
        "ensemble bucket (max, GLM-4.5)": dmax.bucket.astype(float),
        "ensemble percentile (max, GLM-4.5)": dmax.percentile,
        "heuristics": scores["heuristics"],
        "linear": scores["linear"],
    }
    peer = datatrove_passes(texts)
    if peer is not None:
        candidates["peer: datatrove filters passed (0-4)"] = peer
    for k, name in enumerate(SIGNAL_NAMES):
        col = x[:, k]
        if np.std(col) > 0:
            sign = 1.0 if auc(j["rating"] >= 4, col) >= 0.5 else -1.0
            candidates[f"signal {name} ({'+' if sign > 0 else '-'})"] = sign * col
    try:
        from sklearn.linear_model import LogisticRegression
        from sklearn.model_selection import cross_val_predict
        from sklearn.pipeline import make_pipeline
        from sklearn.preprocessing import StandardScaler
    except ImportError:
        print("scikit-learn not installed: the reference logistic regression is skipped")
    else:
        xt = x.copy()
        for n in ("n_words", "n_sentences", "gopher_stop_words"):
            xt[:, SIGNAL_NAMES.index(n)] = np.log1p(xt[:, SIGNAL_NAMES.index(n)])
        candidates["reference: LR fitted on the judgements (5-fold CV)"] = cross_val_predict(
            make_pipeline(StandardScaler(), LogisticRegression(C=0.1, max_iter=5000)), xt, j["rating"] >= 4, cv=5,
            method="decision_function")
    en = x[:, SIGNAL_NAMES.index("stop_word_frac")] > 0.15
    rows = []
    for name, s in candidates.items():
        rows.append({
            "scorer": name,
            "auc_good": auc(j["rating"] >= 4, s), "auc_ok": auc(j["rating"] >= 3, s),
            "spearman": float(spearmanr(j["rating"], s).correlation),
            "auc_good_en": auc(j.loc[en, "rating"] >= 4, s[en]), "spearman_en": float(spearmanr(j.loc[en, "rating"], s[en]).correlation),
        })
    table = pd.DataFrame(rows).sort_values("auc_good", ascending=False)
    res["judged"] = {"n": len(j), "n_english": int(en.sum()), "n_good": int((j["rating"] >= 4).sum()),
                     "rating_counts": j["rating"].value_counts().sort_index().to_dict(), "table": table.round(4).to_dict("records")}
    dflt = dmean if cfg.combine == "mean" else dmax
    levels = pd.DataFrame({"level": dflt.level, "rating": j["rating"], "tokens": ntok})
    per = levels.groupby("level").agg(documents=("rating", "size"), tokens=("tokens", "sum"), mean_rating=("rating", "mean"))
    per["token_share"] = per["tokens"] / per["tokens"].sum()
    res["judged_levels"] = per.round(4).reset_index().to_dict("records")
    res["agreement_judged"] = {
        "heuristics~linear": float(spearmanr(scores["heuristics"], scores["linear"]).correlation),
        "heuristics~stop_word_frac": float(spearmanr(scores["heuristics"], x[:, SIGNAL_NAMES.index("stop_word_frac")]).correlation),
        "linear~stop_word_frac": float(spearmanr(scores["linear"], x[:, SIGNAL_NAMES.index("stop_word_frac")]).correlation),
    }
    if peer is not None:
        res["agreement_judged"]["heuristics~datatrove"] = float(spearmanr(scores["heuristics"], peer).correlation)
    print(table.round(3).head(25).to_string(index=False))
    print(per.round(3))


def domain_split_check(res: dict, seed: int = 0) -> tuple[HashedLinearModel, set[str]]:
    """Main content vs whole page on held-out domains; returns the linear model trained without them."""
    ref, pages = data.reference(), data.pages()
    wc_ref = ref[ref["kind"] == "wcxb"]
    wc_pages = pages[pages["kind"] == "wcxb"]
    domains = sorted(set(wc_ref["domain"]))
    rng = np.random.default_rng(seed)
    held = set(rng.choice(domains, size=len(domains) // 4, replace=False))
    train_ids = set(ref.loc[~ref["domain"].isin(held), "doc_id"]) | set(pages.loc[~pages["domain"].isin(held), "doc_id"])
    # the shipped model's training set (build_defaults.py), restricted to the training domains

    ref_tr, pages_tr = ref[ref["doc_id"].isin(train_ids)], pages[pages["doc_id"].isin(train_ids)]
    pos = ref_tr["text"].tolist() + [p for p in (prose(t) for t in pages_tr["text"]) if len(p) > 300]
    neg = pages_tr["text"].tolist() + [b for b in (boilerplate(t) for t in pages_tr["text"]) if len(b) > 100]
    started = time.time()
    model = fit_linear(HashedLinearModel(n_features=2**18), pos + neg, np.r_[np.ones(len(pos)), np.zeros(len(neg))], epochs=3)
    res["linear_train_seconds_domain_split"] = round(time.time() - started, 1)
    a = wc_ref[wc_ref["domain"].isin(held)]
    b = wc_pages[wc_pages["doc_id"].isin(a["doc_id"])]
    a = a[a["doc_id"].isin(b["doc_id"])]
    heur = get_scorer("heuristics")
    texts_eval = a["text"].tolist() + b["text"].tolist()
    y_eval = np.r_[np.ones(len(a)), np.zeros(len(b))]
    hs, ls = heur.score(Batch(texts_eval)), model.predict(texts_eval)
    res["domain_split"] = {
        "held_out_domains": len(held), "pairs": len(a),
        "auc_heuristics": auc(y_eval, hs), "auc_linear_retrained": auc(y_eval, ls),
        "auc_max_rank": auc(y_eval, np.maximum(rankdata(hs), rankdata(ls))),
        "auc_mean_rank": auc(y_eval, rankdata(hs) + rankdata(ls)),
        "auc_stop_word_frac": auc(y_eval, signal_matrix(texts_eval)[:, SIGNAL_NAMES.index("stop_word_frac")]),
    }
    print("domain split:", res["domain_split"])
    return model, held


def corruption_check(res: dict, held_model: HashedLinearModel, held: set[str], seed: int = 0) -> None:
    ref = data.reference()
    ref = ref[(ref["kind"] == "wcxb") & (ref["text"].str.len() > 1500) & ref["domain"].isin(held)]
    ref = ref.sample(n=min(200, len(ref)), random_state=seed)
    rng = np.random.default_rng(seed)

    def nav(t: str) -> str:
        lines = t.split("\n")
        out = []
        for ln in lines:
            out.append(ln)
            out.extend(rng.choice(NAV, size=2).tolist())
        return "\n".join(out)

    def salad(t: str) -> str:
        words = t.split()
        rng.shuffle(words)
        return " ".join(words)

    def repeat(t: str) -> str:
        paras = [p for p in t.split("\n") if p.strip()]
        return "\n".join(paras + [paras[0]] * 8)

    heur, lin = get_scorer("heuristics"), get_scorer("linear")
    orig = ref["text"].tolist()
    so = {"heuristics": heur.score(Batch(orig)), "linear (shipped)": lin.score(Batch(orig)), "linear (held-out domains)": held_model.predict(orig)}
    out = {}
    for name, fn in (("navigation lines", nav), ("word salad", salad), ("repeated paragraph", repeat)):
        bad = [fn(t) for t in orig]
        sb = {"heuristics": heur.score(Batch(bad)), "linear (shipped)": lin.score(Batch(bad)), "linear (held-out domains)": held_model.predict(bad)}
        out[name] = {k: float((so[k] > sb[k]).mean()) for k in so}
        both_h, both_l = rankdata(np.r_[so["heuristics"], sb["heuristics"]]), rankdata(np.r_[so["linear (shipped)"], sb["linear (shipped)"]])
        out[name]["mean of ranks (heuristics, shipped linear)"] = float(((both_h + both_l)[: len(orig)] > (both_h + both_l)[len(orig) :]).mean())
        out[name]["max of ranks (heuristics, shipped linear)"] = float(
            (np.maximum(rankdata(np.r_[so["heuristics"], sb["heuristics"]]), rankdata(np.r_[so["linear (shipped)"], sb["linear (shipped)"]]))[: len(orig)]
             > np.maximum(rankdata(np.r_[so["heuristics"], sb["heuristics"]]), rankdata(np.r_[so["linear (shipped)"], sb["linear (shipped)"]]))[len(orig) :]).mean())
    res["corruptions"] = out
    print("corruptions:", json.dumps(out, indent=1))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=data.WORK / "validation.json")
    args = ap.parse_args()
    res: dict = {}
    judged_check(res)
    model, held = domain_split_check(res)
    corruption_check(res, model, held)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(res, indent=1, default=float))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
