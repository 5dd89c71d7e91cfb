"""Rebuild the shipped web-quality defaults from the real data in ../shared/data.

    python benchmarks/web_quality/build_defaults.py [--skip-linear]

1. ``classifiers/models/web_heuristics/model.json``: the heuristic combination. Signs and weights
   are fixed a priori below (the direction each published rule keeps; the stop-word fraction,
   the strongest single signal on human judgements of CC text, counts twice); each term's center
   and scale are the median and spread of the signal on the raw Common Crawl WET pages — the
   "random web" the scores must spread.
2. ``classifiers/models/web_linear/``: a hashed n-gram classifier, reference vs random web
   (the fastText recipe of DCLM / FineWeb quality classifiers): positives are human-reviewed main
   content (wcxb), article bodies (scrapinghub) and cc_net output, plus the long prose
   paragraphs of the raw pages; negatives are the whole text of the raw HTML pages and their
   short non-sentence lines (navigation, menus, footers). No judged WET page is used.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import data  # noqa: E402

from classifiers.heuristics import DEFAULT_MODEL_DIR, HeuristicModel, Term  # noqa: E402
from classifiers.heuristics_signals import SIGNAL_NAMES, signal_matrix  # noqa: E402
from classifiers.linear import HashedLinearModel  # noqa: E402
from classifiers.linear_train import fit_linear  # noqa: E402

LINEAR_DIR = Path(__file__).resolve().parents[2] / "classifiers" / "models" / "web_linear"

#: signal → (weight, transform, source of the direction)
PRIORS: dict[str, tuple[float, str, str]] = {
    "stop_word_frac": (2.0, "none", "Gopher stop-word rule; strongest single signal on human CC judgements"),
    "gopher_stop_words": (1.0, "log1p", "Gopher: >= 2 of the 8 stop words"),
    "line_punct_frac": (1.0, "none", "C4 terminal-punctuation lines; FineWeb line_punct_thr"),
    "n_sentences": (1.0, "log1p", "C4: >= 5 sentences"),
    "n_words": (1.0, "log1p", "Gopher: >= 50 words"),
    "alpha_word_frac": (1.0, "none", "Gopher: >= 80 % words with a letter"),
    "short_line_frac": (-1.0, "none", "FineWeb short_line_thr"),
    "few_words_line_frac": (-1.0, "none", "C4 drops lines under 3 words"),
    "newline_word_ratio": (-1.0, "clip:0:2", "FineWeb new_line_ratio"),
    "dup_line_char_frac": (-1.0, "none", "Gopher / FineWeb duplicate-line characters"),
    "top_2gram_char_frac": (-1.0, "none", "Gopher top 2-gram"),
    "uppercase_frac": (-1.0, "none", "shouting and menus (RefinedWeb-style)"),
    "digit_frac": (-1.0, "none", "tables, listings, catalogue records"),
    "lorem_ipsum": (-1.0, "none", "C4 drops pages with lorem ipsum"),
}


def build_heuristics(out: Path) -> None:
    wet = data.wet()
    x = signal_matrix(wet["text"].tolist())
    terms = []
    for name, (weight, how, why) in PRIORS.items():
        col = x[:, SIGNAL_NAMES.index(name)]
        tv = _apply(col, how)
        center = float(np.median(tv))
        q10, q25, q75, q90 = np.percentile(tv, [10, 25, 75, 90])
        # IQR, or the 10–90 spread for signals that are zero on most pages (duplicate lines, lorem ipsum)
        scale = float(max(q75 - q25, (q90 - q10) / 2.56, 1e-3))
        if name == "lorem_ipsum":
            center, scale = 0.0, 1.0 / 3.0  # presence = the full −3 penalty
        terms.append({"signal": name, "weight": weight, "center": round(center, 6), "scale": round(scale, 6),
                      "transform": how, "why": why})
    card = {
        "kind": "heuristic_combination",
        "version": "1",
        "formula": "sum_i w_i * clip((f_i(x_i) - center_i) / scale_i, -3, 3) / sum_i |w_i|",
        "centers_from": f"median / spread of each signal on {len(wet)} raw Common Crawl WET pages (dolma test data)",
        "weights_from": "a priori: the direction of the published Gopher / C4 / FineWeb rule; stop-word fraction x2",
        "built_by": "benchmarks/web_quality/build_defaults.py",
        "terms": terms,
    }
    HeuristicModel([Term(**t) for t in terms])  # validates
    out.mkdir(parents=True, exist_ok=True)
    (out / "model.json").write_text(json.dumps(card, indent=2) + "\n")
    print(f"wrote {out / 'model.json'}")


def _apply(col: np.ndarray, how: str) -> np.ndarray:
    from classifiers.heuristics import _transform

    return _transform(col, how)


TERMINAL = (".", "!", "?", "。", "！", "？", '"', "”")


def prose(text: str) -> str:
    return "\n".join(ln for ln in text.split("\n") if len(ln.split()) >= 25 and ln.rstrip().endswith(TERMINAL))


def boilerplate(text: str) -> str:
    return "\n".join(ln for ln in text.split("\n") if len(ln.split()) < 8 and not ln.rstrip().endswith(TERMINAL))


def linear_training_set() -> tuple[list[str], np.ndarray, dict[str, int]]:
    ref, pages = data.reference(), data.pages()
    pro = [p for p in (prose(t) for t in pages["text"]) if len(p) > 300]
    boil = [b for b in (boilerplate(t) for t in pages["text"]) if len(b) > 100]
    pos = ref["text"].tolist() + pro
    neg = pages["text"].tolist() + boil
    counts = {"reference": len(ref), "page_prose": len(pro), "pages": len(pages), "page_boilerplate": len(boil)}
    return pos + neg, np.r_[np.ones(len(pos)), np.zeros(len(neg))], counts


def build_linear(out: Path, n_features: int = 2**18, epochs: int = 3) -> None:
    texts, y, counts = linear_training_set()
    started = time.time()
    model = fit_linear(HashedLinearModel(n_features=n_features), texts, y, epochs=epochs, seed=0)
    model.save(
        out,
        name="web_linear",
        version="1",
        intended_use="quality_score_linear of the web_quality stage: P(reference-like main content | page text)",
        training_data=counts,
        training_data_source="../shared/data/web/web_docs.parquet (wcxb, scrapinghub_aeb, dolma_ccnet_head, trafilatura_eval, dolma_warc_sample)",
        positives="wcxb human-reviewed main content, scrapinghub article bodies, cc_net output, long prose lines of raw pages",
        negatives="whole visible text of raw HTML pages, their short non-sentence lines",
        limitations="English-centric reference data: pages in other languages score lower; see docs/web_quality.md",
        validation="benchmarks/web_quality/RESULTS.md (judged CC pages: AUC 0.762 all, 0.936 English)",
        built_by="benchmarks/web_quality/build_defaults.py",
        build_seconds=round(time.time() - started, 1),
    )
    size = sum(f.stat().st_size for f in out.iterdir())
    print(f"wrote {out} ({size / 1e6:.2f} MB)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--skip-linear", action="store_true")
    ap.add_argument("--n-features", type=int, default=2**18)
    args = ap.parse_args()
    build_heuristics(DEFAULT_MODEL_DIR)
    if not args.skip_linear:
        build_linear(LINEAR_DIR, args.n_features)


if __name__ == "__main__":
    main()
