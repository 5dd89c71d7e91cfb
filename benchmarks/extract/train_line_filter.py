"""Fit ``resiliparse_routed``'s line filter and page router on the tune half; write ``curation/ingest/extract_lines_model.json``.

    python benchmarks/extract/train_line_filter.py [--trees 100] [--route-share 0.12]

Pages: the WCXB and scrapinghub pages of ../shared/data/web/web_docs.parquet (as bench_extract.py),
split by host: a page is **held out** when the SHA-1 of its host (``www.`` dropped) is odd, so no
site is on both sides. Only the tune half is read to fit anything here:

1. Line labels: a line of Resiliparse's main content is "main text" when its normalised text is
   inside the page's human-reviewed text (WCXB ``text``, scrapinghub article body).
2. Line trees: scikit-learn's HistGradientBoostingClassifier on :func:`line_features`; the keep
   threshold is the one of a small grid with the best snippet F1 on the tune WCXB pages.
3. Router: per tune page, whether trafilatura's text (``fast=True``, as the extractor calls it) scores better (snippet recall + precision) than
   the kept lines; trees on :func:`page_features`; the route threshold sends ``--route-share`` of
   the tune pages to trafilatura (the CPU budget: trafilatura costs ~10× the filter).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_extract import DATA, f1, held_out, load_pages  # noqa: E402

from curation.ingest import extract_lines as el  # noqa: E402
from curation.ingest.extract import extract_text, norm, snippet_scores  # noqa: E402

OUT = el.MODEL
SEED = 0


def export(clf) -> dict:
    """A fitted HistGradientBoostingClassifier as padded arrays for :func:`extract_lines.tree_scores`."""
    trees = [p[0].nodes for p in clf._predictors]
    width = max(len(t) for t in trees)
    out = {k: np.zeros((len(trees), width), dtype=np.int64) for k in ("feature", "left", "right")}
    out["threshold"] = np.zeros((len(trees), width))
    out["value"] = np.zeros((len(trees), width))
    depth = 0
    for i, t in enumerate(trees):
        n = len(t)
        own = np.arange(n)
        leaf = t["is_leaf"].astype(bool)
        out["feature"][i, :n] = np.where(leaf, 0, t["feature_idx"])
        out["threshold"][i, :n] = np.where(leaf, 0.0, t["num_threshold"])
        out["left"][i, :n] = np.where(leaf, own, t["left"])
        out["right"][i, :n] = np.where(leaf, own, t["right"])
        out["value"][i, :n] = np.where(leaf, t["value"], 0.0)
        out["left"][i, n:] = out["right"][i, n:] = np.arange(n, width)
        depth = max(depth, int(t["depth"].max()))
    return {**{k: v.tolist() for k, v in out.items()}, "depth": depth, "baseline": float(np.ravel(clf._baseline_prediction)[0])}


def page_score(text: str, must: list[str], must_not: list[str]) -> float:
    r, p = snippet_scores(text, must, must_not)
    return (1.0 if r is None else r) + (1.0 if p is None else p)


def snippet_f1(texts: list[str], must: list[list[str]], must_not: list[list[str]]) -> float:
    scores = [snippet_scores(t, a, b) for t, a, b in zip(texts, must, must_not, strict=True)]
    r = pd.Series([s[0] for s in scores], dtype=float).mean()
    p = pd.Series([s[1] for s in scores], dtype=float).mean()
    return f1(p, r)


def main() -> None:
    from sklearn.ensemble import HistGradientBoostingClassifier

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--trees", type=int, default=100)
    ap.add_argument("--leaves", type=int, default=16)
    ap.add_argument("--depth", type=int, default=6)
    ap.add_argument("--route-share", type=float, default=0.12)
    args = ap.parse_args()
    if not DATA.exists():
        sys.exit(f"{DATA} is absent: fitting needs the shared real pages")
    pages = load_pages(None)
    tune = pages[~pages["url"].map(held_out)].reset_index(drop=True)  # the held-out half is never read here
    wcxb = (tune["source"] == "wcxb").to_numpy()
    must = [json.loads(x or "[]") for x in tune["with_snippets"]]
    must_not = [json.loads(x or "[]") for x in tune["without_snippets"]]
    lines = [el.page_lines(el.minimal_html(h)) for h in tune["html"]]
    feats = [el.line_features(ls) for ls in lines]
    labels = [np.array([norm(x.text) in norm(t or "") for x in ls], dtype=int) for ls, t in zip(lines, tune["text"], strict=True)]
    clf = HistGradientBoostingClassifier(max_iter=args.trees, max_leaf_nodes=args.leaves, max_depth=args.depth, learning_rate=0.1,
                                         early_stopping=False, random_state=SEED)
    clf.fit(np.vstack(feats), np.concatenate(labels))
    line_trees = export(clf)
    forest = el.Forest.of(line_trees)
    sample = np.vstack(feats)[:2000]
    assert np.allclose(el.tree_scores(forest, sample), clf.predict_proba(sample)[:, 1]), "exported trees disagree"
    scores = [el.tree_scores(forest, f) if len(f) else np.zeros(0) for f in feats]

    def kept(at: float) -> list[str]:
        return [el.render(el.kept_lines(ls, sc, at)) for ls, sc in zip(lines, scores, strict=True)]

    w = np.flatnonzero(wcxb)
    grid = {at: snippet_f1([kept(at)[i] for i in w], [must[i] for i in w], [must_not[i] for i in w]) for at in (0.15, 0.2, 0.25, 0.3, 0.35, 0.4)}
    keep_at = max(grid, key=grid.get)
    print("line keep threshold (tune snippet F1):", json.dumps({str(k): round(v, 4) for k, v in grid.items()}), "→", keep_at)
    filtered = kept(keep_at)
    reference = [extract_text(h, "trafilatura_fast") for h in tune["html"]]
    better = np.array([wcxb[i] and page_score(reference[i], must[i], must_not[i]) > page_score(filtered[i], must[i], must_not[i])
                       for i in range(len(tune))], dtype=int)
    pf = np.vstack([el.page_features(ls, sc, len(h), keep_at) if ls else np.zeros(12) for ls, sc, h in zip(lines, scores, tune["html"], strict=True)])
    router = HistGradientBoostingClassifier(max_iter=100, max_depth=3, learning_rate=0.05, early_stopping=False, random_state=SEED)
    router.fit(pf[wcxb], better[wcxb])
    route_trees = export(router)
    route_scores = el.tree_scores(el.Forest.of(route_trees), pf)
    route_at = float(np.quantile(route_scores, 1 - args.route_share))
    print(f"router: {better[wcxb].mean():.3f} of tune WCXB pages are better with trafilatura; route at {route_at:.4f}")
    fit = {"fitted_by": "benchmarks/extract/train_line_filter.py on the tune half (hosts with an even SHA-1); do not edit",
           "LINE_KEEP": keep_at, "ROUTE_AT": route_at, "LINE_TREES": line_trees, "ROUTE_TREES": route_trees}
    OUT.write_text(json.dumps(fit, separators=(",", ":")) + "\n")
    print(f"wrote {OUT.relative_to(ROOT)} ({OUT.stat().st_size // 1024} KB); tune pages {len(tune)}, held out {len(pages) - len(tune)}")


if __name__ == "__main__":
    main()
