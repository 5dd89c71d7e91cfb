"""code_web's classifier recall with and without its code evidence, on real code and real non-code text.

    python benchmarks/code_web/bench_classifier_evidence.py [--reviews N]

A page is recalled by the code-content classifier when its highest window probability reaches
``classifier_threshold``; the recipe also asks ``classifier_min_code_chars`` code-like characters
(ASCII letters, digits, punctuation) in the windows at that probability, or half as many on two
lines or more (``curation.quality.code_pages.code_evidence``). This script gives, in one
run, the share of each set recalled by the probability alone ("before") and with the evidence
("after"), at the recipe's settings:

- code that must stay recalled: source files of the repositories held out from the shipped model's
  training (the split of ``curate train-classifier code-content``), Chinese technical notes with
  code blocks (``zh/zh_tech_notes``);
- text that is not code: Chinese short reviews (``zh/zh_reviews``, by length), web pages without
  HTML code tags (``web/web_docs``; English and other languages by ``classifiers.langid``), and
  the lines of 5–120 characters of the non-English ones (short non-English texts).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / ".." / "shared" / "data"
sys.path.insert(0, str(ROOT))

from classifiers.code_content import CodeContentClassifier, windows  # noqa: E402
from classifiers.langid import identify  # noqa: E402
from curation.quality.code_language import language_kind  # noqa: E402
from curation.quality.code_pages import code_evidence, enough_evidence  # noqa: E402
from curation.quality.html_code import code_tag_stats, parse  # noqa: E402
from pipelines.commands.train_code_content import is_holdout  # noqa: E402
from pipelines.recipe import load_recipe, stage_config  # noqa: E402
from pipelines.stages.code_web import CodeWebConfig  # noqa: E402


def recalled(texts: list[str], threshold: float, min_chars: int) -> tuple[np.ndarray, np.ndarray]:
    """Per text: recalled by the probability alone, recalled with the code evidence."""
    clf = CodeContentClassifier()
    per_page = [windows(t or "", clf.window_lines, min_chars=clf.min_chars) for t in texts]
    probs, parts = clf.predict_pages(per_page)
    chars, lines = np.array([code_evidence(ws, q, threshold) for ws, q in zip(per_page, parts, strict=True)]).reshape(-1, 2).T
    return probs >= threshold, (probs >= threshold) & enough_evidence(chars, lines, min_chars)


def row(name: str, texts: list[str], threshold: float, min_chars: int) -> dict:
    before, after = recalled(texts, threshold, min_chars)
    out = {"set": name, "n": len(texts), "before": int(before.sum()), "after": int(after.sum()),
           "before_share": round(float(before.mean()), 4) if len(texts) else 0.0,
           "after_share": round(float(after.mean()), 4) if len(texts) else 0.0}
    print(json.dumps(out), flush=True)
    return out


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--reviews", type=int, default=0, help="sample this many reviews (default: all 70,538)")
    args = parser.parse_args()
    cfg = stage_config(load_recipe(None), "code_web", CodeWebConfig)
    thr, min_chars = cfg.classifier_threshold, cfg.classifier_min_code_chars  # type: ignore[attr-defined]
    print(json.dumps({"classifier_threshold": thr, "classifier_min_code_chars": min_chars}))
    t0 = time.process_time()
    rows = []
    code = pd.read_parquet(DATA / "code" / "code_files.parquet", columns=["text", "repo", "language"])
    code = code[[language_kind(lang) == "programming" and is_holdout(repo, 0.2) for lang, repo in zip(code["language"], code["repo"], strict=True)]]
    rows.append(row("held-out code files (programming languages)", code["text"].tolist(), thr, min_chars))
    notes = pd.read_json(DATA / "zh" / "zh_tech_notes.jsonl.gz", lines=True)
    rows.append(row("zh tech notes (Markdown with code blocks)", notes["text"].tolist(), thr, min_chars))
    reviews = pd.read_json(DATA / "zh" / "zh_reviews.jsonl.gz", lines=True)
    if args.reviews:
        reviews = reviews.sample(args.reviews, random_state=0)
    texts = reviews["text"].fillna("").astype(str).tolist()
    rows.append(row("zh reviews, all", texts, thr, min_chars))
    lengths = np.array([len(t) for t in texts])
    for lo, hi in ((0, 20), (20, 40), (40, 100), (100, None)):
        keep = (lengths > lo) & (lengths <= hi if hi else True)
        rows.append(row(f"zh reviews, {lo + 1}–{hi or '…'} characters", [t for t, k in zip(texts, keep, strict=True) if k], thr, min_chars))
    web = pd.read_parquet(DATA / "web" / "web_docs.parquet", columns=["text", "html"])
    web = web[web["text"].fillna("").str.len() > 0]
    tagged = [bool(isinstance(h, str) and h and code_tag_stats(None, parse(h)).recalled()) for h in web["html"]]
    web = web[~np.array(tagged)]
    langs, _ = identify(web["text"].tolist())
    en = [t for t, lang in zip(web["text"], langs, strict=True) if lang == "en"]
    other = [t for t, lang in zip(web["text"], langs, strict=True) if lang != "en"]
    rows.append(row("web pages without code tags, English", en, thr, min_chars))
    rows.append(row("web pages without code tags, other languages", other, thr, min_chars))
    lines = [ln.strip() for t in other for ln in t.split("\n") if 5 <= len(ln.strip()) <= 120]
    rows.append(row("lines of 5–120 characters of those non-English pages", lines, thr, min_chars))
    print(f"CPU-s {time.process_time() - t0:.1f}")
    print("\n| set | texts | recalled, probability alone | recalled, with code evidence |\n|---|---:|---:|---:|")
    for r in rows:
        print(f"| {r['set']} | {r['n']:,} | {r['before']:,} ({100 * r['before_share']:.2f} %) | {r['after']:,} ({100 * r['after_share']:.2f} %) |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
