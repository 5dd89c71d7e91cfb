"""The pair checks of ``semdedup``'s similarity pass: which pages the clusters step sketches, and the pass.

- **Text check** (``text_check_languages``): in those languages every pair above the language's
  cosine bar counts only when the two pages share character bigrams (a static model averaging
  characters cannot tell one topic from one template). Pages of languages outside
  ``model_languages`` (those the embedder was not trained on) get a text check above the widest ε
  reported: by character bigrams (≥ ``text_check_jaccard``) in :data:`NO_SPACE_LANGUAGES`, by words
  (≥ ``window_check_jaccard``) in the others; a pair with a page whose tokens are all unknown to the
  embedder (emoji only, a script outside its vocabulary) never counts: such pages are never pruned
  nor make another page go.
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

from classifiers.embedding_unknown import unknown_only
from curation.dedup.semantic import check_bars, similarity_pass
from curation.dedup.vectors import SKETCH_PERM, bigram_sketches, word_sketches
from curation.dedup.window_check import is_cut

#: Languages written without spaces between words: their pages are compared by character bigrams, the
#: pages of other languages by words (two unrelated German forum pages share 0.63 of their bigrams, 0.09 of their words).
NO_SPACE_LANGUAGES = ("bo", "ja", "km", "lo", "my", "th", "zh")
#: The ``sketch`` of a page whose tokens are all unknown to the embedder: it matches no page.
NO_MATCH = b"\x00"


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
    model_languages: tuple[str, ...] = ()  # pages of other languages are sketched too (bigrams or words); () = none
    model: str = ""  # the embedder whose unknown-only pages get :data:`NO_MATCH`; "" = none

    def key(self) -> dict[str, Any]:
        """What identifies the sketches in the clusters step's parameters."""
        window = {"sources": sorted(self.window_sources), "languages": sorted(self.window_languages),
                  "max_seq_length": self.max_seq_length} if self.window_sources else None
        return {"bigram": sorted(self.bigram_languages), "window": window, "model_languages": sorted(self.model_languages),
                "no_space": list(NO_SPACE_LANGUAGES),
                "unknown": [self.model, self.max_seq_length] if self.model else None}

    def bigram_rows(self, langs: np.ndarray) -> np.ndarray:
        """Rows whose pages are sketched (and checked) by character bigrams."""
        return bigram_rows(langs, self.bigram_languages, self.model_languages)

    def columns(self, rows: pd.DataFrame, langs: np.ndarray) -> dict[str, pd.Series]:
        """``sketch`` (bytes, ``b""`` for a page not sketched) and, with the window check, ``cut``."""
        if not self.bigram_languages and not self.window_sources and not self.model_languages and not self.model:
            return {}
        texts = rows["text"].to_numpy(dtype=object)
        out = np.full(len(rows), b"", dtype=object)
        bigram = self.bigram_rows(langs)
        words = text_rows(langs, self.bigram_languages, self.model_languages) & ~bigram
        if self.window_sources:
            window = rows["source"].isin(self.window_sources).to_numpy() & ~bigram
            if self.window_languages:
                window &= np.isin(langs, list(self.window_languages))
            words |= window
        for wanted, sketch in ((bigram, bigram_sketches), (words, word_sketches)):
            if wanted.any():
                out[wanted] = [row.tobytes() for row in sketch(texts[wanted].tolist())]
        if self.model and len(rows):
            out[unknown_only(texts.tolist(), self.model, self.max_seq_length)] = NO_MATCH
        if not self.window_sources and not any(out):  # nothing to compare: the artifact as without the checks
            return {}
        cols = {"sketch": pd.Series(out, dtype=object)}
        if self.window_sources:
            n_tokens = rows["n_tokens"].to_numpy(dtype=np.float64) if "n_tokens" in rows.columns else np.full(len(rows), np.nan)
            cols["cut"] = pd.Series(is_cut(n_tokens, self.max_seq_length), dtype=bool)
        return cols


def text_rows(langs: np.ndarray, languages: tuple[str, ...], model_languages: tuple[str, ...]) -> np.ndarray:
    """Rows whose pairs above the bar count only when the pages share text: pages of ``languages``, and
    with ``model_languages`` every page of another language (``und`` and a missing ``lang`` included).

    >>> text_rows(np.array(["en", "zh", "si", None], dtype=object), (), ("en",)).tolist()
    [False, True, True, True]
    """
    langs = np.asarray(langs, dtype=object)
    rows = np.isin(langs, list(languages))
    if model_languages:
        rows |= ~np.isin(langs, list(model_languages))
    return rows


