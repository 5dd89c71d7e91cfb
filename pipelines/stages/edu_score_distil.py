"""What ``edu_score`` makes of its annotations: the transport check, the ledgered failures, the
distilled head (or hashed n-gram model) with its held-out report, the choice of the scorer in use,
and how well the scores agree with the judge."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from classifiers.annotation.cache import CACHEABLE_FAILURES
from classifiers.vector_source import VectorSource
from curation.schema import detail_json
from pipelines.io import write_frame, write_json
from pipelines.kit import Artifact


def distil(annotations: Path, cfg: Any, vectors: VectorSource, out: Path) -> dict[str, Any]:
    """Train the distilled scorer on the sample's annotations.

    ``distillation.json`` holds the metrics at the FineWeb-Edu threshold 3 (also in the model
    card); ``heldout.parquet`` keeps the held-out annotations and predictions so the stats can
    report F1 at whatever threshold the recipe uses without training again.
    """
    from classifiers.edu_train import distil_head, regression_metrics

    ann = pd.read_parquet(annotations / "annotations.parquet")
    meta = json.loads((annotations / "annotations.json").read_text())
    ok = ann[ann["score"].notna()].reset_index(drop=True)
    report: dict[str, Any] = {"kind": cfg.distil, "annotator": meta["annotator"], "rubric": meta["rubric"], "n_annotated": len(ok)}
    if len(ok) < cfg.min_annotations:
        report["skipped"] = f"{len(ok)} usable annotations, fewer than min_annotations = {cfg.min_annotations}"
        write_json(out / "distillation.json", report)
        return {}
    card = {"name": "edu_distilled", "version": "1", "trained_on": "LLM annotations of a stratified sample of the run",
            "annotator": meta["annotator"], "rubric": meta["rubric"], "n_annotations": len(ok)}
    held = _heldout(ok["doc_id"].tolist(), cfg.holdout_fraction)
    if held.all():
        held[:] = False
    if cfg.distil == "hashed":
        from classifiers.linear import HashedLinearModel
        from classifiers.linear_train import fit_linear

        model = fit_linear(HashedLinearModel(task="regression"), ok.loc[~held, "text"].fillna("").tolist(), ok.loc[~held, "score"], epochs=20)
        pred = np.clip(model.predict(ok.loc[held, "text"].fillna("").tolist()), 0, 5) if held.any() else np.zeros(0)
        metrics: dict[str, Any] = {"n_train": int((~held).sum())}
        if held.any():
            metrics["heldout"] = regression_metrics(ok.loc[held, "score"].to_numpy(), pred, 3.0)
        model.save(out / "model", **card, metrics=metrics)
    else:
        # stored vectors of the sample (any partition); documents outside them are embedded here
        x = vectors.vectors(ok["doc_id"].tolist(), ok["text"].fillna("").tolist(), None, device=cfg.embed_device).astype(np.float64)
        head, metrics = distil_head(x[~held], ok.loc[~held, "score"].to_numpy(), heldout_fraction=0.0, threshold=3.0, card=card)
        pred = head.predict_embeddings(x[held]) if held.any() else np.zeros(0)
        if held.any():
            metrics["heldout"] = regression_metrics(ok.loc[held, "score"].to_numpy(), pred, 3.0)
            head.card["metrics"] = metrics
        head.save(out / "model")
    write_frame(pd.DataFrame({"doc_id": ok.loc[held, "doc_id"], "annotation": ok.loc[held, "score"], "prediction": pred}),
                out / "heldout.parquet")
    report["metrics"] = metrics
    write_json(out / "distillation.json", report)
    return {}


def distillation_report(distilled: Path, threshold: float) -> dict[str, Any]:
    """``distillation.json`` plus held-out metrics at the recipe's threshold (computed, not trained)."""
    from classifiers.edu_train import regression_metrics

    report = json.loads((distilled / "distillation.json").read_text())
    path = distilled / "heldout.parquet"
    if path.exists():
        held = pd.read_parquet(path)
        if len(held):
            report["heldout_at_threshold"] = regression_metrics(held["annotation"].to_numpy(), held["prediction"].to_numpy(), threshold)
    return report


