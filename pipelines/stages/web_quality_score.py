"""The expensive step of ``web_quality``: one scorer over one partition, written to the artifact.

Each in-scope document (``source`` in the config's sources) gets a row ``doc_id, n_tokens, lang, score``
(+ ``quality_signal_<name>`` columns for the heuristics scorer). ``lang`` is the ingest column (identified
here for input that lacks it); the heuristics use it for words and stop words, and a scorer limited to
some languages (``scorer_languages``) scores only those: NaN elsewhere. The embedding head reads the run's
stored embeddings (``ctx.upstream["embeddings"]``, the part with the same
number) and embeds only the documents missing there, with the settings the head was trained with.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from pipelines.io import write_frame

log = logging.getLogger(__name__)


def score_part(df: pd.DataFrame, folder: str, cfg: Any, name: str, upstream: str | None,
               partition_info: dict | None = None) -> pd.Series:
    number = (partition_info or {}).get("number", 0)
    scope = df[df["source"].isin(cfg.sources)]
    texts = [t[: cfg.score_max_chars] if isinstance(t, str) else "" for t in scope["text"]]
    out = pd.DataFrame({
        "doc_id": scope["doc_id"].astype(str).to_numpy(),
        "n_tokens": pd.to_numeric(scope["n_tokens"], errors="coerce").fillna(0).astype("int64").to_numpy(),
    })
    out["lang"] = _langs(scope)
    scorer = cfg.scorer(name)
    allowed = cfg.scorer_languages.get(name)
    todo = np.ones(len(out), dtype=bool) if not allowed else out["lang"].isin(list(allowed)).to_numpy()
    score = np.full(len(out), np.nan)
    texts_in = [t for t, k in zip(texts, todo, strict=True) if k]
    langs_in = out["lang"].to_numpy()[todo].tolist()
    if not todo.any():
        pass
    elif scorer.kind == "heuristics":
        signals = scorer.signals(texts_in, langs_in)
        score[todo] = scorer.combine(signals, langs_in)
        if cfg.keep_signals:
            for col in signals.columns:
                values = np.full(len(out), np.nan)
                values[todo] = signals[col].to_numpy(dtype=np.float64)
                out[f"quality_signal_{col}"] = values
    elif scorer.needs_embeddings:
        ids = out["doc_id"].to_numpy()[todo].tolist()
        score[todo] = scorer.predict_vectors(_vectors(ids, texts_in, scorer, upstream, number, cfg))
    else:
        score[todo] = np.asarray(scorer.predict(texts_in), dtype=np.float64)
    out["score"] = score
    write_frame(out, Path(folder) / f"part-{number:05d}.parquet")
    return pd.Series([len(out)], dtype="int64")


def _langs(scope: pd.DataFrame) -> np.ndarray:
    """The ``lang`` of each row: the ingest column, identified here where it is missing."""
    from classifiers.langid import identify_docs

    langs = scope["lang"].to_numpy(dtype=object, copy=True) if "lang" in scope.columns else np.full(len(scope), None, dtype=object)
    missing = np.array([not isinstance(x, str) for x in langs], dtype=bool)
    if missing.any():
        found, _ = identify_docs(scope["text"].to_numpy()[missing].tolist(), scope["source"].to_numpy()[missing].tolist())
        langs[missing] = found
    return langs


def _vectors(ids: list[str], texts: list[str], scorer: Any, upstream: str | None, number: int, cfg: Any) -> np.ndarray:
    """Stored vectors where the run has them (same embedder), freshly embedded for the rest."""
    from classifiers.embedding import embedding_card, get_embedder, read_embedding_part

    settings = scorer.embedder
    vecs: np.ndarray | None = None
    have = np.zeros(len(ids), dtype=bool)
    if upstream:
        card = embedding_card(Path(upstream))
        stored = card.get("embedder", {})
        same = all(stored.get(k) == v for k, v in settings.items() if k not in ("device", "batch_size"))
        path = Path(upstream) / f"part-{number:05d}.parquet"
        if same and path.exists():
            sids, svecs = read_embedding_part(path)
            pos = {d: i for i, d in enumerate(sids)}
            idx = np.array([pos.get(d, -1) for d in ids])
            have = idx >= 0
            vecs = np.zeros((len(ids), svecs.shape[1]), dtype=np.float32)
            vecs[have] = svecs[idx[have]]
        elif not same:
            log.warning("web_quality: stored embeddings use %s, the %s head needs %s; embedding again", stored, scorer.name, settings)
    if have.all() and vecs is not None:
        return vecs
    embedder = get_embedder(**{**settings, "batch_size": cfg.embed_batch_size})
    fresh = embedder.embed([t for t, h in zip(texts, have, strict=True) if not h])
    if vecs is None:
        return fresh
    vecs[~have] = fresh
    return vecs
