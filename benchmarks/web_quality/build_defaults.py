"""Rebuild the shipped web-quality defaults from the real data in ../shared/data.

    python benchmarks/web_quality/build_defaults.py [--skip-linear] [--skip-explanatory]

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
3. ``classifiers/models/web_explanatory/`` and ``web_explanatory_zh/``: the DCLM / Nemotron-CC
   recipe — explanatory, instruction-like and reference text (textbooks, arXiv abstracts, Stacks
   Project, project documentation, reviewed main content) against random crawl pages; Chinese
   technical notes against Chinese short reviews. Trained on the ``train`` split of
   :mod:`explanatory_data` only (the ``tune`` split and the judged pages stay out).
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

MODELS = Path(__file__).resolve().parents[2] / "classifiers" / "models"
LINEAR_DIR = MODELS / "web_linear"
EXPLANATORY_DIR = MODELS / "web_explanatory"
EXPLANATORY_ZH_DIR = MODELS / "web_explanatory_zh"

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
    _report(out)


def _report(out: Path) -> None:
    """Print the model folder's size on disk."""
    size = sum(f.stat().st_size for f in out.iterdir())
    print(f"wrote {out} ({size / 1e6:.2f} MB)")


def _balanced(y: np.ndarray) -> np.ndarray:
    """Sample weights that give both classes the same total weight."""
    p = float(np.mean(y))
    return np.where(y == 1, 0.5 / p, 0.5 / (1 - p))


def build_explanatory(out: Path, n_features: int = 2**18, epochs: int = 3) -> None:
    import explanatory_data

    df, counts = explanatory_data.english_sets()
    tr = df[df["split"] == "train"]
    y = tr["label"].to_numpy()
    started = time.time()
    model = fit_linear(HashedLinearModel(n_features=n_features), tr["text"].tolist(), y, epochs=epochs, seed=0,
                       sample_weight=_balanced(y))
    model.save(
        out,
        name="web_explanatory",
        version="1",
        intended_use="quality_score_explanatory of the web_quality stage: P(explanatory / reference text | page text), English pages",
        training_data={k: v for k, v in counts.items() if k.endswith("/train") or k.startswith("dropped")},
        training_data_source="../shared/data: math/openstax_modules, math/arxiv_abstracts, math/stacks_project_chapters, "
                             "code/code_files (Markdown, reStructuredText), web/web_docs (wcxb, scrapinghub_aeb, dolma_ccnet_head, raw HTML pages)",
        positives="OpenStax textbook sections, arXiv abstracts, Stacks Project sections, project documentation sections, "
                  "wcxb reviewed main content, scrapinghub article bodies, cc_net output",
        negatives="whole visible text of raw HTML pages (wcxb, scrapinghub, trafilatura, Common Crawl WARC samples), boilerplate kept",
        held_out="the tune split of benchmarks/web_quality/explanatory_data.py and every judged WET page "
                 "(pages sharing a URL or a 60+ character line with a judged page are dropped)",
        limitations="English training text: scored on English pages only (scorer_languages); topic-skewed towards science and software",
        validation="benchmarks/web_quality/RESULTS.md (bench_members.py)",
        built_by="benchmarks/web_quality/build_defaults.py",
        build_seconds=round(time.time() - started, 1),
    )
    _report(out)


def build_explanatory_zh(out: Path, n_features: int = 2**16, epochs: int = 5) -> None:
    import explanatory_data

    df, counts = explanatory_data.chinese_sets()
    tr = df[df["split"] == "train"]
    y = tr["label"].to_numpy()
    started = time.time()
    model = fit_linear(HashedLinearModel(n_features=n_features, word_ngrams=(1, 1), char_ngrams=(1, 3)), tr["text"].tolist(), y,
                       epochs=epochs, seed=0, sample_weight=_balanced(y))
    model.save(
        out,
        name="web_explanatory_zh",
        version="1",
        intended_use="quality_score_explanatory_zh of the web_quality stage: P(technical note | Chinese page text), opt-in",
        training_data={k: v for k, v in counts.items() if k.endswith("/train")},
        training_data_source="../shared/data: zh/zh_tech_notes, zh/zh_reviews (a random 3,000)",
        positives="Chinese technical notes (HTTP, Linux, MySQL, Redis, Git, Docker, sockets), ~2,500-character sections",
        negatives="Chinese hotel and shopping reviews",
        held_out="the tune split of benchmarks/web_quality/explanatory_data.py (15 notes, 915 reviews)",
        limitations="32 positive sections of one topic: it learns computing topics against reviews; no human "
                    "judgement of Chinese pages checks it, so the recipe leaves it out (heuristics rank Chinese)",
        validation="benchmarks/web_quality/RESULTS.md (bench_members.py)",
        built_by="benchmarks/web_quality/build_defaults.py",
        build_seconds=round(time.time() - started, 1),
    )
    _report(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--skip-linear", action="store_true")
    ap.add_argument("--skip-heuristics", action="store_true")
    ap.add_argument("--skip-explanatory", action="store_true")
    ap.add_argument("--n-features", type=int, default=2**18)
    args = ap.parse_args()
    if not args.skip_heuristics:
        build_heuristics(DEFAULT_MODEL_DIR)
    if not args.skip_linear:
        build_linear(LINEAR_DIR, args.n_features)
    if not args.skip_explanatory:
        build_explanatory(EXPLANATORY_DIR)
        build_explanatory_zh(EXPLANATORY_ZH_DIR)


if __name__ == "__main__":
    main()