def _heldout(ids: list[str], fraction: float) -> np.ndarray:
    from classifiers.edu_train import heldout_mask

    return heldout_mask(ids, fraction) if fraction > 0 else np.zeros(len(ids), dtype=bool)


def skip_reason(distilled: Path | None) -> str:
    if distilled is None:
        return "no annotations"
    return str(json.loads((distilled / "distillation.json").read_text()).get("skipped", "unknown"))


def card_summary(folder: Path) -> dict[str, Any]:
    path = Path(folder) / "model.json"
    card = json.loads(path.read_text()) if path.exists() else {}
    return {k: card[k] for k in ("name", "version", "kind", "rubric", "annotator", "embedder") if k in card}


def judge_agreement(annotations: Path, scores: Path, threshold: float) -> dict[str, Any]:
    """Agreement of the scores in use with the judge's annotations of the sample: MAE, Spearman, agreement at the threshold."""
    ann = pd.read_parquet(annotations / "annotations.parquet", columns=["doc_id", "score"]).dropna(subset=["score"])
    scored = Artifact(scores).read_all(columns=["doc_id", "edu_score"])
    if ann.empty or scored.empty:  # an input without the stage's sources: empty frames carry no doc_id dtype to merge on
        return {"documents": 0, "note": "too few annotated documents to compare"}
    both = ann.merge(scored.drop_duplicates("doc_id"), on="doc_id").dropna(subset=["edu_score"])
    if len(both) < 3:
        return {"documents": len(both), "note": "too few annotated documents to compare"}
    a, b = both["score"].to_numpy(dtype=float), both["edu_score"].to_numpy(dtype=float)
    rho = pd.Series(a).rank().corr(pd.Series(b).rank())
    return {"documents": len(both), "mae": round(float(np.abs(a - b).mean()), 4),
            "spearman": None if pd.isna(rho) else round(float(rho), 4),
            "agreement_at_threshold": round(float(((a >= threshold) == (b >= threshold)).mean()), 4)}


def check_transport(stats: dict[str, Any], cfg: Any) -> None:
    """Stop when more than ``max_transport_failures`` of the annotation requests never got an answer."""
    transport = sum(v for k, v in stats["failure_reasons"].items() if k not in CACHEABLE_FAILURES)
    if stats["documents"] and transport / stats["documents"] > cfg.max_transport_failures:
        raise RuntimeError(
            f"edu_score: {transport} of {stats['documents']} annotation requests failed in transport "
            f"({stats['failure_reasons']}); is the annotator reachable? Answers already received are "
            "cached, a re-run pays only for the rest"
        )


def failed_annotations(annotations: Path, cfg: Any) -> dict[str, str]:
    """doc_id → ledger detail of documents whose answer could not be read (``on_annotation_failure: ledger``)."""
    if cfg.on_annotation_failure != "ledger":
        return {}
    ann = pd.read_parquet(annotations / "annotations.parquet")
    meta = json.loads((annotations / "annotations.json").read_text())
    bad = ann[ann["failure"].isin(sorted(CACHEABLE_FAILURES))]
    return {
        str(r.doc_id): detail_json(failure=r.failure, answer=str(r.raw)[:500], annotator=meta["annotator"], rubric=meta["rubric"])
        for r in bad.itertuples()
    }


def scorer_dir(cfg: Any, distilled: Path | None, default: Path) -> Path:
    """The model folder that scores every document, by ``scorer`` (see :mod:`pipelines.stages.edu_score`)."""
    model = distilled / "model" if distilled is not None and (distilled / "model").is_dir() else None
    if cfg.scorer == "default":
        return default
    if cfg.scorer == "fast":  # hashed n-grams distilled from the default, English and Chinese: no transformer (--profile cpu)
        from classifiers.edu import fast_model_dir

        return fast_model_dir()
    if cfg.scorer == "distilled":
        if model is None:
            raise RuntimeError(f"edu_score: scorer 'distilled' but distillation was skipped: {skip_reason(distilled)}")
        return model
    if cfg.scorer == "auto":
        # The small CPU judge ranks real documents worse than chance: its head is trained and
        # reported, but only a real LLM's distilled head replaces the shipped default.
        return model if cfg.annotator in ("openai", "vllm") and model is not None else default
    return Path(cfg.scorer).expanduser()
