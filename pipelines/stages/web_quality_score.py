"""The expensive step of ``web_quality``: one scorer over one partition, written to the artifact.

Each in-scope document (``source`` in the config's sources) gets a row ``doc_id, n_tokens, lang, score``
(+ ``quality_signal_<name>`` columns for a scorer with details, the heuristics). ``lang`` is the ingest
column (identified here for input that lacks it); the heuristics use it for words and stop words, and a
scorer limited to some languages (``scorer_languages``, or its model's own) scores only those: NaN elsewhere. A scorer
that needs ``vectors`` gets them from its :class:`~classifiers.vector_source.VectorSource`: the run's
stored embeddings (``ctx.upstream["embeddings"]``, the part with the same number) where they were made
with the settings the scorer was trained with, freshly embedded for the rest.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from classifiers.scorer import Batch, score_with_details
from classifiers.vector_source import VectorSource


def vector_source(scorer: Any, upstream: Any) -> VectorSource | None:
    """Where ``scorer``'s vectors come from (``None`` for a scorer that needs none)."""
    if "vectors" not in scorer.needs:
        return None
    return VectorSource.build(upstream, scorer.embedder, who=f"web_quality ({scorer.name})")


def score_rows(number: int, df: pd.DataFrame, cfg: Any, name: str, vectors: VectorSource | None) -> pd.DataFrame:
    """The score artifact's rows for ``df`` (rows of partition ``number``): row-wise, so the
    stage runs it on row slices of each partition (``ctx.write_sliced``)."""
    scope = df[df["source"].isin(cfg.sources)]
    texts = [t[: cfg.score_max_chars] if isinstance(t, str) else "" for t in scope["text"]]
    frame = pd.DataFrame({
        "doc_id": scope["doc_id"].astype(str).to_numpy(),
        "n_tokens": pd.to_numeric(scope["n_tokens"], errors="coerce").fillna(0).astype("int64").to_numpy(),
    })
    frame["lang"] = _langs(scope)
    scorer = cfg.scorer(name)
    allowed = cfg.languages_of(name)
    todo = np.ones(len(frame), dtype=bool) if not allowed else frame["lang"].isin(list(allowed)).to_numpy()
    score = np.full(len(frame), np.nan)
    if todo.any():
        batch = Batch([t for t, k in zip(texts, todo, strict=True) if k], languages=frame["lang"].to_numpy()[todo].tolist())
        if vectors is not None:
            ids = frame["doc_id"].to_numpy()[todo].tolist()
            batch.vectors = vectors.vectors(ids, list(batch.texts), number, batch_size=cfg.embed_batch_size)
        score[todo], details = score_with_details(scorer, batch)
        if details is not None and cfg.keep_signals:
            for col in details.columns:
                values = np.full(len(frame), np.nan)
                values[todo] = details[col].to_numpy(dtype=np.float64)
                frame[f"quality_signal_{col}"] = values
    frame["score"] = score
    return frame


def _langs(scope: pd.DataFrame) -> np.ndarray:
    """The ``lang`` of each row: the ingest column, identified here where it is missing."""
    from classifiers.langid import identify_docs

    langs = scope["lang"].to_numpy(dtype=object, copy=True) if "lang" in scope.columns else np.full(len(scope), None, dtype=object)
    missing = np.array([not isinstance(x, str) for x in langs], dtype=bool)
    if missing.any():
        found, _ = identify_docs(scope["text"].to_numpy()[missing].tolist(), scope["source"].to_numpy()[missing].tolist())
        langs[missing] = found
    return langs
