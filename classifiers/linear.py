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

import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from curation.hashing import BASE, GOLDEN, codepoints
from curation.hashing import alnum_table as _word_table
from curation.hashing import bucket as _bucket
from curation.hashing import powers as _powers

#: Bump when featurisation changes: a saved model is only valid with the same hashing.
FEATURE_VERSION = "hashed-ngrams-v1"
TASKS = ("binary", "regression")

_U64 = np.uint64
_BASE = _U64(BASE)
_PAIR = _U64(GOLDEN)


def _codepoints(texts: Sequence[str], max_chars: int) -> tuple[np.ndarray, np.ndarray]:
    """Code points of the folded texts joined by a NUL separator, and each position's document."""
    # NUL separates documents in the joined buffer, so it may not occur inside one
    folded = [" ".join(str(t)[: max_chars * 2].replace("\x00", " ").lower().split())[:max_chars] for t in texts]
    cp = codepoints(folded, "\x00").astype(_U64)
    lengths = np.fromiter((len(f) + 1 for f in folded), dtype=np.int64, count=len(folded))
    doc = np.repeat(np.arange(len(folded), dtype=np.int64), lengths)[: len(cp)]
    return cp, doc


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
    cp, doc = _codepoints(texts, max_chars)
    n = len(cp)
    pad = _U64(n_features)
    sep = cp == 0
    with np.errstate(over="ignore"):
        # Character n-grams: rolling h_k = h_{k-1} * BASE + c, never across documents.
        lo, hi = char_ngrams
        h = cp
        bad = sep
        for k in range(2, hi + 1):
            if n < k:
                break
            h = h[:-1] * _BASE + cp[k - 1 :]
            bad = bad[:-1] | sep[k - 1 :]
            if k >= lo:
                col = _bucket(h + _U64(k) * _U64(0x51ED27), n_features)
                col[bad] = pad
                yield doc[: len(col)], col.view(np.int64)
        # Words: runs of word characters; hash of [a, b) from prefix sums of c_j * BASE**-j.
        wlo, whi = word_ngrams
        if whi >= 1 and n:
            small = cp < 0x10000
            is_word = np.ones(n, dtype=bool)
            is_word[small] = _word_table()[cp[small].astype(np.int64)]
            is_word &= ~sep
            edges = np.diff(np.concatenate([[0], is_word.view(np.int8), [0]]))
            starts = np.flatnonzero(edges == 1)
            ends = np.flatnonzero(edges == -1)
            if len(starts):
                pw, inv = _powers(n + 1)
                prefix = np.concatenate([[_U64(0)], np.cumsum(cp * inv[:n], dtype=_U64)])
                wh = (prefix[ends] - prefix[starts]) * pw[starts]
                wdoc = doc[starts]
                if wlo <= 1:
                    yield wdoc, _bucket(wh + _U64(0xA5A5), n_features).view(np.int64)
                g = wh
                for k in range(2, whi + 1):
                    if len(g) < 2:
                        break
                    # an n-gram is inside one document iff its first and last words are
                    same = wdoc[k - 1 :] == wdoc[: len(wdoc) - k + 1]
                    g = (g[:-1] ^ (g[:-1] >> _U64(29))) * _PAIR + wh[k - 1 :]
                    if k >= wlo:
                        col = _bucket(g + _U64(k), n_features)
                        col[~same] = pad
                        yield wdoc[: len(col)], col.view(np.int64)


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
        # one padding slot of weight 0 for n-grams that cross document boundaries
        w = np.concatenate([self.weights, np.zeros(1, dtype=np.float32)])
        for i in range(0, len(texts), batch_size):
            batch = texts[i : i + batch_size]
            total = np.zeros(len(batch))
            n = np.zeros(len(batch))
            blocks = ngram_blocks(
                batch, self.n_features, word_ngrams=self.word_ngrams, char_ngrams=self.char_ngrams, max_chars=self.max_chars
            )
            for doc, col in blocks:
                total += np.bincount(doc, weights=w[col], minlength=len(batch))
                n += np.bincount(doc, minlength=len(batch)) - np.bincount(doc[col == self.n_features], minlength=len(batch))
            out[i : i + len(batch)] = total / np.maximum(n, 1.0) + self.bias
        return out

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
