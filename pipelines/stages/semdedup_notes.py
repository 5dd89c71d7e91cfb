"""What ``semdedup`` tells its user: before anything runs, settings the embedder does not act on
(:func:`config_notes`); once the documents are read, sources of ``prune_sources`` that it cannot
prune because none of their documents is in a pruned language."""

from __future__ import annotations

import logging
from typing import Any

import pandas as pd

from pipelines.kit import Artifact

log = logging.getLogger("pipelines.stages.semdedup")


def config_notes(cfg: Any, static_weight_default: float) -> list[str]:
    """Warnings for settings that do not do what they ask: languages a static embedder cannot prune,
    and a ``static_weight`` of the user's when the static model is the embedder itself (nothing is mixed in)."""
    notes = []
    if cfg.unprunable():
        rest = f"pruning {', '.join(cfg.pruned_languages())} only" if cfg.pruned_sources() else "nothing is pruned"
        notes.append(
            f"semdedup.prune_languages {list(cfg.prune_languages)}: the embedder {cfg.model} is a static model and prunes "
            f"only static_languages {list(cfg.static_languages)}, so pages of {', '.join(cfg.unprunable())} pass unpruned "
            f"({rest}); the transformer embedder (--profile gpu) prunes every language"
        )
    if cfg.static_weight != static_weight_default and cfg.static_model == cfg.model:
        notes.append(
            f"semdedup.static_weight = {cfg.static_weight:g} does nothing: static_model is the embedder itself "
            f"({cfg.model}), so no second cosine is mixed in; it weighs a static model's cosine against a transformer's "
            "(--profile gpu: model all-MiniLM-L6-v2, static_model minilm-static), or leave static_weight out"
        )
    return notes


def unpruned_sources(
    members: pd.DataFrame, prune_sources: tuple[str, ...], languages: tuple[str, ...]
) -> dict[str, dict[str, int]]:
    """Source → its documents per ``lang``, for each source of ``prune_sources`` that has documents and
    none in ``languages`` (() = every language is pruned: none).

    >>> docs = pd.DataFrame({"source": ["web", "code", "code"], "lang": ["en", "und", "und"]})
    >>> unpruned_sources(docs, ("web", "code"), ("en", "zh"))
    {'code': {'und': 2}}
    """
    if not languages or not len(members):
        return {}
    out = {}
    for source in prune_sources:
        langs = members.loc[members["source"] == source, "lang"].fillna("none")
        if len(langs) and not langs.isin(languages).any():
            out[source] = {str(k): int(v) for k, v in langs.value_counts().sort_index().items()}
    return out


def warn_unpruned_sources(
    clusters: Artifact, prune_sources: tuple[str, ...], languages: tuple[str, ...], model: str
) -> None:
    """One warning naming each source of ``prune_sources`` none of whose documents SemDeDup prunes, with its counts."""
    found = unpruned_sources(clusters.read_all(["source", "lang"]), prune_sources, languages) if languages else {}
    if not found:
        return
    said = "; ".join(
        f"{source}: {sum(c.values())} documents ({', '.join(f'lang {k}: {v}' for k, v in c.items())})"
        for source, c in found.items()
    )
    log.warning(
        "semdedup: prune_sources %s have documents none of which is in a pruned language (%s), so none is pruned: %s. "
        "The pruned languages are prune_languages, and with a static embedder (%s) only its static_languages; "
        "take these sources out of prune_sources, or prune every language with the transformer (--profile gpu)",
        sorted(found),
        ", ".join(languages),
        said,
        model,
    )
