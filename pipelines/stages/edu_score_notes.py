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


def config_notes(cfg: Any, sample_size_default: int) -> list[str]:
    """Warnings for settings that do not do what they ask: judge settings under ``annotator: none``
    (no request is sent), and a real judge whose annotations the scorer leaves out."""
    notes = []
    if cfg.annotator == "none":
        unused = [
            f"annotator_{f.name}"
            for f in dataclasses.fields(AnnotatorSettings)
            if getattr(cfg.annotation, f.name) != getattr(AnnotatorSettings(), f.name)
        ]
        unused += ["sample_size"] if cfg.sample_size not in (0, sample_size_default) else []
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
    return notes


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
