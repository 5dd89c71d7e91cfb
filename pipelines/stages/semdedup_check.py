"""The pair checks of ``semdedup``'s similarity pass: which pages the clusters step sketches, and the pass.

- **Text check** (``text_check_languages``): in those languages every pair above the language's
  cosine bar counts only when the two pages share character bigrams (a static model averaging
  characters cannot tell one topic from one template).
- **Window check** (``window_check``): a pair above its bar where at least one page was cut by the
  embedder's window (``n_tokens`` > ``max_seq_length``) counts only when the two whole texts share
  words (estimated Jaccard of word sketches ≥ ``window_check_jaccard``); pages of the text-check
  languages keep their bigram check. Two pages that open with one long banner have near-identical
  vectors and little else in common.

The clusters step writes each sketched page's MinHash sketch (``sketch``, 512 bytes) and, with the
window check, whether the window cut it (``cut``); the similarity pass reads them per cluster.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import pandas as pd

from curation.dedup.semantic import check_bars, similarity_pass
from curation.dedup.vectors import SKETCH_PERM, bigram_sketches, word_sketches
from curation.dedup.window_check import is_cut


@dataclasses.dataclass(frozen=True)
class Sketches:
    """Which pages the clusters step sketches: pages of ``bigram_languages`` (character bigrams), and
    with the window check (``window_sources`` not empty) every other page the pass compares
    (``window_sources``, and ``window_languages`` unless empty) by its words — a page the window
    did not cut is compared with one it cut."""

    bigram_languages: tuple[str, ...] = ()
    window_sources: tuple[str, ...] = ()
    window_languages: tuple[str, ...] = ()
    max_seq_length: int = 256

    def key(self) -> dict[str, Any]:
        """What identifies the sketches in the clusters step's parameters."""
        window = {"sources": sorted(self.window_sources), "languages": sorted(self.window_languages),
                  "max_seq_length": self.max_seq_length} if self.window_sources else None
        return {"bigram": sorted(self.bigram_languages), "window": window}

    def columns(self, rows: pd.DataFrame, langs: np.ndarray) -> dict[str, pd.Series]:
        """``sketch`` (bytes, ``b""`` for a page not sketched) and, with the window check, ``cut``."""
        if not self.bigram_languages and not self.window_sources:
            return {}
        texts = rows["text"].to_numpy(dtype=object)
        out = np.full(len(rows), b"", dtype=object)
        bigram = np.isin(langs, list(self.bigram_languages))
        words = np.zeros(len(rows), dtype=bool)
        if self.window_sources:
            words = rows["source"].isin(self.window_sources).to_numpy() & ~bigram
            if self.window_languages:
                words &= np.isin(langs, list(self.window_languages))
        for wanted, sketch in ((bigram, bigram_sketches), (words, word_sketches)):
            if wanted.any():
                out[wanted] = [row.tobytes() for row in sketch(texts[wanted].tolist())]
        cols = {"sketch": pd.Series(out, dtype=object)}
        if self.window_sources:
            n_tokens = rows["n_tokens"].to_numpy(dtype=np.float64) if "n_tokens" in rows.columns else np.full(len(rows), np.nan)
            cols["cut"] = pd.Series(is_cut(n_tokens, self.max_seq_length), dtype=bool)
        return cols


@dataclasses.dataclass(frozen=True)
class TextCheck:
    """The checks of the similarity pass. In ``eps``' languages, a pair above its language's cosine
    bar counts only when the two pages' character bigrams overlap (estimated Jaccard ≥
    ``min_jaccard``). With ``window_eps`` set (the window check), a pair of other pages above
    ``1 − window_eps`` where either page was cut counts only when their word sketches overlap
    (≥ ``window_jaccard``); ``window_eps`` is the widest ε the stage decides or reports, so the pass
    holds for each of them."""

    eps: tuple[tuple[str, float], ...] = ()  # (language, its ε) for each text-check language
    min_jaccard: float = 0.6
    window_eps: float | None = None  # None: no window check
    window_jaccard: float = 0.0

    @property
    def languages(self) -> tuple[str, ...]:
        return tuple(lang for lang, _ in self.eps)

    @property
    def window(self) -> bool:
        return self.window_eps is not None

    def bars(self, langs: np.ndarray) -> np.ndarray:
        """The cosine above which a row's pairs may need a check (NaN: none)."""
        text = check_bars(langs, self.languages, 1.0, dict(self.eps))
        if not self.window:
            return text
        return np.where(np.isnan(text), 1.0 - float(self.window_eps), text)


def checked_pass(df: pd.DataFrame, vecs: np.ndarray, check: TextCheck | None, block_rows: int) -> pd.DataFrame:
    """The similarity pass of one shuffled partition (members with ``lang``, ``sketch`` and ``cut``)."""
    members = df.drop(columns=["vector", "sketch", "cut"], errors="ignore")
    if check is None or not (check.languages or check.window):
        return similarity_pass(members, vecs, block_rows=block_rows)
    langs = df["lang"].to_numpy(dtype=object)
    sketches = decode_sketches(df["sketch"].tolist())
    if not check.window:  # the text check alone: every pair above a row's bar is checked
        return similarity_pass(members, vecs, block_rows=block_rows, bars=check.bars(langs), sketches=sketches,
                               min_jaccard=check.min_jaccard)
    always = np.isin(langs, list(check.languages))
    return similarity_pass(members, vecs, block_rows=block_rows, bars=check.bars(langs), sketches=sketches,
                           min_jaccard=np.where(always, check.min_jaccard, check.window_jaccard), always=always,
                           cut=df["cut"].to_numpy(dtype=bool))


def decode_sketches(blobs: list[bytes]) -> np.ndarray:
    """Rows of sketch bytes → (n, SKETCH_PERM) uint32; an empty blob (a page not sketched) gives a
    zero row, never compared."""
    out = np.zeros((len(blobs), SKETCH_PERM), dtype=np.uint32)
    for i, blob in enumerate(blobs):
        if blob:
            out[i] = np.frombuffer(blob, dtype=np.uint32)
    return out
