"""Train the code-content classifier from a run's documents (code files = positives, prose = negatives).

    curate train-classifier code-content --input runs/x/50_code_quality --output models/code_content

Positives are documents whose ``source`` is in ``--positive-sources`` (default ``code``, only
programming languages); negatives are ``--negative-sources`` (default ``web math_science``),
leaving out web pages whose HTML (``meta.html``) has code blocks. Documents are split by
repository / URL host into train and held-out parts, and the held-out precision and recall go
into the model card.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import logging
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from pipelines.commands import positive_int, share

log = logging.getLogger(__name__)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--input", nargs="+", action="extend", required=True, type=Path, help="stage folders (docs/) or parquet files")
    parser.add_argument("--output", required=True, type=Path, help="model folder to write (model.json + weights.npz)")
    parser.add_argument("--positive-sources", nargs="+", default=["code"])
    parser.add_argument("--negative-sources", nargs="+", default=["web", "math_science"])
    parser.add_argument("--max-docs", type=int, default=20000, help="documents per class at most (sampled)")
    parser.add_argument("--window-lines", type=int, default=4)
    parser.add_argument("--n-features", type=positive_int, default=2**18)
    parser.add_argument("--epochs", type=positive_int, default=4)
    parser.add_argument("--holdout", type=share, default=0.2, help="share of groups (repos / hosts) held out")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--model-version", default="1")


def read_inputs(paths: list[Path]) -> pd.DataFrame:
    """Documents (text, source and what the split needs) from stage folders or parquet files."""
    import pyarrow.parquet as pq

    frames = []
    for p in paths:
        files = [p] if p.is_file() else sorted((p / "docs" if (p / "docs").is_dir() else p).glob("*.parquet"))
        for f in files:
            names = pq.read_schema(f).names
            cols = [c for c in ("doc_id", "text", "source", "language", "path", "repo", "url", "meta") if c in names]
            frames.append(pd.read_parquet(f, columns=cols))
    if not frames:
        raise FileNotFoundError(f"no parquet files under {[str(p) for p in paths]}")
    df = pd.concat(frames, ignore_index=True)
    html_dirs = sorted({h for p in paths if p.is_dir() for h in p.resolve().parent.glob("*_ingest/artifacts/html")})
    if html_dirs and "doc_id" in df.columns:  # a run's stage folder: page HTML is ingest's artifact, not meta
        from pipelines.stages.code_web_pages import load_pages

        pages: dict[str, str] = {}
        for h in html_dirs:
            pages.update(load_pages(str(h), -1, df["doc_id"].tolist()))
        df["_html"] = df["doc_id"].map(pages)
    return df


def split_classes(df: pd.DataFrame, positive: list[str], negative: list[str]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(positives, negatives): programming-language code; prose without HTML code blocks."""
    from curation.quality.code_language import detect_language, language_kind
    from curation.quality.code_pages import page_html
    from curation.quality.html_code import code_tag_stats

    pos = df[df["source"].isin(positive)].copy()
    langs = [lang if isinstance(lang, str) and lang else detect_language(p if isinstance(p, str) else None, t)
             for lang, p, t in zip(pos.get("language", [None] * len(pos)), pos.get("path", [None] * len(pos)), pos["text"], strict=True)]
    pos = pos[[language_kind(lang) == "programming" for lang in langs]]
    neg = df[df["source"].isin(negative)].copy()
    if "meta" in neg.columns or "_html" in neg.columns:
        keep = []
        metas = neg["meta"] if "meta" in neg.columns else [None] * len(neg)
        pages = neg["_html"] if "_html" in neg.columns else [None] * len(neg)
        for m, page in zip(metas, pages, strict=True):
            html = page if isinstance(page, str) else page_html(m)
            keep.append(not (html and code_tag_stats(html).recalled()))
        neg = neg[keep]
    return pos, neg


