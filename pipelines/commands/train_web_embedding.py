"""Train the web-quality embedding head: LLM annotations (web_quality rubric) → ridge head on embeddings.

    curate train-classifier web-embedding --input runs/x/30_semdedup \\
        --embeddings runs/x/30_semdedup/artifacts/embeddings --sample 2000 \\
        --annotator '{"backend": "local"}' --cache-dir runs/annotations --output models/web_embedding

FineWeb-Edu recipe: an LLM scores a sample of pages with a rubric (here ``web_quality``, 0–5),
a linear regression head is fitted on the pages' embeddings, and the head scores every page from
the run's stored embeddings (never embedding twice). Annotations come from
:mod:`classifiers.annotation` (cached by model, rubric version and text hash), or from a file
with ``doc_id`` and ``score`` columns (``--annotations``). Pages without a stored vector are
embedded with the store's own settings (``embeddings.json``), or ``--embedder-model``.
Use the head with ``web_quality.scorers=[heuristics, linear, embedding]`` and
``web_quality.scorer_options={embedding: {model: DIR}}``.
"""

from __future__ import annotations

import argparse
import json
import logging
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from curation.errors import json_safe
from curation.ingest.discover import InputError
from pipelines.commands import non_negative, positive_int, read_labels, share

log = logging.getLogger(__name__)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--input",
        nargs="+",
        action="extend",
        required=True,
        type=Path,
        help="stage folders or parquet/jsonl files with doc_id, text",
    )
    parser.add_argument("--output", required=True, type=Path, help="head folder (head.npz + model.json)")
    parser.add_argument(
        "--embeddings", type=Path, default=None, help="stored embeddings folder (semdedup's artifacts/embeddings)"
    )
    parser.add_argument(
        "--embedder-model", default="all-MiniLM-L6-v2", help="when there is no store: the model to embed with"
    )
    parser.add_argument("--annotations", type=Path, default=None, help="file with doc_id + score (skips the LLM)")
    parser.add_argument(
        "--annotator",
        default='{"backend": "local"}',
        help="JSON config for classifiers.annotation.get_annotator (default: %(default)s, the CPU "
        "judge: for trying the path; a real head needs an openai or vllm backend, or --annotations)",
    )
    parser.add_argument("--cache-dir", type=Path, default=None, help="annotation cache folder (reused across runs)")
    parser.add_argument("--rubric", default="web_quality")
    parser.add_argument(
        "--sample",
        type=positive_int,
        default=2000,
        help="pages to annotate (default %(default)s; FineWeb-Edu: ~450k at full scale)",
    )
    parser.add_argument("--sources", nargs="+", default=["web"])
    parser.add_argument("--ridge", type=non_negative, default=1.0, help="L2 penalty of the head")
    parser.add_argument("--holdout", type=share, default=0.2)
    parser.add_argument("--seed", type=int, default=0)


def read_docs(paths: list[Path], sources: list[str]) -> pd.DataFrame:
    from pipelines.commands.train_linear import read_texts

    frames = []
    for p in paths:
        df = read_texts(p, "text", ("doc_id",))
        try:
            src = read_texts(p, "text", ("source",))["source"]
            df = df[src.isin(sources).to_numpy()]
        except ValueError:
            pass  # no source column: every document counts
        frames.append(df)
    out = pd.concat(frames, ignore_index=True).drop_duplicates("doc_id")
    if out.empty:
        raise InputError(f"no documents with source in {sources} under {[str(p) for p in paths]}")
    return out.reset_index(drop=True)


def annotate(docs: pd.DataFrame, args: argparse.Namespace) -> tuple[np.ndarray, dict[str, Any]]:
    """Scores of ``docs`` (NaN on failure) and what produced them."""
    if args.annotations:
        ann = read_labels(args.annotations, ("doc_id", "score"))
        from classifiers.rubrics import get_rubric

        low, high = get_rubric(args.rubric).scale
        scores = pd.to_numeric(
            ann["score"], errors="coerce"
        )  # empty cells are left out; text or off the scale is refused
        bad = ann["score"][(scores.isna() & ann["score"].notna()) | (scores.notna() & ~scores.between(low, high))]
        if len(bad):
            raise InputError(
                f"{args.annotations}: score must be a number on the {args.rubric} rubric's scale "
                f"{low}–{high}; e.g. {bad.head(3).tolist()}"
            )
        by_id = ann.drop_duplicates("doc_id").set_index("doc_id")["score"]
        return docs["doc_id"].map(by_id).to_numpy(dtype=np.float64), {"annotations": str(args.annotations)}
    from classifiers.annotation import get_annotator
    from classifiers.rubrics import get_rubric
    from pipelines.commands.judge_failures import check_judge
    from pipelines.commands.judge_progress import annotate_with_progress, warn_if_local

    cfg = json.loads(args.annotator)
    if args.cache_dir:
        cfg.setdefault("cache_dir", str(args.cache_dir))
    warn_if_local(cfg, len(docs), log)
    annotator = get_annotator(cfg)
    rubric = get_rubric(args.rubric)
    res = annotate_with_progress(annotator, docs["text"].tolist(), rubric, cfg, log, "train-classifier web-embedding")
    check_judge("train-classifier web-embedding", res, cfg, needed=10)
    failed = sum(f is not None for f in res.failures)
    return np.asarray(res.scores, dtype=np.float64), {
        "annotator": getattr(annotator, "model_id", cfg.get("backend")),
        "rubric": rubric.name,
        "rubric_version": rubric.version,
        "scale": list(rubric.scale),
        "failures": failed,
    }


