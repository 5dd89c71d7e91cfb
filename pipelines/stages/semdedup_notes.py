"""What ``semdedup`` tells its user about the documents it read: sources of ``prune_sources`` that it
cannot prune because none of their documents is in a pruned language."""

from __future__ import annotations

import logging

import pandas as pd

from pipelines.kit import Artifact

log = logging.getLogger("pipelines.stages.semdedup")


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