def bigram_rows(langs: np.ndarray, languages: tuple[str, ...], model_languages: tuple[str, ...]) -> np.ndarray:
    """The :func:`text_rows` compared by character bigrams: pages of ``languages``, and those of
    :data:`NO_SPACE_LANGUAGES` outside ``model_languages``; the other text rows are compared by words.

    >>> bigram_rows(np.array(["en", "zh", "de", "th"], dtype=object), (), ("en",)).tolist()
    [False, True, False, True]
    """
    langs = np.asarray(langs, dtype=object)
    rows = np.isin(langs, list(languages))
    if model_languages:
        rows |= np.isin(langs, list(NO_SPACE_LANGUAGES)) & ~np.isin(langs, list(model_languages))
    return rows


@dataclasses.dataclass(frozen=True)
class TextCheck:
    """The checks of the similarity pass. In ``eps``' languages, a pair above its language's cosine
    bar counts only when the two pages' character bigrams overlap (estimated Jaccard ≥
    ``min_jaccard``); so does a pair above ``1 − other_eps`` with a page of a language outside
    ``model_languages`` (when given; by words, ≥ ``window_jaccard``, outside
    :data:`NO_SPACE_LANGUAGES`), and a pair with a page marked :data:`NO_MATCH` never counts above
    that bar. With ``window_eps`` set (the window check), a pair of other pages above
    ``1 − window_eps`` where either page was cut counts only when their word sketches overlap
    (≥ ``window_jaccard``). ``window_eps`` and ``other_eps`` are the widest ε the stage decides or
    reports, so the pass holds for each of them."""

    eps: tuple[tuple[str, float], ...] = ()  # (language, its ε) for each text-check language
    min_jaccard: float = 0.6
    window_eps: float | None = None  # None: no window check
    window_jaccard: float = 0.5  # also the share of words for the pages of languages outside model_languages
    model_languages: tuple[str, ...] = ()  # () = the embedder knows every language
    other_eps: float = 0.3

    @property
    def languages(self) -> tuple[str, ...]:
        return tuple(lang for lang, _ in self.eps)

    @property
    def window(self) -> bool:
        return self.window_eps is not None

    def bars(self, langs: np.ndarray) -> np.ndarray:
        """The cosine above which a row's pairs may need a check: its text-check language's bar,
        else ``1 − other_eps`` (``1 − window_eps`` with the window check)."""
        text = check_bars(langs, self.languages, 1.0, dict(self.eps))
        return np.where(np.isnan(text), 1.0 - float(self.window_eps if self.window else self.other_eps), text)


def checked_pass(df: pd.DataFrame, vecs: np.ndarray, check: TextCheck | None, block_rows: int) -> pd.DataFrame:
    """The similarity pass of one shuffled partition (members with ``lang``, ``sketch`` and ``cut``)."""
    members = df.drop(columns=["vector", "sketch", "cut"], errors="ignore")
    if check is None:
        return similarity_pass(members, vecs, block_rows=block_rows)
    langs = df["lang"].to_numpy(dtype=object)
    blobs = df["sketch"].tolist()
    unknown = np.fromiter((b == NO_MATCH for b in blobs), dtype=bool, count=len(blobs))
    text = text_rows(langs, check.languages, check.model_languages)
    always = text | unknown
    bars = check.bars(langs)
    other = ~np.isin(langs, list(check.languages))
    bars[other & (text | unknown)] = 1.0 - float(check.other_eps)
    floor = np.where(bigram_rows(langs, check.languages, check.model_languages), check.min_jaccard, check.window_jaccard)
    cut = df["cut"].to_numpy(dtype=bool) if check.window else np.zeros(len(df), dtype=bool)
    return similarity_pass(members, vecs, block_rows=block_rows, bars=bars, sketches=decode_sketches(blobs),
                           min_jaccard=floor, always=always, cut=cut)


def decode_sketches(blobs: list[bytes]) -> np.ndarray:
    """Rows of sketch bytes → (n, SKETCH_PERM) uint32; an empty blob (a page not sketched) gives a
    zero row; :data:`NO_MATCH` a row of its own (values no other row holds: Jaccard 0 with any page).

    >>> s = decode_sketches([NO_MATCH, NO_MATCH, b""])
    >>> float((s[0] == s[1]).mean()), int(s[2].max())
    (0.0, 0)
    """
    out = np.zeros((len(blobs), SKETCH_PERM), dtype=np.uint32)
    for i, blob in enumerate(blobs):
        if blob == NO_MATCH:
            out[i] = np.uint32(0xFFFFFFFF - (i % (1 << 30)))
        elif blob:
            out[i] = np.frombuffer(blob, dtype=np.uint32)
    return out
