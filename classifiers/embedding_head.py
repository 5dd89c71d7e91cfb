"""A linear regression head on unit document embeddings, and the one scorer that runs it.

The FineWeb-Edu recipe (embedding model + regression head) for both the edu scores and the web
``embedding`` scorer: ``head.npz`` (arrays, no pickle) + ``model.json`` (the card: ``embedder``
settings the training vectors were made with, ``scale`` to clip to, name and version).

A head is ``score = w·x + b + a·prior(x)``, clipped to ``scale`` when the card gives one, with
``x`` the unit embedding and ``prior(x) = max_j cos(x, p_j) − max_k cos(x, n_k)`` over optional
positive/negative anchor vectors.

>>> head = EmbeddingHead(weights=np.array([4.0, 0.0]), bias=1.0, embedder={})
>>> head.predict_embeddings(np.array([[1.0, 0.0], [-1.0, 0.0]])).tolist()
[5.0, 0.0]
"""

from __future__ import annotations

import dataclasses
import functools
import json
from pathlib import Path
from typing import Any

import numpy as np

from classifiers.scorer import Batch, model_fingerprint, open_weights, read_card

#: The embedder every shipped head is trained on: SemDeDup's default settings, so a stage reuses
#: SemDeDup's stored vectors instead of embedding again.
DEFAULT_EMBEDDER: dict[str, Any] = {"model": "all-MiniLM-L6-v2", "max_seq_length": 256, "mask_digits": True}
SCALE = (0.0, 5.0)
HEAD_FILE = "head.npz"
CARD_FILE = "model.json"


@dataclasses.dataclass
class EmbeddingHead:
    """A linear regression head on unit embeddings, with an optional zero-shot prior term."""

    weights: np.ndarray
    bias: float
    embedder: dict[str, Any]
    prior_weight: float = 0.0
    positive_anchors: np.ndarray | None = None
    negative_anchors: np.ndarray | None = None
    scale: tuple[float, float] | None = SCALE  #: ``None``: unclipped (a web head's raw value)
    card: dict[str, Any] = dataclasses.field(default_factory=dict)

    @property
    def name(self) -> str:
        return str(self.card.get("name", "edu_head"))

    @property
    def version(self) -> str:
        return str(self.card.get("version", "1"))

    def prior(self, vectors: np.ndarray) -> np.ndarray:
        """max cosine to a positive anchor minus max cosine to a negative anchor (0 without anchors)."""
        if self.positive_anchors is None or self.negative_anchors is None:
            return np.zeros(len(vectors))
        x = np.asarray(vectors, dtype=np.float64)
        return (x @ self.positive_anchors.T).max(axis=1) - (x @ self.negative_anchors.T).max(axis=1)

    def raw(self, vectors: np.ndarray) -> np.ndarray:
        """The unclipped score."""
        x = np.asarray(vectors, dtype=np.float64)
        if x.ndim != 2 or x.shape[1] != len(self.weights):
            raise ValueError(f"head {self.name!r} expects {len(self.weights)}-d embeddings, got shape {x.shape}")
        out = x @ self.weights + self.bias
        if self.prior_weight:
            out = out + self.prior_weight * self.prior(x)
        return out

    def predict_embeddings(self, vectors: np.ndarray) -> np.ndarray:
        """Scores for unit embedding rows (clipped to ``scale`` when there is one)."""
        if len(vectors) == 0:
            return np.zeros(0)
        out = self.raw(vectors)
        return np.clip(out, *self.scale) if self.scale is not None else out

    def save(self, folder: str | Path) -> Path:
        """``head.npz`` (arrays, no pickle) + ``model.json`` (the model card)."""
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        dim = len(self.weights)
        arrays = {
            "weights": np.asarray(self.weights, dtype=np.float32),
            "bias": np.asarray([self.bias], dtype=np.float64),
            "prior_weight": np.asarray([self.prior_weight], dtype=np.float64),
            "positive_anchors": np.asarray(self.positive_anchors if self.positive_anchors is not None else np.zeros((0, dim)), dtype=np.float32),
            "negative_anchors": np.asarray(self.negative_anchors if self.negative_anchors is not None else np.zeros((0, dim)), dtype=np.float32),
        }
        np.savez_compressed(folder / HEAD_FILE, **arrays)
        card = {**self.card, "kind": "embedding_head", "embedder": self.embedder, "dim": dim}
        if self.scale is not None:
            card["scale"] = list(self.scale)
        (folder / CARD_FILE).write_text(json.dumps(card, indent=2, sort_keys=True, default=jsonable) + "\n")
        return folder

    @classmethod
    def load(cls, folder: str | Path) -> EmbeddingHead:
        """Read a head; the prior arrays and ``scale`` are optional (a web head has neither)."""
        folder = Path(folder)
        card = read_card(folder / CARD_FILE)
        with open_weights(folder / HEAD_FILE) as z:
            def anchors(key: str) -> np.ndarray | None:
                a = z[key].astype(np.float64) if key in z.files else np.zeros(0)
                return a if len(a) else None

            return cls(
                weights=z["weights"].astype(np.float64),
                bias=float(z["bias"][0]),
                embedder=dict(card.get("embedder") or DEFAULT_EMBEDDER),
                prior_weight=float(z["prior_weight"][0]) if "prior_weight" in z.files else 0.0,
                positive_anchors=anchors("positive_anchors"),
                negative_anchors=anchors("negative_anchors"),
                scale=tuple(card["scale"]) if card.get("scale") is not None else None,  # type: ignore[arg-type]
                card=card,
            )


@functools.lru_cache(maxsize=8)
def _load_head(folder: str, fingerprint: str) -> EmbeddingHead:
    return EmbeddingHead.load(folder)


class EmbeddingHeadScorer:
    """Scores a batch with an :class:`EmbeddingHead` over its ``vectors`` (embedded here with the
    head's own embedder when the batch has none). ``name`` defaults to the card's."""

    needs = frozenset({"vectors"})

    def __init__(self, folder: str | Path, name: str | None = None, device: str = "auto", batch_size: int = 64) -> None:
        self.folder = Path(folder)
        if not (self.folder / CARD_FILE).exists() or not (self.folder / HEAD_FILE).exists():
            raise FileNotFoundError(f"{self.folder} is not an embedding head ({HEAD_FILE} + {CARD_FILE})")
        self.device, self.batch_size = device, int(batch_size)
        self.fingerprint = model_fingerprint(self.folder)
        self.name = name or self.load().name

    @property
    def version(self) -> str:
        return f"{self.load().version}+{self.fingerprint}"

    @property
    def embedder(self) -> dict[str, Any]:
        """``get_embedder(**settings)`` that produced the training vectors."""
        return dict(self.load().embedder)

    def load(self) -> EmbeddingHead:
        return _load_head(str(self.folder), self.fingerprint)

    def embed(self, texts: list[str]) -> np.ndarray:
        from classifiers.embedding import get_embedder

        return get_embedder(**self.embedder, device=self.device, batch_size=self.batch_size).embed(texts)

    def vectors(self, batch: Batch) -> np.ndarray:
        """The batch's vectors, embedded now if it carries none."""
        return batch.vectors if batch.vectors is not None else self.embed(batch.clean_texts())

    def score(self, batch: Batch) -> np.ndarray:
        if len(batch) == 0:
            return np.zeros(0)
        return self.load().predict_embeddings(self.vectors(batch))


def jsonable(obj: Any) -> Any:
    """``json.dumps(default=...)`` for numpy scalars and arrays."""
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    raise TypeError(f"not JSON serialisable: {type(obj).__name__}")