def group_of(row: pd.Series) -> str:
    """The unit of the held-out split: repository for code, host for web pages, else the text's
    first 200 characters (by a digest: Python's ``hash`` of a string differs between processes,
    which would hold out other documents on every run)."""
    for key in ("repo", "url"):
        v = row.get(key)
        if isinstance(v, str) and v:
            return v.split("/")[2] if key == "url" and "//" in v else v
    text = row.get("text")
    head = text[:200] if isinstance(text, str) else ""
    return "text:" + hashlib.blake2b(head.encode("utf-8", "surrogatepass"), digest_size=8).hexdigest()


def is_holdout(group: str, share: float) -> bool:
    return int(hashlib.blake2b(group.encode(), digest_size=4).hexdigest(), 16) / 2**32 < share


def main(args: argparse.Namespace) -> int:
    from classifiers.code_content import fit_code_content, training_windows

    df = read_inputs(args.input)
    pos, neg = split_classes(df, args.positive_sources, args.negative_sources)
    if pos.empty or neg.empty:
        log.error("need both classes: %d positive and %d negative documents", len(pos), len(neg))
        return 2
    rng = np.random.default_rng(args.seed)
    parts: dict[str, dict[str, list[str]]] = {"train": {"pos": [], "neg": []}, "test": {"pos": [], "neg": []}}
    for name, frame in (("pos", pos), ("neg", neg)):
        if len(frame) > args.max_docs:
            frame = frame.iloc[np.sort(rng.choice(len(frame), args.max_docs, replace=False))]
        for _, row in frame.iterrows():
            part = "test" if is_holdout(group_of(row), args.holdout) else "train"
            parts[part][name].append(row["text"])
    texts, labels = training_windows(parts["train"]["pos"], parts["train"]["neg"], args.window_lines, seed=args.seed)
    model = fit_code_content(texts, labels, n_features=args.n_features, epochs=args.epochs, seed=args.seed)
    metrics = evaluate(model, parts["test"]["pos"], parts["test"]["neg"], args.window_lines)
    model.save(
        args.output,
        model_version=args.model_version,
        window_lines=args.window_lines,
        intended_use="code_web recall: P(window of text is source code); page score = max over windows",
        training_data={"positives": f"sources {args.positive_sources} (programming languages)",
                       "negatives": f"sources {args.negative_sources} without HTML code blocks",
                       "train_windows": len(texts), "train_docs": {k: len(v) for k, v in parts["train"].items()},
                       "holdout_docs": {k: len(v) for k, v in parts["test"].items()}},
        holdout_metrics=metrics,
    )
    log.info("code-content model written to %s: %s", args.output, json.dumps(metrics))
    print(json.dumps({"output": str(args.output), "holdout": metrics}, indent=2))
    return 0


def evaluate(model: Any, pos: list[str], neg: list[str], window_lines: int, threshold: float = 0.5) -> dict[str, Any]:
    """Held-out window-level and document-level precision / recall at ``threshold``."""
    from classifiers.code_content import training_windows, windows

    if not pos or not neg:
        return {}
    texts, labels = training_windows(pos, neg, window_lines, seed=1)
    pred = model.predict(texts) >= threshold
    doc_scores = [float(model.predict(windows(t, window_lines) or [""]).max()) for t in pos + neg]
    doc_pred = np.array(doc_scores) >= threshold
    doc_labels = np.array([1] * len(pos) + [0] * len(neg))
    return {"threshold": threshold, "windows": _pr(pred, labels > 0.5), "documents": _pr(doc_pred, doc_labels > 0)}


def _pr(pred: np.ndarray, truth: np.ndarray) -> dict[str, float]:
    tp = int((pred & truth).sum())
    return {"precision": round(tp / max(int(pred.sum()), 1), 4), "recall": round(tp / max(int(truth.sum()), 1), 4),
            "n_pos": int(truth.sum()), "n_neg": int((~truth).sum())}
