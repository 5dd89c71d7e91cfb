"""Train an edu scorer from LLM annotations or labels: ridge head on embeddings, or hashed n-grams.

    curate train-classifier edu --run runs/x --output models/edu_glm45          # a run's annotations
    curate train-classifier edu --labels labels.parquet --output models/edu_mine --kind hashed
    curate train-classifier edu --labels train.parquet --prior --eval heldout.parquet --output DIR

``--run`` reads ``70_edu_score/artifacts/annotations`` of a run folder (or ``artifacts/annotations``
of an edu_score stage folder given itself) and reuses the run's stored embeddings (SemDeDup's and
edu_score's); nothing already embedded is embedded again. Rows without a score (failed
annotations, empty cells) are left out with a warning that counts them by reason. ``--labels`` reads a
Parquet or JSON-lines file with ``text`` and ``score`` columns (``doc_id`` and ``group`` optional;
rows of one group stay on one side of the held-out split). The model is saved without pickle
(``head.npz`` or ``weights.npz``) with a JSON model card holding the data, the rubric and the
held-out metrics (MAE, Spearman, F1 at the threshold, confusion matrix; ROC AUC when the
evaluation file has a boolean ``positive`` column).
"""

from __future__ import annotations

import argparse
import json
import logging
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from curation.config import ConfigError
from curation.ingest.discover import InputError
from pipelines.commands.train_edu_labels import check_scores, check_spread, read_labels, say_dropped

log = logging.getLogger(__name__)

#: Fewer held-out (or --eval) rows than this evaluate nothing: a warning says so.
MIN_EVAL_ROWS = 10


def add_arguments(parser: argparse.ArgumentParser) -> None:
    src = parser.add_mutually_exclusive_group(required=True)
    src.add_argument(
        "--run", type=Path, help="run folder (or its edu_score stage folder) whose edu_score annotations to distil"
    )
    src.add_argument("--labels", type=Path, help="Parquet / JSON-lines file with text and score columns")
    parser.add_argument("--output", type=Path, required=True, help="model folder to write")
    parser.add_argument(
        "--kind",
        choices=("head", "hashed"),
        default="head",
        help="ridge head on embeddings (FineWeb-Edu) or hashed n-grams",
    )
    parser.add_argument("--text-column", default="text")
    parser.add_argument("--score-column", default="score")
    parser.add_argument("--group-column", default=None, help="rows sharing a value stay on one side of the split")
    parser.add_argument(
        "--embeddings", type=Path, nargs="*", default=[], help="embeddings folders to reuse (doc_id → vector)"
    )
    parser.add_argument(
        "--prior", action="store_true", help="stack the zero-shot rubric prior (how the shipped default is built)"
    )
    parser.add_argument("--heldout-fraction", type=float, default=0.2)
    parser.add_argument(
        "--eval", type=Path, default=None, help="a separate labelled file to evaluate on after training"
    )
    parser.add_argument("--threshold", type=float, default=3.0, help="F1 threshold (FineWeb-Edu: 3)")
    parser.add_argument("--l2", type=float, default=None, help="ridge penalty (default: grouped cross-validation)")
    parser.add_argument("--device", default="auto")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--name", default="edu_distilled", help="model name in the card")
    parser.add_argument("--card", type=Path, default=None, help="JSON file of extra model-card fields (data, licences)")


def main(args: argparse.Namespace) -> int:
    labels, info, vector_dirs = _load(args)
    check_spread(labels["score"], args.labels if args.labels is not None else f"the annotations of run {args.run}")
    card: dict[str, Any] = {"name": args.name, "version": "1", **info}
    if args.card:
        card.update(json.loads(Path(args.card).read_text()))
    if args.kind == "hashed":
        metrics = _train_hashed(labels, args, card)
    else:
        metrics = _train_head(labels, args, card, vector_dirs)
    held = (metrics.get("heldout") or {}).get("n", 0) + (metrics.get("eval") or {}).get("n", 0)
    if held < MIN_EVAL_ROWS:
        log.warning(
            "train-classifier edu: %d labelled row(s), %d of them held out: too few to evaluate the model (its "
            "card has no held-out metrics worth reading); add labels, or pass --eval FILE with labelled rows it "
            "was not trained on",
            len(labels),
            (metrics.get("heldout") or {}).get("n", 0),
        )
    print(json.dumps({"output": str(args.output), "metrics": metrics}, indent=2, sort_keys=True, default=str))
    return 0