def vectors(docs: pd.DataFrame, args: argparse.Namespace) -> tuple[np.ndarray, dict[str, Any]]:
    """Unit embeddings of ``docs``: stored ones where present, the rest embedded with the same settings."""
    from classifiers.embedding import embedding_card, get_embedder, load_embeddings

    settings: dict[str, Any] = {"model": args.embedder_model}
    vecs = None
    have = np.zeros(len(docs), dtype=bool)
    if args.embeddings:
        settings = dict(embedding_card(args.embeddings).get("embedder") or settings)
        ids, stored = load_embeddings(args.embeddings)
        pos = {d: i for i, d in enumerate(ids)}
        idx = np.array([pos.get(d, -1) for d in docs["doc_id"]])
        have = idx >= 0
        vecs = np.zeros((len(docs), stored.shape[1]), dtype=np.float32)
        vecs[have] = stored[idx[have]]
    if not have.all():
        fresh = get_embedder(**settings).embed(docs.loc[~have, "text"].tolist())
        if vecs is None:
            vecs = fresh
        else:
            vecs[~have] = fresh
    log.info("web-embedding: %d stored vectors, %d embedded here", int(have.sum()), int((~have).sum()))
    return vecs, {k: v for k, v in settings.items() if k not in ("device", "batch_size")}


def fit_ridge(x: np.ndarray, y: np.ndarray, penalty: float) -> tuple[np.ndarray, float]:
    """Ridge regression with an unpenalised bias, closed form.

    >>> x = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    >>> w, b = fit_ridge(x, x @ np.array([2.0, -1.0]) + 0.5, 1e-9)
    >>> np.round(w, 3).tolist(), round(b, 3)
    ([2.0, -1.0], 0.5)
    """
    mu_x, mu_y = x.mean(axis=0), float(y.mean())
    xc = x - mu_x
    w = np.linalg.solve(xc.T @ xc + penalty * np.eye(x.shape[1]), xc.T @ (y - mu_y))
    return w, mu_y - float(mu_x @ w)


def main(args: argparse.Namespace) -> int:
    from pipelines.commands.train_linear import metrics

    docs = read_docs(args.input, args.sources)
    if not args.annotations and len(docs) > args.sample:
        docs = docs.sample(n=args.sample, random_state=args.seed).reset_index(drop=True)
    scores, provenance = annotate(docs, args)
    ok = np.isfinite(scores)
    if ok.sum() < 10:
        raise InputError(
            f"only {int(ok.sum())} usable annotations; annotate more pages (--sample) or check the annotator"
        )
    docs, scores = docs[ok].reset_index(drop=True), scores[ok]
    x, settings = vectors(docs, args)
    rng = np.random.default_rng(args.seed)
    held = rng.random(len(docs)) < args.holdout
    w, b = fit_ridge(x[~held].astype(np.float64), scores[~held], args.ridge)
    pred = x[held].astype(np.float64) @ w + b
    heldout = metrics("regression", scores[held], pred) if held.any() else {"n": 0}
    if held.any() and len(np.unique(scores[held] >= 3)) == 2:
        from pipelines.commands.train_linear import roc_auc

        heldout["auc_at_3"] = round(roc_auc(scores[held] >= 3, pred), 4)  # FineWeb-Edu's threshold
    out = Path(args.output)
    out.mkdir(parents=True, exist_ok=True)
    np.savez(out / "head.npz", weights=w.astype(np.float32), bias=np.array([b]))
    card = {
        "kind": "embedding_head",
        "name": out.name,
        "embedder": settings,
        "dim": int(x.shape[1]),
        "trained_by": "curate train-classifier web-embedding",
        "n_train": int((~held).sum()),
        "ridge": args.ridge,
        "heldout_metrics": heldout,
        "labels": provenance,
        "score_mean": float(scores.mean()),
        "intended_use": "quality_score_<name> of the web_quality stage (kind: embedding)",
    }
    (out / "model.json").write_text(
        json.dumps(json_safe(card), indent=2, sort_keys=True, default=str, allow_nan=False) + "\n"
    )
    print(f"wrote {out}: {card['n_train']} annotated pages, held-out {heldout}")
    return 0
