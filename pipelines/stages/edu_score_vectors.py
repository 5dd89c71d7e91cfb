"""Which transformer vectors ``edu_score`` needs, and the cached step that makes them
(:mod:`pipelines.stages.edu_score`).

Two readers need vectors: the scorer, for every scored document, where it is the shipped default,
a model folder of an embedding head, or the head distilled from a judge that scores (``scorer:
auto`` with an ``openai``/``vllm`` judge, or ``distilled``); and the distillation of a ``distil:
head``, for the annotated sample only. Where the head is distilled but does not score (the small
``local`` judge, ``scorer: fast``, a hashed model folder) only the sample is embedded: under
``--profile cpu`` SemDeDup's static vectors are no MiniLM vectors, so every scored document would
be embedded with the transformer for a head that scores none of them (a 2 MB real mix: 208
documents in 51 s, against the sample's 24 in 3.5 s).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import dask.dataframe as dd
import numpy as np
import pandas as pd

from classifiers.embedding import embedder_name
from classifiers.embedding_head import DEFAULT_EMBEDDER
from classifiers.embedding_store import write_card, write_embedding_part
from classifiers.vector_source import VectorSource
from pipelines.kit import StageContext
from pipelines.stages import edu_score_steps as steps
from pipelines.stages.edu_score_notes import REAL_JUDGES

#: Model kinds (``model.json`` ``kind``) whose scorer reads transformer vectors.
VECTOR_KINDS = ("embedding_head", "ensemble")


def every_document(cfg: Any, annotated: bool) -> bool:
    """Whether the scorer reads a vector of every scored document (see the module's docstring)."""
    if cfg.scorer == "default" or (cfg.scorer == "auto" and cfg.fallback_scorer == "default"):
        return True
    if not annotated or cfg.distil != "head":  # a folder scorer embeds its documents itself while scoring
        return False
    if cfg.scorer == "distilled" or (cfg.scorer == "auto" and cfg.annotator in REAL_JUDGES):
        return True  # the distilled head scores
    if cfg.scorer in ("auto", "fast"):
        return False
    from classifiers.scorer import read_card

    card = Path(cfg.scorer).expanduser() / "model.json"
    return card.exists() and read_card(card).get("kind") in VECTOR_KINDS


def plan_vectors(
    docs: dd.DataFrame, cfg: Any, sources: tuple[str, ...], annotations: Path | None, ctx: StageContext
) -> tuple[VectorSource, VectorSource, str | None, str | None]:
    """``(for scoring, for distilling, scores key, distilled key)``: the vector sources with the
    folders this stage embedded, and the names of those folders for the steps' keys (None where the
    step reads no vectors this stage made)."""
    # said where the embedding runs: a reused embeddings step embeds nothing again
    vectors = VectorSource.build(ctx.upstream.get("embeddings"), DEFAULT_EMBEDDER, who="edu_score", warn=False)
    annotated = annotations is not None
    if every_document(cfg, annotated):
        key = {"embedder": DEFAULT_EMBEDDER, "sources": sources, "upstream": vectors.tag()}
        embedded = ctx.step(
            "embeddings", key, lambda out: steps.embed_missing(docs, sources, vectors, cfg, out, ctx)
        ).path
        vectors = vectors.with_folders(embedded)
        return vectors, vectors, embedded.name, embedded.name
    if annotations is None or cfg.distil != "head":
        return vectors, vectors, None, None
    key = {"embedder": DEFAULT_EMBEDDER, "sample": annotations.name, "upstream": vectors.tag()}
    sampled = ctx.step("embeddings", key, lambda out: embed_sample(annotations, vectors, cfg, out)).path
    return vectors, vectors.with_folders(sampled), None, sampled.name


def embed_sample(annotations: Path, vectors: VectorSource, cfg: Any, out: Path) -> dict[str, Any]:
    """Embed the annotated documents that ``vectors`` does not store (one part: the sample is small)."""
    vectors.warn_rejected("edu_score")
    started = time.time()
    sample = pd.read_parquet(annotations / "annotations.parquet", columns=["doc_id", "text"]).drop_duplicates("doc_id")
    ids = sample["doc_id"].astype(str).tolist()
    stored = vectors.stored_anywhere(ids)
    todo = sample[~sample["doc_id"].astype(str).isin(stored)]
    vecs = (
        vectors.embed(todo["text"].fillna("").tolist(), device=cfg.embed_device, batch_size=cfg.embed_batch_size)
        if len(todo)
        else np.zeros((0, 1), dtype=np.float32)
    )
    write_embedding_part(out / "part-00000.parquet", todo["doc_id"].astype(str).tolist(), vecs, "float16")
    settings = vectors.embedder
    seconds = time.time() - started
    card = {
        "embedder": dict(settings),
        "name": embedder_name(settings["model"], settings["max_seq_length"], settings["mask_digits"]),
        "count": len(todo),
        "reused_upstream": len(stored),
        "scope": "annotated sample (no scorer reads every document's vector)",
        "normalized": True,
        "dtype": "float16",
        "seconds": round(seconds, 3),
        "docs_per_second": round(len(todo) / max(seconds, 1e-9), 2) if len(todo) else None,
    }
    write_card(out, card)
    return {"embedding": card}