def _load(args: argparse.Namespace) -> tuple[pd.DataFrame, dict[str, Any], list[Path]]:
    if args.run is not None:
        from pipelines.stages import folder_name

        stage = edu_stage(args.run)
        ann_dir = stage / "artifacts" / "annotations"
        frame = pd.read_parquet(ann_dir / "annotations.parquet")
        meta = json.loads((ann_dir / "annotations.json").read_text())
        say_dropped(frame, frame["score"], ann_dir / "annotations.parquet")
        frame = frame[frame["score"].notna()]
        labels = pd.DataFrame(
            {
                "doc_id": frame["doc_id"].astype(str),
                "text": frame["text"].fillna(""),
                "score": frame["score"].astype(float),
                "group": frame["doc_id"].astype(str),
            }
        )
        dirs = [stage.parent / folder_name("semdedup") / "artifacts" / "embeddings", stage / "artifacts" / "embeddings"]
        info = {
            "trained_on": f"LLM annotations of run {args.run}",
            "annotator": meta["annotator"],
            "rubric": meta["rubric"],
        }
        return labels.reset_index(drop=True), info, [d for d in dirs if d.exists()] + list(args.embeddings)
    raw = read_labels(args.labels)
    for col in (args.text_column, args.score_column):
        if col not in raw.columns:
            raise ConfigError(f"{args.labels} has no column {col!r}; columns: {list(raw.columns)}")
    from classifiers.rubrics import get_rubric

    rubric = get_rubric("edu")
    labels = pd.DataFrame(
        {
            "doc_id": raw["doc_id"].astype(str) if "doc_id" in raw.columns else [f"row{i}" for i in range(len(raw))],
            "text": raw[args.text_column].fillna("").astype(str),
            "score": check_scores(raw[args.score_column], args.labels, args.score_column, rubric.scale),
        }
    )
    group_col = args.group_column or ("group" if "group" in raw.columns else None)
    labels["group"] = raw[group_col].astype(str).to_numpy() if group_col else labels["doc_id"]
    if "positive" in raw.columns:
        labels["positive"] = raw["positive"].astype(bool).to_numpy()
    say_dropped(raw, labels["score"], args.labels)
    labels = labels[labels["score"].notna()].reset_index(drop=True)
    if labels.empty:
        raise InputError(f"{args.labels}: no row has a score in column {args.score_column!r}; nothing to train on")
    info = {"trained_on": str(args.labels), "rubric": rubric.version}
    return labels, info, list(args.embeddings)


def edu_stage(run: Path) -> Path:
    """The edu_score folder whose annotations ``--run`` names: ``run`` itself when it is one (any name,
    e.g. a stage run on its own), else the run's ``70_edu_score``; a warning when its output is
    marked incomplete (requests that got no answer: a re-run of the stage asks for them)."""
    from pipelines.marker import read_marker
    from pipelines.stages import folder_name

    where = Path("artifacts") / "annotations" / "annotations.parquet"
    stage = next((d for d in (run, run / folder_name("edu_score")) if (d / where).is_file()), None)
    if stage is None:
        raise FileNotFoundError(
            f"{run} holds no edu_score annotations: give the run folder (whose {folder_name('edu_score')}/"
            f"{where} holds them) or an edu_score stage folder holding {where}, of an edu_score run with an annotator"
        )
    incomplete = (read_marker(stage) or {}).get("incomplete")
    if incomplete:
        log.warning(
            "train-classifier edu: %s is marked incomplete (%s): training on the annotations it has; re-run its "
            "edu_score (the same command) to ask for the rest first",
            stage,
            incomplete,
        )
    return stage


def _vectors(frame: pd.DataFrame, dirs: list[Path], args: argparse.Namespace) -> np.ndarray:
    """Embeddings of ``frame``'s documents: stored ones first, the rest embedded now."""
    from classifiers.embedding_head import DEFAULT_EMBEDDER
    from classifiers.vector_source import VectorSource, compatible, embedding_card

    usable = [Path(d) for d in dirs if compatible(Path(d), DEFAULT_EMBEDDER)]
    given = {Path(d) for d in args.embeddings}
    for d in (
        Path(d) for d in dirs if Path(d) not in usable
    ):  # e.g. --profile cpu's 128-d static vectors: a head needs its own
        # the run's own folders: expected, nothing to change (INFO); a folder given with --embeddings: give another
        log.log(
            logging.WARNING if d in given else logging.INFO,
            "%s holds vectors of %s, the head needs %s: embedding again (the card names the embedder that scores)%s",
            d,
            embedding_card(d).get("embedder", {}).get("model"),
            DEFAULT_EMBEDDER.get("model"),
            f"; --embeddings reuses only vectors of {DEFAULT_EMBEDDER.get('model')}" if d in given else "",
        )
    source = VectorSource(tuple(usable), DEFAULT_EMBEDDER)
    x = source.vectors(
        frame["doc_id"].astype(str).tolist(),
        frame["text"].tolist(),
        None,
        device=args.device,
        batch_size=args.batch_size,
    )
    return x.astype(np.float64)


