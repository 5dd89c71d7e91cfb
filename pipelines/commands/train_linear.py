"""Train a hashed n-gram linear classifier (fastText-style) from labelled or reference-vs-random data.

    # reference vs random web (the DCLM / FineWeb quality-classifier recipe)
    curate train-classifier linear --positive ref.jsonl --negative runs/x/30_semdedup --output models/web_linear
    # labelled data: a 0/1 label (binary) or a number (regression)
    curate train-classifier linear --labelled judged.parquet --label-column rating --task regression --output m

Inputs are JSONL (optionally .gz), Parquet, plain text (one document per line) or stage folders
(``docs/part-*.parquet``). A share of the documents (``--holdout``) is kept out of training and
its AUC (binary) or MAE / Spearman (regression) goes into the model card. Use the model with
``web_quality.scorer_options={linear: {model: DIR}}`` (or any name with ``kind: linear``).
"""

from __future__ import annotations

import argparse
import logging
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from curation.config import ConfigError
from curation.ingest.discover import InputError
from pipelines.commands import non_negative, positive_int, read_labels, share

log = logging.getLogger(__name__)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--positive", nargs="*", type=Path, default=[], help="reference documents (label 1)")
    parser.add_argument("--negative", nargs="*", type=Path, default=[], help="random / low-quality documents (label 0)")
    parser.add_argument("--labelled", nargs="*", type=Path, default=[], help="documents with a label column")
    parser.add_argument("--label-column", default="label")
    parser.add_argument("--text-column", default="text")
    parser.add_argument("--output", required=True, type=Path, help="model folder (weights.npz + model.json)")
    parser.add_argument("--task", choices=("binary", "regression"), default="binary")
    parser.add_argument("--n-features", type=positive_int, default=2**20)
    parser.add_argument("--word-ngrams", type=int, nargs=2, default=(1, 2), metavar=("MIN", "MAX"))
    parser.add_argument("--char-ngrams", type=int, nargs=2, default=(3, 5), metavar=("MIN", "MAX"), help="0 0 = none")
    parser.add_argument("--max-chars", type=int, default=20000, help="characters of a document featurised")
    parser.add_argument("--epochs", type=positive_int, default=5)
    parser.add_argument("--lr", type=non_negative, default=0.5)
    parser.add_argument("--l2", type=non_negative, default=1e-6)
    parser.add_argument("--max-docs", type=positive_int, default=200_000, help="documents per input class at most (sampled)")
    parser.add_argument("--balance", action="store_true", help="weight the classes equally (binary)")
    parser.add_argument("--holdout", type=share, default=0.1, help="share held out for the card's metrics (0 = none)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--name", default=None, help="model name in the card (default: the output folder name)")


def read_texts(path: Path, text_column: str = "text", columns: tuple[str, ...] = ()) -> pd.DataFrame:
    """Documents from a JSONL/Parquet/text file or a stage folder, with ``text`` (+ ``columns``)."""
    path = Path(path)
    if path.is_dir():
        files = sorted((path / "docs" if (path / "docs").is_dir() else path).glob("*.parquet"))
        if not files:
            raise FileNotFoundError(f"{path} has no parquet files (a stage folder has docs/part-*.parquet)")
        return pd.concat([read_texts(f, text_column, columns) for f in files], ignore_index=True)
    if not path.exists():
        raise FileNotFoundError(f"{path} does not exist")
    name = path.name.lower()
    if name.endswith((".parquet", ".jsonl", ".jsonl.gz", ".json", ".json.gz")):
        df = read_labels(path)
    else:
        lines = [ln for ln in path.read_text(encoding="utf-8", errors="replace").splitlines() if ln.strip()]
        df = pd.DataFrame({text_column: lines})
    missing = [c for c in (text_column, *columns) if c not in df.columns]
    if missing:
        raise ConfigError(f"{path} has no column(s) {missing}; columns: {list(df.columns)} (see --text-column / --label-column)")
    out = pd.DataFrame({"text": df[text_column].fillna("").astype(str)})
    for c in columns:
        out[c] = df[c].to_numpy()
    return out


def _sample(df: pd.DataFrame, n: int, seed: int) -> pd.DataFrame:
    return df.sample(n=n, random_state=seed) if len(df) > n else df


def training_frame(args: argparse.Namespace) -> pd.DataFrame:
    """``text`` + ``y`` from the inputs of the command line."""
    frames = []
    if args.labelled:
        lab = pd.concat([read_texts(p, args.text_column, (args.label_column,)) for p in args.labelled], ignore_index=True)
        frames.append(_sample(lab.rename(columns={args.label_column: "y"}), args.max_docs, args.seed))
    for paths, label in ((args.positive, 1.0), (args.negative, 0.0)):
        if paths:
            docs = pd.concat([read_texts(p, args.text_column) for p in paths], ignore_index=True)
            frames.append(_sample(docs, args.max_docs, args.seed).assign(y=label))
    if not frames:
        raise ConfigError("give --positive and --negative files, or --labelled files with a label column")
    if tuple(args.word_ngrams) == (0, 0) and tuple(args.char_ngrams) == (0, 0):
        raise ConfigError("--word-ngrams 0 0 and --char-ngrams 0 0 leave no feature to learn from; keep one of them")
    same = {Path(p).resolve() for p in args.positive} & {Path(p).resolve() for p in args.negative}
    if same:
        raise ConfigError(f"{sorted(same)[0]} is given as both --positive and --negative: the classes must differ")
    df = pd.concat(frames, ignore_index=True)
    df = _usable_rows(df, args)
    if args.task == "binary" and not df["y"].isin([0.0, 1.0]).all():
        raise InputError(f"--task binary needs labels 0/1; {args.label_column} has {sorted(df['y'].unique())[:5]} — "
                         "use --task regression for graded labels")
    if args.task == "binary" and df["y"].nunique() < 2:
        raise InputError(f"binary training needs documents of both classes; {_no_class(df, args)}")
    if len(df) < 20:
        log.warning("only %d labelled documents: the model and its held-out figures say little (give hundreds or more)", len(df))
    return df


