"""A fastText-style linear classifier over hashed word and character n-grams.

Texts are lower-cased and whitespace-folded; features are word n-grams (tokens = runs of
letters/digits) and character n-grams of the folded text, hashed into ``n_features`` buckets
(the hashing trick), counted, and each row L2-normalised. A linear model (logistic for
``binary``, squared loss for ``regression``) is trained with mini-batch AdaGrad.

Featurisation is vectorised over a whole batch of documents with numpy (polynomial hashes
computed from prefix sums modulo 2**64), so prediction runs at thousands of documents per
second per core. Models are saved as NPZ (no pickle) plus a JSON model card.

>>> from classifiers.linear_train import fit_linear
>>> m = fit_linear(HashedLinearModel(n_features=2**12), ["good text here", "buy now click"] * 20, [1, 0] * 20, epochs=10)
>>> p = m.predict(["good text", "click buy"])
>>> bool(p[0] > 0.5 > p[1])
True

Training lives apart from inference, in :mod:`classifiers.linear_train`.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from curation.hashing import BASE, GOLDEN, codepoints
from curation.hashing import alnum_table as _word_table
from curation.hashing import powers as _powers

#: Bump when featurisation changes: a saved model is only valid with the same hashing.
FEATURE_VERSION = "hashed-ngrams-v1"
TASKS = ("binary", "regression")

_U64 = np.uint64
_BASE = _U64(BASE)
_PAIR = _U64(GOLDEN)


def _codepoints(texts: Sequence[str], max_chars: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Code points (``uint32``) of the folded texts joined by a NUL separator, each position's
    document, and each folded text's length."""
    # NUL separates documents in the joined buffer, so it may not occur inside one
    folded = [" ".join(str(t)[: max_chars * 2].replace("\x00", " ").lower().split())[:max_chars] for t in texts]
    cp = codepoints(folded, "\x00")
    lengths = np.fromiter(map(len, folded), dtype=np.int64, count=len(folded))
    doc = np.repeat(np.arange(len(folded), dtype=np.int64), lengths + 1)[: len(cp)]
    return cp, doc, lengths


@functools.lru_cache(maxsize=1)
def _word_flags() -> np.ndarray:
    """``is_word[code point]`` over all of Unicode: :func:`curation.hashing.alnum_table` on the BMP,
    every code point above it a word character, NUL (the document separator) not."""
    table = np.ones(0x110000, dtype=bool)
    table[:0x10000] = _word_table()
    table[0] = False
    return table


def _bucket_inplace(h: np.ndarray, n_features: int) -> np.ndarray:
    """:func:`curation.hashing.bucket` of ``h``, computed in ``h``'s own buffer."""
    h *= _PAIR
    bits = n_features.bit_length() - 1
    if n_features == 1 << bits:
        h >>= _U64(64 - bits)
        return h
    h >>= _U64(32)
    h %= _U64(n_features)
    return h


def _touching(seps: np.ndarray, k: int, size: int) -> np.ndarray:
    """Start positions ``i < size`` of the k-grams ``[i, i + k)`` that contain a separator."""
    idx = (seps[:, None] - np.arange(k, dtype=np.int64)[None, :]).ravel()
    return idx[(idx >= 0) & (idx < size)]


def hashed_ngrams(
    texts: Sequence[str],
    n_features: int,
    *,
    word_ngrams: tuple[int, int] = (1, 2),
    char_ngrams: tuple[int, int] = (3, 5),
    max_chars: int = 20000,
) -> tuple[np.ndarray, np.ndarray]:
    """Feature index of every n-gram occurrence of a batch, and its document.

    N-grams that would cross a document boundary get index ``n_features`` (a padding
    feature whose weight is always 0 and which is not counted).

    >>> doc, col = hashed_ngrams(["a b", "a b"], 2**16, word_ngrams=(1, 1), char_ngrams=(3, 3))
    >>> sorted(col[(doc == 0) & (col < 2**16)].tolist()) == sorted(col[doc == 1].tolist())
    True
    """
    blocks = list(ngram_blocks(texts, n_features, word_ngrams=word_ngrams, char_ngrams=char_ngrams, max_chars=max_chars))
    if not blocks:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    return np.concatenate([b[0] for b in blocks]), np.concatenate([b[1] for b in blocks])