def _train_head(
    labels: pd.DataFrame, args: argparse.Namespace, card: dict[str, Any], dirs: list[Path]
) -> dict[str, Any]:
    from classifiers.edu_train import (
        anchor_vectors,
        distil_head,
        fit_reference_head,
        heldout_mask,
        regression_metrics,
        roc_auc,
    )
    from classifiers.embedding_head import DEFAULT_EMBEDDER

    x = _vectors(labels, dirs, args)
    y = labels["score"].to_numpy()
    groups = labels["group"].tolist()
    if not args.prior:
        head, metrics = distil_head(
            x, y, groups, heldout_fraction=args.heldout_fraction, threshold=args.threshold, l2=args.l2, card=card
        )
    else:
        from classifiers.embedding import get_embedder

        emb = get_embedder(**DEFAULT_EMBEDDER, device=args.device, batch_size=args.batch_size)
        pos, neg = anchor_vectors(emb.embed)
        held = (
            heldout_mask(groups, args.heldout_fraction) if args.heldout_fraction > 0 else np.zeros(len(y), dtype=bool)
        )
        train = ~held
        head, info = fit_reference_head(
            x[train], y[train], [g for g, t in zip(groups, train, strict=True) if t], pos, neg, l2=args.l2, card=card
        )
        metrics = {
            **info,
            "n_train": int(train.sum()),
            "train": regression_metrics(y[train], head.predict_embeddings(x[train]), args.threshold),
        }
        if held.any():
            metrics["heldout"] = regression_metrics(y[held], head.predict_embeddings(x[held]), args.threshold)
            if "positive" in labels.columns:
                metrics["heldout"]["auc"] = round(
                    roc_auc(labels["positive"].to_numpy()[held], head.predict_embeddings(x[held])), 4
                )
        head.card["metrics"] = metrics
    if args.eval is not None:
        ev = _load_eval(args)
        pred = head.predict_embeddings(_vectors(ev, dirs, args))
        metrics["eval"] = _eval_metrics(ev, pred, args.threshold)
        head.card["metrics"] = metrics
        head.card["evaluated_on"] = str(args.eval)
    head.save(args.output)
    return metrics


def _train_hashed(labels: pd.DataFrame, args: argparse.Namespace, card: dict[str, Any]) -> dict[str, Any]:
    from classifiers.edu_train import heldout_mask, regression_metrics
    from classifiers.linear import HashedLinearModel
    from classifiers.linear_train import fit_linear

    held = (
        heldout_mask(labels["group"].tolist(), args.heldout_fraction)
        if args.heldout_fraction > 0
        else np.zeros(len(labels), bool)
    )
    train = labels[~held]
    model = fit_linear(
        HashedLinearModel(task="regression"), train["text"].tolist(), train["score"].to_numpy(), epochs=20
    )
    metrics: dict[str, Any] = {"n_train": len(train)}
    if held.any():
        pred = np.clip(model.predict(labels.loc[held, "text"].tolist()), 0, 5)
        metrics["heldout"] = regression_metrics(labels.loc[held, "score"].to_numpy(), pred, args.threshold)
    if args.eval is not None:
        ev = _load_eval(args)
        metrics["eval"] = _eval_metrics(ev, np.clip(model.predict(ev["text"].tolist()), 0, 5), args.threshold)
    model.save(args.output, **card, metrics=metrics)
    return metrics


def _load_eval(args: argparse.Namespace) -> pd.DataFrame:
    sub = argparse.Namespace(**{**vars(args), "labels": args.eval, "run": None})
    return _load(sub)[0]


def _eval_metrics(frame: pd.DataFrame, pred: np.ndarray, threshold: float) -> dict[str, Any]:
    from classifiers.edu_train import regression_metrics, roc_auc

    out = regression_metrics(frame["score"].to_numpy(), pred, threshold)
    if "positive" in frame.columns:
        out["auc"] = round(roc_auc(frame["positive"].to_numpy(), pred), 4)
    return out
