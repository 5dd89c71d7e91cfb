"""What ``edu_score`` makes of its annotations: the failure checks, the ledgered failures, the
distilled head (or hashed n-gram model) with its held-out report, the choice of the scorer in use,
and how well the scores agree with the judge."""

from __future__ import annotations

import hashlib
import json
import logging
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from classifiers.annotation.cache import CACHEABLE_FAILURES
from classifiers.scorer import read_card
from classifiers.vector_source import VectorSource
from curation.config import ConfigError
from curation.errors import ServiceError
from curation.schema import detail_json
from pipelines.io import write_frame, write_json
from pipelines.kit import Artifact, StageContext

log = logging.getLogger(__name__)


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
        report["skipped"] = (f"{len(ok)} usable annotations, fewer than min_annotations = {cfg.min_annotations}: raise "
                             "sample_size or lower min_annotations")
        write_json(out / "distillation.json", report)
        return {}
    flat = spread_problem(ok["score"])
    if flat is not None:  # a head fit to one value puts every document there; its card read F1 1.0
        report["skipped"] = (f"the judge has no spread: {flat}, so a head distilled from it says nothing; check the judge "
                             "(annotator_model, annotator_temperature, the rubric's answer line) or annotate more varied documents")
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


#: Annotations that all lie within this many rubric points of each other have no spread to learn from.
MIN_SPREAD = 0.5


def spread_problem(scores: pd.Series) -> str | None:
    """What makes ``scores`` useless to learn from (all one value, or all within :data:`MIN_SPREAD`), else None.

    ``train-classifier edu`` refuses such labels; ``edu_score`` does not distil from them.

    >>> spread_problem(pd.Series([4.0, 4.0, 4.0])), spread_problem(pd.Series([3.9, 4.1, None]))
    ('every one of its 3 scores is 4', 'its 2 scores all lie within 3.9–4.1')
    >>> spread_problem(pd.Series([1.0, 4.0])) is None
    True
    """
    values = pd.to_numeric(scores, errors="coerce").dropna()
    if values.empty or values.max() - values.min() >= MIN_SPREAD:
        return None
    if values.nunique() == 1:
        return f"every one of its {len(values)} scores is {float(values.iloc[0]):g}"
    return f"its {len(values)} scores all lie within {float(values.min()):g}–{float(values.max()):g}"


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
    card = read_card(path) if path.exists() else {}  # a damaged card: exit 4 naming it (the preflight checks a named one)
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


def check_annotations(annotations: Path, cfg: Any, judge: dict[str, Any]) -> int:
    """Stop or warn about what the judge did not answer usably; returns the transport failures.

    - More than ``max_transport_failures`` of the sample got no answer (server down, timeouts,
      error statuses, bodies that are no completion): ServiceError (exit 10). Fewer: a warning;
      the stage goes on without them and the next run asks again (they are never cached).
    - The judge answered, but not one answer can be read (no score line, a score off the scale):
      ServiceError. Nothing can be learned from such a judge, and its answers are cached, so a
      re-run without a change (model, rubric, endpoint) would fail the same way. More than half
      unreadable: a warning (they are ledgered or kept by ``on_annotation_failure``).

    Each message gives the counts, what the server answered and what to change
    (:mod:`classifiers.annotation.diagnose`).
    """
    from classifiers.annotation import diagnose
    from classifiers.rubrics import get_rubric

    ann = pd.read_parquet(annotations / "annotations.parquet", columns=["failure", "raw"])
    failures = [None if f is None or f != f else str(f) for f in ann["failure"]]
    counts, examples = diagnose.summarise(failures, ann["raw"].tolist())
    transport = {r: n for r, n in counts.items() if diagnose.is_transport(r)}
    unreadable = {r: n for r, n in counts.items() if not diagnose.is_transport(r)}
    n_transport, n_unreadable = sum(transport.values()), sum(unreadable.values())
    answered = len(ann) - n_transport
    if n_transport:
        # not final: the next run computes the step again through the annotation cache, so only the
        # requests that got no answer are sent
        StageContext.redo_next_time(annotations)
        where = judge.get("base_url") or judge.get("backend")
        message = (f"edu_score: {n_transport} of {len(ann)} annotation requests to {where} failed in transport "
                   f"({diagnose.describe(transport, examples)}): {diagnose.likely_fix(transport, examples, judge, answered, diagnose.stopped(failures, ann['raw']))}")
        if n_transport / len(ann) > cfg.max_transport_failures:
            raise ServiceError(f"{message.rstrip('.?')}. Answers already received are cached, a re-run pays only for the rest")
        log.warning("%s. Below max_transport_failures = %g the stage goes on without them; its output is marked incomplete, "
                    "so the next run of the same command re-runs the stage and asks for them, and only for them", message.rstrip(".?"), cfg.max_transport_failures)
    if n_unreadable and (n_unreadable == answered or n_unreadable > answered / 2):
        rubric = get_rubric(cfg.rubric)
        message = (f"edu_score: {n_unreadable} of the judge's {answered} answers cannot be read "
                   f"({diagnose.describe(unreadable, examples)}): {diagnose.unreadable_fix(unreadable, rubric, judge)}")
        if n_unreadable == answered:
            raise ServiceError(f"{message}. Nothing was learned from the judge; the unreadable answers are cached, so change "
                               "one of these before re-running")
        log.warning("%s. Distillation learns from the %d readable ones", message, answered - n_unreadable)
    return n_transport