def ngram_blocks(
    texts: Sequence[str],
    n_features: int,
    *,
    word_ngrams: tuple[int, int] = (1, 2),
    char_ngrams: tuple[int, int] = (3, 5),
    max_chars: int = 20000,
) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """:func:`hashed_ngrams` one n-gram order at a time (saves concatenating large arrays)."""
    for doc, col, _ in _counted_blocks(texts, n_features, word_ngrams, char_ngrams, max_chars):
        yield doc, col


def _counted_blocks(
    texts: Sequence[str], n_features: int, word_ngrams: tuple[int, int], char_ngrams: tuple[int, int], max_chars: int
) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """:func:`ngram_blocks` with, per block, how many of each document's n-grams are not padding
    (read from the folded lengths and word counts, not from the block)."""
    cp32, doc, lengths = _codepoints(texts, max_chars)
    cp = cp32.astype(_U64)
    n = len(cp)
    pad = n_features
    seps = np.flatnonzero(cp32 == 0)
    with np.errstate(over="ignore"):
        # Character n-grams: rolling h_k = h_{k-1} * BASE + c, never across documents.
        lo, hi = char_ngrams
        h = cp
        for k in range(2, hi + 1):
            if n < k:
                break
            h = h[:-1] * _BASE
            h += cp[k - 1 :]
            if k >= lo:
                col = _bucket_inplace(h + _U64(k) * _U64(0x51ED27), n_features).view(np.int64)
                col[_touching(seps, k, len(col))] = pad
                yield doc[: len(col)], col, np.maximum(lengths - (k - 1), 0)
        # Words: runs of word characters; hash of [a, b) from prefix sums of c_j * BASE**-j.
        wlo, whi = word_ngrams
        if whi >= 1 and n:
            is_word = _word_flags()[cp32]
            edges = np.diff(is_word.view(np.int8), prepend=np.int8(0), append=np.int8(0))
            starts = np.flatnonzero(edges == 1)
            ends = np.flatnonzero(edges == -1)
            if len(starts):
                pw, inv = _powers(n + 1)
                prefix = np.zeros(n + 1, dtype=_U64)
                np.multiply(cp, inv[:n], out=prefix[1:])
                np.cumsum(prefix[1:], out=prefix[1:])
                wh = (prefix[ends] - prefix[starts]) * pw[starts]
                wdoc = doc[starts]
                n_words = np.bincount(wdoc, minlength=len(lengths))
                if wlo <= 1:
                    yield wdoc, _bucket_inplace(wh + _U64(0xA5A5), n_features).view(np.int64), n_words
                g = wh
                for k in range(2, whi + 1):
                    if len(g) < 2:
                        break
                    # an n-gram is inside one document iff its first and last words are
                    same = wdoc[k - 1 :] == wdoc[: len(wdoc) - k + 1]
                    g = (g[:-1] ^ (g[:-1] >> _U64(29))) * _PAIR + wh[k - 1 :]
                    if k >= wlo:
                        col = _bucket_inplace(g + _U64(k), n_features).view(np.int64)
                        col[~same] = pad
                        yield wdoc[: len(col)], col, np.maximum(n_words - (k - 1), 0)


