"""Train the learned code-quality scorer from LLM annotations (code_quality rubric, 0–10).

    curate train-classifier code-quality --input runs/x/50_code_quality --output models/code_quality \\
        --annotator '{"backend": "openai", "base_url": "http://localhost:8000/v1", "model": "…"}' --sample 20000

A sample of code files is annotated with ``classifiers.annotation`` (rubric ``code_quality``,
Seed-Coder's readability / modularity / clarity / reusability, 0–10; answers cached by model,
rubric version and text hash) — or scores come from ``--labels`` (JSONL ``{"doc_id", "score"}``)
— and a hashed n-gram regression model is fitted on them; held-out MAE and Spearman
correlation go into the model card. Use it with ``code_quality.scorers=[structural,learned]``
and ``code_quality.learned_model=<output>``.
"""

from __future__ import annotations

import argparse
import json
import logging
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from curation.ingest.inputs import InputError
from pipelines.commands import positive_int, read_labels, share
from pipelines.commands.train_code_content import group_of, is_holdout, read_inputs

log = logging.getLogger(__name__)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--input", nargs="+", action="extend", required=True, type=Path, help="stage folders (docs/) or parquet files"
    )
    parser.add_argument("--output", required=True, type=Path)
    parser.add_argument(
        "--labels", type=Path, default=None, help="JSONL with doc_id and score (0–10) instead of an annotator"
    )
    parser.add_argument(
        "--annotator",
        default='{"backend": "local", "doc_tokens": 768}',
        help="JSON config for classifiers.annotation.get_annotator (default: %(default)s, the CPU judge: for trying "
        "the path; a real model needs an openai or vllm backend, or --labels)",
    )
    parser.add_argument(
        "--cache-dir",
        "--cache",
        dest="cache",
        type=Path,
        default=None,
        help="annotation cache folder (--cache-dir as in the other commands; --cache too)",
    )
    parser.add_argument("--sample", type=positive_int, default=2000, help="files to annotate (default %(default)s)")
    parser.add_argument("--sources", nargs="+", default=["code"])
    parser.add_argument("--n-features", type=positive_int, default=2**18)
    parser.add_argument("--epochs", type=positive_int, default=8)
    parser.add_argument("--holdout", type=share, default=0.2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--model-version", default="1")


def annotate(texts: list[str], args: argparse.Namespace) -> tuple[np.ndarray, dict[str, Any]]:
    """Scores from the LLM annotator (NaN where it failed) and what produced them."""
    from classifiers.annotation import get_annotator  # the annotators edu_score uses
    from classifiers.rubrics import get_rubric
    from pipelines.commands.judge_failures import check_judge
    from pipelines.commands.judge_progress import annotate_with_progress, warn_if_local

    rubric = get_rubric("code_quality")
    config = json.loads(args.annotator)
    if args.cache is not None:
        config.setdefault("cache_dir", str(args.cache))
    warn_if_local(config, len(texts), log)
    annotator = get_annotator(config)
    result = annotate_with_progress(annotator, texts, rubric, config, log, "train-classifier code-quality")
    check_judge("train-classifier code-quality", result, config, needed=10)
    model_id = getattr(annotator, "model_id", None) or getattr(getattr(annotator, "inner", None), "model_id", None)
    return np.asarray(result.scores, dtype=np.float64), {
        "annotator": model_id or config.get("backend"),
        "rubric": rubric.name,
        "rubric_version": rubric.version,
    }


def main(args: argparse.Namespace) -> int:
    from classifiers.code_quality import learned_input
    from classifiers.linear import HashedLinearModel
    from classifiers.linear_train import fit_linear

    df = read_inputs(args.input)
    df = df[df["source"].isin(args.sources)].reset_index(drop=True)
    if "doc_id" not in df.columns:
        df["doc_id"] = [str(i) for i in range(len(df))]
    if args.labels is not None:
        labels = read_labels(args.labels, ("doc_id", "score"))
        off = pd.to_numeric(labels["score"], errors="coerce")
        if off.isna().any() or not off.between(0, 10).all():
            bad = labels["score"][off.isna() | ~off.between(0, 10)].head(3).tolist()
            raise InputError(f"{args.labels}: score must be a number from 0 to 10 (the code-quality scale); e.g. {bad}")
        df = df.merge(labels[["doc_id", "score"]], on="doc_id", how="inner")
        provenance: dict[str, Any] = {
            "annotator": f"labels file {args.labels.name}",
            "rubric": "code_quality",
            "rubric_version": "external",
        }
    else:
        if len(df) > args.sample:
            df = df.sample(args.sample, random_state=args.seed).reset_index(drop=True)
        scores, provenance = annotate(df["text"].tolist(), args)
        df["score"] = scores
    df = df[np.isfinite(pd.to_numeric(df["score"], errors="coerce"))]
    if len(df) < 10:
        log.error("only %d annotated files; need at least 10", len(df))
        return 2
    langs = df["language"] if "language" in df.columns else pd.Series([None] * len(df))
    df["input"] = [
        learned_input(t, lang if isinstance(lang, str) else None) for t, lang in zip(df["text"], langs, strict=True)
    ]
    test = np.array([is_holdout(group_of(row), args.holdout) for _, row in df.iterrows()])
    train = df[~test]
    model = HashedLinearModel(n_features=args.n_features, task="regression", max_chars=8000)
    fit_linear(
        model, train["input"].tolist(), train["score"].to_numpy(float), epochs=args.epochs, lr=0.2, seed=args.seed
    )
    metrics: dict[str, Any] = {"n_train": int((~test).sum()), "n_holdout": int(test.sum())}
    if test.sum() >= 5:
        from scipy.stats import spearmanr

        pred = np.clip(model.predict(df.loc[test, "input"].tolist()), 0, 10)
        truth = df.loc[test, "score"].to_numpy(float)
        metrics["mae"] = round(float(np.abs(pred - truth).mean()), 4)
        metrics["spearman"] = round(float(spearmanr(pred, truth).statistic), 4)
    model.save(
        args.output,
        model_version=args.model_version,
        **provenance,
        holdout_metrics=metrics,
        intended_use="code_quality learned scorer (0–10); a score, never a decision",
    )
    print(json.dumps({"output": str(args.output), "holdout": metrics}, indent=2))
    return 0