def answers_digest(annotations: Path) -> str:
    """A digest of the annotations (doc_id, score, failure): what the distilled step learns from.

    The annotations step keeps its folder name when a later run fills in requests that failed in
    transport, so the folder name alone would reuse a head distilled from the incomplete sample."""
    ann = pd.read_parquet(annotations / "annotations.parquet", columns=["doc_id", "score", "failure"])
    rows = pd.util.hash_pandas_object(ann.astype({"doc_id": str, "failure": object}), index=False).to_numpy()
    return hashlib.blake2b(rows.tobytes(), digest_size=8).hexdigest()


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


def warn_ledgered(failed: dict[str, str], annotations: Path, docs: Any, ctx: StageContext) -> dict[str, Any]:
    """Say how much of the stage ``on_annotation_failure: ledger`` removes (documents and tokens, and
    their share of the stage's input): a document leaves the corpus because the judge's answer could
    not be read, not for anything in it, and a sample stratified by length makes the share of tokens
    large. Returns the figures (stats: ``ledgered_annotation_removed``); one more read of ``n_tokens``."""
    if not failed:
        return {}
    ann = pd.read_parquet(annotations / "annotations.parquet", columns=["doc_id", "n_tokens", "failure"])
    ann = ann[ann["doc_id"].astype(str).isin(failed.keys())].drop_duplicates("doc_id")
    meta = pd.DataFrame({"docs": pd.Series(dtype="int64"), "tokens": pd.Series(dtype="int64")})
    total = ctx.compute(docs[["n_tokens"]].map_partitions(_totals, meta=meta), "ledger (share)")
    n_docs, n_tokens = int(total["docs"].sum()), int(total["tokens"].sum())
    removed = int(pd.to_numeric(ann["n_tokens"], errors="coerce").fillna(0).sum())
    reasons = ", ".join(f"{r}={n}" for r, n in ann["failure"].value_counts().items())
    log.warning("edu_score: on_annotation_failure = ledger removes %d of %d document(s) (%.1f%%) and %s of %s tokens (%.1f%%): "
                "the judge's answers to them could not be read (%s); they are annotation_failed ledger rows, removed for the "
                "judge's failure, not for their content; on_annotation_failure=keep keeps and scores them", len(failed), n_docs,
                100 * len(failed) / max(n_docs, 1), f"{removed:,}", f"{n_tokens:,}", 100 * removed / max(n_tokens, 1), reasons)
    return {"documents": len(failed), "tokens": removed, "document_share": round(len(failed) / max(n_docs, 1), 4),
            "token_share": round(removed / max(n_tokens, 1), 4)}


def _totals(df: pd.DataFrame) -> pd.DataFrame:
    """A partition's documents and tokens, one row."""
    return pd.DataFrame({"docs": [len(df)], "tokens": [int(pd.to_numeric(df["n_tokens"], errors="coerce").fillna(0).sum())]})


def scorer_dir(cfg: Any, distilled: Path | None, default: Path) -> Path:
    """The model folder that scores every document, by ``scorer`` (see :mod:`pipelines.stages.edu_score`)."""
    model = distilled / "model" if distilled is not None and (distilled / "model").is_dir() else None
    if cfg.scorer == "default":
        return default
    if cfg.scorer == "fast":  # hashed n-grams distilled from the default, English and Chinese: no transformer
        from classifiers.edu import fast_model_dir

        return fast_model_dir()
    if cfg.scorer == "distilled":
        if model is None:  # exit 2, as train-classifier edu refuses the same annotations
            raise ConfigError(f"edu_score.scorer = 'distilled', but distillation was skipped: {skip_reason(distilled)}; "
                              "or use scorer=auto (the shipped default scores when there is no head)")
        return model
    if cfg.scorer == "auto":
        # The small CPU judge ranks real documents near chance (AUC 0.54): its head is trained and
        # reported, but only a real LLM's distilled head replaces the shipped default.
        if cfg.annotator in ("openai", "vllm") and model is not None:
            return model
        if cfg.fallback_scorer == "fast":
            from classifiers.edu import fast_model_dir

            return fast_model_dir()
        return default
    return Path(cfg.scorer).expanduser()