class HashedLinearModel:
    """Hashed word + char n-gram linear model (fastText-style quality classifier); trained by
    :func:`classifiers.linear_train.fit_linear`."""

    def __init__(
        self,
        n_features: int = 2**20,
        word_ngrams: tuple[int, int] = (1, 2),
        char_ngrams: tuple[int, int] = (3, 5),
        task: str = "binary",
        max_chars: int = 20000,
    ) -> None:
        if task not in TASKS:
            raise ValueError(f"task must be one of {TASKS}, not {task!r}")
        if n_features < 2:
            raise ValueError("n_features must be at least 2")
        self.n_features = int(n_features)
        self.word_ngrams = (int(word_ngrams[0]), int(word_ngrams[1]))
        self.char_ngrams = (int(char_ngrams[0]), int(char_ngrams[1]))
        self.task = task
        self.max_chars = int(max_chars)
        self.weights = np.zeros(self.n_features, dtype=np.float32)
        self.bias = 0.0
        self.card: dict[str, Any] = {}

    # -- features ---------------------------------------------------------------------
    def ngrams(self, texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """(document, feature) of every n-gram occurrence; padding feature = ``n_features``."""
        return hashed_ngrams(
            texts, self.n_features, word_ngrams=self.word_ngrams, char_ngrams=self.char_ngrams, max_chars=self.max_chars
        )

    # -- inference --------------------------------------------------------------------
    def decision_function(self, texts: Sequence[str], batch_size: int = 256) -> np.ndarray:
        """Raw linear scores (logits for ``binary``): bias + mean weight of the n-grams."""
        texts = list(texts)
        out = np.empty(len(texts), dtype=np.float64)
        w = self._padded_weights()
        for i in range(0, len(texts), batch_size):
            batch = texts[i : i + batch_size]
            total = np.zeros(len(batch))
            n = np.zeros(len(batch))
            blocks = _counted_blocks(batch, self.n_features, self.word_ngrams, self.char_ngrams, self.max_chars)
            for doc, col, count in blocks:
                total += np.bincount(doc, weights=w.take(col), minlength=len(batch))
                n += count
            out[i : i + len(batch)] = total / np.maximum(n, 1.0) + self.bias
        return out

    def _padded_weights(self) -> np.ndarray:
        """The weights as float64 with one padding slot of weight 0 (for n-grams that cross document
        boundaries), built once per weights array."""
        cached = getattr(self, "_padded", None)
        if cached is None or cached[0] is not self.weights:
            padded = np.zeros(self.n_features + 1, dtype=np.float64)
            padded[: self.n_features] = self.weights
            cached = self._padded = (self.weights, padded)
        return cached[1]

    def predict(self, texts: Sequence[str], batch_size: int = 256) -> np.ndarray:
        """Probability of class 1 for ``binary``, the value for ``regression`` (float64)."""
        z = self.decision_function(texts, batch_size)
        if self.task == "binary":
            return 1.0 / (1.0 + np.exp(-np.clip(z, -30, 30)))
        return z

    # -- persistence ------------------------------------------------------------------
    def config(self) -> dict[str, Any]:
        return {
            "n_features": self.n_features,
            "word_ngrams": list(self.word_ngrams),
            "char_ngrams": list(self.char_ngrams),
            "task": self.task,
            "max_chars": self.max_chars,
        }

    def save(self, folder: str | Path, **card: Any) -> Path:
        """Write ``weights.npz`` (float32 weights + bias, no pickle) and ``model.json``.

        Extra keyword arguments go into the model card (data, metrics, intended use).
        """
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        np.savez_compressed(folder / "weights.npz", weights=self.weights.astype(np.float32), bias=np.array([self.bias]))
        meta = {
            "kind": "hashed_linear",
            "feature_version": FEATURE_VERSION,
            "config": self.config(),
            **self.card,
            **card,
        }
        (folder / "model.json").write_text(json.dumps(meta, indent=2, sort_keys=True, default=str) + "\n")
        self.card = {k: v for k, v in meta.items() if k not in {"kind", "feature_version", "config"}}
        return folder

    @classmethod
    def load(cls, folder: str | Path) -> HashedLinearModel:
        """Load a model written by :meth:`save` (``allow_pickle=False``)."""
        folder = Path(folder)
        card_path = folder / "model.json"
        if not card_path.exists():
            raise FileNotFoundError(f"{folder} has no model.json; is it a folder written by HashedLinearModel.save?")
        meta = json.loads(card_path.read_text())
        if meta.get("feature_version") != FEATURE_VERSION:
            raise ValueError(
                f"{folder} was saved with features {meta.get('feature_version')!r}, this code computes "
                f"{FEATURE_VERSION!r}; retrain it with `curate train-classifier linear`"
            )
        cfg = meta["config"]
        model = cls(
            n_features=cfg["n_features"],
            word_ngrams=tuple(cfg["word_ngrams"]),
            char_ngrams=tuple(cfg["char_ngrams"]),
            task=cfg["task"],
            max_chars=cfg.get("max_chars", 20000),
        )
        with np.load(folder / "weights.npz", allow_pickle=False) as data:
            weights = data["weights"].astype(np.float32)
            bias = float(data["bias"][0])
        if weights.shape != (model.n_features,):
            raise ValueError(f"{folder}: weights have shape {weights.shape}, expected ({model.n_features},)")
        model.weights = weights
        model.bias = bias
        model.card = {k: v for k, v in meta.items() if k not in {"kind", "feature_version", "config"}}
        return model