def _usable_rows(df: pd.DataFrame, args: argparse.Namespace) -> pd.DataFrame:
    """The rows with text and a numeric label; a warning counts the others by reason (as ``edu --labels`` does)."""
    raw = df["y"]
    y = pd.to_numeric(raw, errors="coerce")
    blank = raw.isna() | raw.astype(str).str.strip().eq("")
    reasons = pd.Series(np.select([blank, y.isna(), df["text"].str.len() == 0],
                                  ["no label", "non-numeric label", "empty text"], default=""), index=df.index)
    left = reasons[reasons != ""]
    if len(left):
        why = ", ".join(f"{r}={n}" for r, n in left.value_counts().items())
        odd = raw[reasons == "non-numeric label"].astype(str).unique()[:3]
        said = f" ({args.label_column} values such as {', '.join(map(repr, odd))})" if len(odd) else ""
        log.warning("train-classifier linear: %d of %d document(s) are left out (%s)%s; training on %d",
                    len(left), len(df), why, said, len(df) - len(left))
    return df.assign(y=y)[reasons == ""].reset_index(drop=True)


def _no_class(df: pd.DataFrame, args: argparse.Namespace) -> str:
    """Which input left a class without documents (an empty file, or only empty texts), by name."""
    label = 1.0 if 1.0 not in set(df["y"]) else 0.0
    option, paths = ("--positive", args.positive) if label == 1.0 else ("--negative", args.negative)
    said = f"{option} {', '.join(map(str, paths))} gave no document with text" if paths else f"no {option} file was given"
    if args.labelled:
        said += f", and no row of --labelled {', '.join(map(str, args.labelled))} has {args.label_column} = {label:g}"
    return said


def metrics(task: str, y: np.ndarray, pred: np.ndarray) -> dict[str, Any]:
    """Held-out metrics for the model card."""
    from scipy.stats import spearmanr

    out: dict[str, Any] = {"n": len(y)}
    if len(y) < 2 or len(np.unique(y)) < 2:
        return out
    if task == "binary":
        out["auc"] = round(float(roc_auc(y, pred)), 4)
        out["accuracy"] = round(float(((pred > 0.5) == (y > 0.5)).mean()), 4)
    else:
        out["mae"] = round(float(np.abs(pred - y).mean()), 4)
    out["spearman"] = round(float(spearmanr(y, pred).correlation), 4)
    return out


def roc_auc(y: np.ndarray, score: np.ndarray) -> float:
    """Area under the ROC curve from ranks (ties averaged).

    >>> roc_auc(np.array([0, 0, 1, 1]), np.array([0.1, 0.4, 0.35, 0.8]))
    0.75
    """
    from scipy.stats import rankdata

    y = np.asarray(y) > 0.5
    r = rankdata(score)
    n1, n0 = int(y.sum()), int((~y).sum())
    return float((r[y].sum() - n1 * (n1 + 1) / 2) / (n1 * n0))


def main(args: argparse.Namespace) -> int:
    from classifiers.linear import HashedLinearModel
    from classifiers.linear_train import fit_linear

    df = training_frame(args)
    rng = np.random.default_rng(args.seed)
    held = rng.random(len(df)) < args.holdout if args.holdout > 0 else np.zeros(len(df), dtype=bool)
    train, test = df[~held], df[held]
    weights = None
    if args.balance and args.task == "binary":
        pos = float(train["y"].mean())
        weights = np.where(train["y"] > 0.5, 0.5 / pos, 0.5 / (1 - pos))
    model = fit_linear(HashedLinearModel(
        n_features=args.n_features, word_ngrams=tuple(args.word_ngrams), char_ngrams=tuple(args.char_ngrams),
        task=args.task, max_chars=args.max_chars,
    ), train["text"].tolist(), train["y"].to_numpy(), epochs=args.epochs, lr=args.lr, l2=args.l2,
          sample_weight=weights, seed=args.seed)
    heldout = metrics(args.task, test["y"].to_numpy(), model.predict(test["text"].tolist())) if len(test) else {"n": 0}
    model.save(
        args.output,
        name=args.name or Path(args.output).name,
        trained_by="curate train-classifier linear",
        training_data={"positive": [str(p) for p in args.positive], "negative": [str(p) for p in args.negative],
                       "labelled": [str(p) for p in args.labelled], "label_column": args.label_column,
                       "n_train": int(len(train)), "class_balance": float(train["y"].mean()) if args.task == "binary" else None},
        heldout_metrics=heldout,
    )
    log.info("linear model written to %s (held out: %s)", args.output, heldout)
    print(f"wrote {args.output}: {len(train)} training documents, held-out {heldout}")
    return 0
