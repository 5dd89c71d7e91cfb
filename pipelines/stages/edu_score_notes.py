"""What ``edu_score`` says about its judge settings: before anything runs, settings that ask for a
judge and get none, or a judge whose head will not score (:func:`config_notes`); once scored, why
the head distilled from the judge does not score (:func:`unused_head`)."""

from __future__ import annotations

import dataclasses
import logging
from pathlib import Path
from typing import Any

from classifiers.annotation.settings import AnnotatorSettings

#: Judges whose distilled head ``scorer: auto`` scores with.
REAL_JUDGES = ("openai", "vllm")


#: Settings of the sample, its annotation and the distillation: nothing reads them without a judge.
JUDGE_ONLY = (
    "sample_length_edges",
    "sample_allocation",
    "on_annotation_failure",
    "max_transport_failures",
    "distil",
    "holdout_fraction",
    "min_annotations",
)


def _changed(cfg: Any, keys: tuple[str, ...]) -> list[str]:
    """The ``keys`` whose value differs from the config class's default (what the user set)."""
    defaults = {f.name: f.default for f in dataclasses.fields(cfg)}
    return [key for key in keys if _plain(getattr(cfg, key)) != _plain(defaults[key])]


def _plain(value: Any) -> Any:
    """A list for a list or tuple (a recipe gives lists, the defaults are tuples), else the value."""
    return list(value) if isinstance(value, (list, tuple)) else value


def config_notes(cfg: Any, sample_size_default: int) -> list[str]:
    """Warnings for settings that do not do what they ask: judge settings under ``annotator: none``
    (no request is sent), a real judge whose annotations the scorer leaves out, and the embedder's
    settings where nothing is embedded (:func:`embed_notes`)."""
    notes = []
    if cfg.annotator == "none":
        unused = [
            f"annotator_{f.name}"
            for f in dataclasses.fields(AnnotatorSettings)
            if getattr(cfg.annotation, f.name) != getattr(AnnotatorSettings(), f.name)
        ]
        unused += ["sample_size"] if cfg.sample_size not in (0, sample_size_default) else []
        unused += _changed(cfg, JUDGE_ONLY)
        if unused:
            notes.append(
                f"edu_score.annotator is none, so no judge is asked and {', '.join(unused)} do nothing: set "
                "edu_score.annotator=openai to annotate with an OpenAI-compatible server (`vllm serve`), vllm for "
                "the offline engine, or local for the small CPU judge; or leave these settings out"
            )
    elif cfg.annotator in REAL_JUDGES and cfg.sample_size > 0 and cfg.scorer not in ("auto", "distilled"):
        scorer = cfg.scorer if cfg.scorer in ("default", "fast") else "a model folder"
        notes.append(
            f"edu_score.scorer = {scorer}: the {cfg.annotator} judge annotates {cfg.sample_size} documents, but "
            "what it teaches scores none of them (the head distilled from it is only reported in stats); set "
            "edu_score.scorer=auto to score with that head, or edu_score.annotator=none to send no request"
        )
    return notes + embed_notes(cfg)


def embed_notes(cfg: Any) -> list[str]:
    """``embed_device`` / ``embed_batch_size`` set where no transformer vector is made: the scorer
    reads none (``fast``, or ``auto`` falling back to ``fast``) and no head is distilled from vectors."""
    from pipelines.stages.edu_score_vectors import every_document

    if cfg.scorer not in ("auto", "fast", "distilled", "default"):  # a model folder may embed its documents itself
        return []
    annotated = cfg.annotator != "none" and cfg.sample_size > 0
    if every_document(cfg, annotated) or (annotated and cfg.distil == "head"):
        return []
    unused = _changed(cfg, ("embed_device", "embed_batch_size"))
    if not unused:
        return []
    scorer = "fast" if cfg.scorer == "fast" else f"{cfg.scorer} (fallback_scorer: {cfg.fallback_scorer})"
    return [
        f"{' and '.join(f'edu_score.{k}' for k in unused)} {'does' if len(unused) == 1 else 'do'} nothing: the scorer {scorer} reads no transformer vector and no head "
        f"is distilled from vectors, so nothing is embedded; {'it applies' if len(unused) == 1 else 'they apply'} with fallback_scorer: default (--profile gpu), "
        "scorer: default, or a judge (annotator) with distil: head; or leave them out"
    ]


def unused_head(cfg: Any, scorer_dir: Path, head: Path | None, skip: str) -> tuple[int, str]:
    """Why the head distilled from the judge does not score, and how to make it (a warning where a
    real judge's head is left out); ``skip``: why distillation was skipped, where it was."""
    real = cfg.annotator in REAL_JUDGES
    if head is None:
        why = "distil: none" if cfg.distil == "none" else f"distillation was skipped: {skip}"
        return (
            logging.WARNING if real and cfg.distil != "none" else logging.INFO
        ), f"no distilled head, so {scorer_dir.name} scores ({why})"
    if not real:
        return logging.INFO, (
            f"{scorer_dir.name} scores; the head distilled from the {cfg.annotator} judge is reported but "
            "not used (scorer: auto uses it only for an openai/vllm judge: the small CPU judge ranks near chance, AUC 0.54)"
        )
    scorer = cfg.scorer if cfg.scorer in ("auto", "default", "fast", "distilled") else "a model folder"
    return logging.WARNING, (
        f"scorer: {scorer} scores with {scorer_dir.name}, not with the head distilled from the {cfg.annotator} judge "
        "(reported in stats: distillation); to score with it set edu_score.scorer=auto (or distilled)"
    )
