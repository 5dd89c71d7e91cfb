"""The edu classifier's calibration: LLM-annotated scores against the classifier's predictions.

>>> # cal = edu_calibration(run)        # doc_id, source, annotated, predicted
>>> # calibration_summary(cal, 3.0)     # n, MAE, Spearman, precision/recall/F1 at the threshold
>>> # edu_stage_metrics(run)            # the stage's own held-out metrics of its distilled scorer

The ``edu_score`` stage stores its annotations as an artifact (``artifacts/annotations/
annotations.parquet`` with ``doc_id`` and ``score``, null when the answer could not be read);
the prediction is the ``edu_score`` column the stage wrote. Nothing is rescored. When the
scorer was distilled from these very annotations the comparison is in-sample; the stage's
held-out metrics (``stats.json`` extra ``distillation``) are in :func:`edu_stage_metrics`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pyarrow.parquet as pq

from curation.stats.run import Run

STAGE = "edu_score"
#: Column names an annotation artifact may use for the LLM's score, in order of preference.
ANNOTATION_SCORE_COLUMNS = ("annotated", "annotation", "edu_annotation", "llm_score", "score")
CALIBRATION_COLUMNS = ["doc_id", "source", "annotated", "predicted"]


def edu_annotations(run: Run, artifact: str = "annotations") -> pd.DataFrame:
    """``doc_id`` and ``annotated`` score of every annotated document (failed annotations left out)."""
    out = run.stage(STAGE)
    folder = out.artifact(artifact) if out else None
    files = sorted(folder.rglob("*.parquet")) if folder else []
    frames = []
    for f in files:
        names = pq.read_schema(f).names
        col = next((c for c in ANNOTATION_SCORE_COLUMNS if c in names), None)
        if "doc_id" not in names or col is None:
            continue
        t = pq.read_table(f, columns=["doc_id", col]).to_pandas()
        frames.append(t.rename(columns={col: "annotated"}))
    if not frames:
        return pd.DataFrame({"doc_id": pd.Series(dtype=object), "annotated": pd.Series(dtype="float64")})
    ann = pd.concat(frames, ignore_index=True)
    ann["annotated"] = pd.to_numeric(ann["annotated"], errors="coerce")
    return ann.dropna(subset=["annotated"]).drop_duplicates("doc_id", keep="last").reset_index(drop=True)


def edu_calibration(run: Run) -> pd.DataFrame:
    """Annotated documents with the ``edu_score`` the stage predicted (documents it dropped have none)."""
    ann = edu_annotations(run)
    if ann.empty or not run.has(STAGE) or "edu_score" not in run.doc_columns(STAGE):
        return pd.DataFrame({c: pd.Series(dtype=t) for c, t in zip(CALIBRATION_COLUMNS, [object, object, "float64", "float64"], strict=True)})
    docs = run.docs(STAGE, ["doc_id", "source", "edu_score"], ids=ann["doc_id"].tolist())
    cal = ann.merge(docs, on="doc_id", how="inner").rename(columns={"edu_score": "predicted"})
    cal["predicted"] = pd.to_numeric(cal["predicted"], errors="coerce")
    cal = cal.dropna(subset=["predicted"])
    return cal[CALIBRATION_COLUMNS].sort_values("doc_id").reset_index(drop=True)


def edu_stage_metrics(run: Run) -> pd.DataFrame:
    """What the stage itself recorded (``stats.json`` extra): annotation counts, distillation metrics.

    One row per dotted key (``distillation.metrics.heldout.mae`` …); matrices are left to
    :func:`edu_confusion`.
    """
    out = run.stage(STAGE)
    if out is None:
        return pd.DataFrame(columns=["key", "value"])
    extra = {k: out.extra[k] for k in ("annotation", "distillation", "scorer") if k in out.extra}
    rows = [{"key": k, "value": v} for k, v in _flat(extra).items() if not isinstance(v, list)]
    return pd.DataFrame(rows, columns=["key", "value"])


def edu_confusion(run: Run) -> pd.DataFrame:
    """The held-out confusion matrix of rounded scores the stage recorded (rows: annotated, columns: predicted)."""
    out = run.stage(STAGE)
    flat = _flat(out.extra.get("distillation", {})) if out else {}
    matrix = next((v for k, v in flat.items() if k.endswith("confusion") and isinstance(v, list)), None)
    if not matrix:
        return pd.DataFrame()
    frame = pd.DataFrame(matrix)
    frame.index.name = "annotated"
    frame.columns.name = "predicted"
    return frame


def _flat(value: Any, prefix: str = "") -> dict[str, Any]:
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for k, v in value.items():
            out.update(_flat(v, f"{prefix}{k}."))
        return out
    return {prefix.rstrip("."): value}


def edu_threshold(run: Run, default: float = 3.0) -> float:
    """The threshold the edu_score stage was configured with (``threshold`` key), else ``default``."""
    out = run.stage(STAGE)
    cfg = (out.stats.get("config") or {}) if out else {}
    value = cfg.get("threshold")
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else default


def calibration_summary(cal: pd.DataFrame, threshold: float = 3.0) -> dict[str, Any]:
    """Agreement of predictions with annotations: MAE, Spearman, and F1 of "≥ threshold".

    >>> cal = pd.DataFrame({"annotated": [0.0, 1.0, 4.0, 5.0], "predicted": [0.5, 1.5, 3.5, 2.0]})
    >>> s = calibration_summary(cal, 3.0); (s["n"], s["mae"], s["tp"], s["fn"])
    (4, 1.125, 1, 1)
    """
    if cal.empty:
        return {"n": 0}
    a, p = cal["annotated"].to_numpy(dtype="float64"), cal["predicted"].to_numpy(dtype="float64")
    ta, tp_ = a >= threshold, p >= threshold
    tp, fp, fn, tn = int((ta & tp_).sum()), int((~ta & tp_).sum()), int((ta & ~tp_).sum()), int((~ta & ~tp_).sum())
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    spearman = float(pd.Series(a).corr(pd.Series(p), method="spearman")) if len(a) > 1 else float("nan")
    return {
        "n": len(a), "threshold": threshold, "mae": float(np.mean(np.abs(a - p))), "spearman": spearman,
        "tp": tp, "fp": fp, "fn": fn, "tn": tn, "precision": precision, "recall": recall,
        "f1": 2 * precision * recall / (precision + recall) if precision + recall else 0.0,
    }
