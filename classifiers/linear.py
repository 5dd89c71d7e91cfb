"""A fastText-style linear classifier over hashed word and character n-grams.

Texts are lower-cased and whitespace-folded; features are word n-grams (tokens = runs of
letters/digits) and character n-grams of the folded text, hashed into ``n_features`` buckets
(the hashing trick), counted, and each row L2-normalised. A linear model (logistic for
``binary``, squared loss for ``regression``) is trained with mini-batch AdaGrad.

Featurisation (:mod:`classifiers.linear_features`) is vectorised over a whole batch of
documents with numpy (polynomial hashes computed from prefix sums modulo 2**64), so prediction
runs at thousands of documents per second per core. Models are saved as NPZ (no pickle) plus a JSON model card.

>>> from classifiers.linear_train import fit_linear
>>> m = fit_linear(HashedLinearModel(n_features=2**12), ["good text here", "buy now click"] * 20, [1, 0] * 20, epochs=10)
>>> p = m.predict(["good text", "click buy"])
>>> bool(p[0] > 0.5 > p[1])
True

Training lives apart from inference, in :mod:`classifiers.linear_train`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from classifiers.linear_features import hashed_ngrams, ngram_blocks
from classifiers.linear_score import block_sums
from classifiers.scorer import open_weights, read_card
from curation.errors import json_safe

#: Bump when featurisation changes: a saved model is only valid with the same hashing.
FEATURE_VERSION = "hashed-ngrams-v1"
TASKS = ("binary", "regression")
__all__ = ["FEATURE_VERSION", "TASKS", "HashedLinearModel", "hashed_ngrams", "ngram_blocks"]


#: character-grid cells per featurised batch (:func:`_batch_len`): enough to amortise numpy's
#: per-call cost, few enough that a batch's arrays (8 bytes a cell) stay in a 2 MB L2 cache
#: (2**16 and 2**17 were fastest on real windows and pages; 2**18 and more gave back the gain)
GRID_CELLS = 2**17


def _batch_len(est: np.ndarray) -> int:
    """How many of the next texts (``est``: their lengths, ascending) go into one batch: as many as
    keep ``count * longest`` within :data:`GRID_CELLS`, at least one."""
    fits = np.arange(1, len(est) + 1) * est <= GRID_CELLS
    return max(int(np.count_nonzero(fits)), 1)


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
        self._padded: tuple[np.ndarray, np.ndarray] | None = None

    # -- features ---------------------------------------------------------------------
    def ngrams(self, texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """(document, feature) of every n-gram occurrence; padding feature = ``n_features``."""
        return hashed_ngrams(
            texts, self.n_features, word_ngrams=self.word_ngrams, char_ngrams=self.char_ngrams, max_chars=self.max_chars
        )

    # -- inference --------------------------------------------------------------------
    def decision_function(self, texts: Sequence[str], batch_size: int = 256) -> np.ndarray:
        """Raw linear scores (logits for ``binary``): bias + mean weight of the n-grams.

        A document's score does not depend on the batch it is featurised in, so the batches are
        cut from the texts in order of length: a batch's character grid (:mod:`classifiers.linear_score`)
        is as long as its longest text, and similar lengths leave little of it empty.
        """
        texts = [t if isinstance(t, str) else str(t) for t in texts]
        out = np.empty(len(texts), dtype=np.float64)
        w = self._padded_weights()
        # the folded text is never longer than the text, nor than max_chars
        est = np.minimum(np.fromiter(map(len, texts), dtype=np.int64, count=len(texts)), self.max_chars)
        order = np.argsort(est, kind="stable")
        est = est[order]
        i = 0
        while i < len(texts):
            idx = order[i : i + _batch_len(est[i : i + batch_size])]
            i += len(idx)
            batch = [texts[j] for j in idx.tolist()]
            total = np.zeros(len(batch))
            n = np.zeros(len(batch))
            for sums, count in block_sums(batch, w, self.n_features, self.word_ngrams, self.char_ngrams, self.max_chars):
                total += sums
                n += count
            out[idx] = total / np.maximum(n, 1.0) + self.bias
        return out

    def _padded_weights(self) -> np.ndarray:
        """The weights as float64 with one padding slot of weight 0 (for n-grams that cross document
        boundaries), built once per weights array: give the model new weights by assigning a new
        array to ``weights`` (as training and :meth:`load` do), not by editing it in place."""
        cached = self._padded
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
        (folder / "model.json").write_text(json.dumps(json_safe(meta), indent=2, sort_keys=True, default=str, allow_nan=False) + "\n")
        self.card = {k: v for k, v in meta.items() if k not in {"kind", "feature_version", "config"}}
        return folder

    @classmethod
    def load(cls, folder: str | Path) -> HashedLinearModel:
        """Load a model written by :meth:`save` (``allow_pickle=False``)."""
        folder = Path(folder)
        card_path = folder / "model.json"
        if not card_path.exists():
            raise FileNotFoundError(f"{folder} has no model.json; is it a folder written by HashedLinearModel.save?")
        meta = read_card(card_path)
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
        with open_weights(folder / "weights.npz") as data:
            weights = data["weights"].astype(np.float32)
            bias = float(data["bias"][0])
        if weights.shape != (model.n_features,):
            raise ValueError(f"{folder}: weights have shape {weights.shape}, expected ({model.n_features},)")
        model.weights = weights
        model.bias = bias
        model.card = {k: v for k, v in meta.items() if k not in {"kind", "feature_version", "config"}}
        return model
