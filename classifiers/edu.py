"""Educational-value scorers for mathematics and science, on the ``edu`` rubric's 0–5 scale.

Scorers share one protocol (``name``, ``version``, lazy ``load()``, ``predict(texts)``, and
``score(texts, vectors=None)`` to reuse embeddings already computed, ``needs_vectors``):

- ``default`` — the embedded CPU default shipped under ``classifiers/models/edu_default/``: the
  mean of a linear head on all-MiniLM-L6-v2 embeddings plus a zero-shot prior (similarity to
  rubric descriptions) and a hashed n-gram regression, both trained on labelled reference
  documents and calibrated to the 0–5 scale (see the model card and ``docs/edu_score.md``);
- ``distilled`` — the FineWeb-Edu recipe: the same kind of head, fit on a run's LLM annotations
  (``curate train-classifier edu``); what runs when a real LLM annotates;
- ``hashed`` — a hashed word/char n-gram linear regression on the annotations
  (:class:`classifiers.linear.HashedLinearModel`), no embeddings needed.

A head is ``score = clip(w·x + b + a·prior(x), 0, 5)`` with ``x`` the unit embedding and
``prior(x) = max_j cos(x, p_j) − max_k cos(x, n_k)`` over positive/negative anchor vectors.

>>> head = EmbeddingHead(weights=np.array([4.0, 0.0]), bias=1.0, embedder={})
>>> head.predict_embeddings(np.array([[1.0, 0.0], [-1.0, 0.0]])).tolist()
[5.0, 0.0]
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import logging
from pathlib import Path
from typing import Any

import numpy as np

log = logging.getLogger(__name__)

#: The embedder every shipped head is trained on: SemDeDup's default settings, so the stage
#: reuses SemDeDup's stored vectors instead of embedding again.
DEFAULT_EMBEDDER: dict[str, Any] = {"model": "all-MiniLM-L6-v2", "max_seq_length": 256, "mask_digits": True}
SCALE = (0.0, 5.0)
HEAD_FILE = "head.npz"
CARD_FILE = "model.json"

#: Zero-shot anchors: what the top and the bottom of the edu rubric look like.
PRIOR_POSITIVE = (
    "A textbook section that teaches a mathematics concept step by step, with definitions, worked examples and exercises.",
    "A physics, chemistry or biology textbook chapter explaining a law of nature with equations and examples.",
    "A research article in mathematics with definitions, lemmas, theorems and proofs.",
    "An abstract of a scientific paper in mathematics, physics, astronomy, neuroscience or computer science.",
    "Lecture notes in statistics and probability explaining a method with a worked example.",
)
PRIOR_NEGATIVE = (
    "An online shop product page with price, sizes, shipping and returns information.",
    "A company page advertising its services, with a call to contact sales or book a demo.",
    "A news article about politics, celebrities, sports or local events.",
    "An essay of literary criticism, philosophy or cultural studies.",
    "A personal blog post, a forum chat or a list of links and navigation menus.",
)


def default_model_dir() -> Path:
    """The shipped default head (``classifiers/models/edu_default``)."""
    return Path(__file__).resolve().parent / "models" / "edu_default"


@dataclasses.dataclass
class EmbeddingHead:
    """A linear regression head on unit embeddings, with an optional zero-shot prior term."""

    weights: np.ndarray
    bias: float
    embedder: dict[str, Any]
    prior_weight: float = 0.0
    positive_anchors: np.ndarray | None = None
    negative_anchors: np.ndarray | None = None
    scale: tuple[float, float] = SCALE
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
        out = x @ self.weights + self.bias
        if self.prior_weight:
            out = out + self.prior_weight * self.prior(x)
        return out

    def predict_embeddings(self, vectors: np.ndarray) -> np.ndarray:
        """Scores on the rubric scale for unit embedding rows."""
        if len(vectors) == 0:
            return np.zeros(0)
        return np.clip(self.raw(vectors), *self.scale)

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
        card = {**self.card, "kind": "embedding_head", "embedder": self.embedder, "dim": dim, "scale": list(self.scale)}
        (folder / CARD_FILE).write_text(json.dumps(card, indent=2, sort_keys=True, default=_jsonable) + "\n")
        return folder

    @classmethod
    def load(cls, folder: str | Path) -> EmbeddingHead:
        folder = Path(folder)
        card = json.loads((folder / CARD_FILE).read_text())
        with np.load(folder / HEAD_FILE, allow_pickle=False) as z:
            pos, neg = z["positive_anchors"].astype(np.float64), z["negative_anchors"].astype(np.float64)
            return cls(
                weights=z["weights"].astype(np.float64),
                bias=float(z["bias"][0]),
                embedder=dict(card.get("embedder") or DEFAULT_EMBEDDER),
                prior_weight=float(z["prior_weight"][0]),
                positive_anchors=pos if len(pos) else None,
                negative_anchors=neg if len(neg) else None,
                scale=tuple(card.get("scale", SCALE)),  # type: ignore[arg-type]
                card=card,
            )


def model_fingerprint(folder: str | Path) -> str:
    """sha256 (16 hex) of a model folder's files, sub-folders included: the cache key of scores made with it."""
    h = hashlib.sha256()
    root = Path(folder)
    for f in sorted(p for p in root.rglob("*") if p.is_file() and not p.name.startswith(".")):
        h.update(str(f.relative_to(root)).encode() + b"\0" + f.read_bytes())
    return h.hexdigest()[:16]


@functools.lru_cache(maxsize=8)
def _load_head(folder: str, fingerprint: str) -> EmbeddingHead:
    return EmbeddingHead.load(folder)


class EmbeddingEduScorer:
    """Scores texts with an :class:`EmbeddingHead`; embeds with the head's embedder unless given vectors."""

    needs_vectors = True

    def __init__(self, folder: str | Path, device: str = "auto", batch_size: int = 64) -> None:
        self.folder = Path(folder)
        self.device = device
        self.batch_size = batch_size
        self._fingerprint = model_fingerprint(self.folder)

    @property
    def name(self) -> str:
        return self.load().name

    @property
    def version(self) -> str:
        return f"{self.load().version}+{self._fingerprint}"

    def load(self) -> EmbeddingHead:
        return _load_head(str(self.folder), self._fingerprint)

    def embedder_settings(self) -> dict[str, Any]:
        return dict(self.load().embedder)

    def embed(self, texts: list[str]) -> np.ndarray:
        from classifiers.embedding import get_embedder

        return get_embedder(**self.embedder_settings(), device=self.device, batch_size=self.batch_size).embed(texts)

    def score(self, texts: list[str], vectors: np.ndarray | None = None) -> np.ndarray:
        """Scores of ``texts``; ``vectors`` (their unit embeddings) when already computed."""
        return self.predict_embeddings(self.embed(texts) if vectors is None else vectors)

    def predict(self, texts: list[str]) -> np.ndarray:
        return self.score(texts)

    def predict_embeddings(self, vectors: np.ndarray) -> np.ndarray:
        return self.load().predict_embeddings(vectors)


class HashedEduScorer:
    """A hashed n-gram linear regression (``classifiers.linear.HashedLinearModel``) clipped to 0–5."""

    needs_vectors = False

    def __init__(self, folder: str | Path, **_unused: Any) -> None:
        self.folder = Path(folder)
        self._fingerprint = model_fingerprint(self.folder)
        self.name = "edu_hashed"

    @property
    def version(self) -> str:
        return self._fingerprint

    def load(self) -> Any:
        return _load_hashed(str(self.folder), self._fingerprint)

    def score(self, texts: list[str], vectors: np.ndarray | None = None) -> np.ndarray:
        if not len(texts):
            return np.zeros(0)
        return np.clip(np.asarray(self.load().predict(list(texts)), dtype=np.float64), *SCALE)

    def predict(self, texts: list[str]) -> np.ndarray:
        return self.score(texts)


@functools.lru_cache(maxsize=4)
def _load_hashed(folder: str, fingerprint: str) -> Any:
    from classifiers.linear import HashedLinearModel

    return HashedLinearModel.load(folder)


class EnsembleEduScorer:
    """Weighted mean of member scorers stored in sub-folders (the shipped default: embedding head + hashed n-grams).

    ``model.json``: ``{"kind": "ensemble", "members": [{"path": "head", "weight": 0.5}, …]}``.
    """

    def __init__(self, folder: str | Path, device: str = "auto", batch_size: int = 64) -> None:
        self.folder = Path(folder)
        self.card = json.loads((self.folder / CARD_FILE).read_text())
        self.members = [
            (get_edu_scorer(self.folder / m["path"], device=device, batch_size=batch_size), float(m["weight"]))
            for m in self.card["members"]
        ]
        self._fingerprint = model_fingerprint(self.folder)
        self.name = str(self.card.get("name", "edu_ensemble"))

    @property
    def version(self) -> str:
        return f"{self.card.get('version', '1')}+{self._fingerprint}"

    @property
    def needs_vectors(self) -> bool:
        return any(m.needs_vectors for m, _ in self.members)

    def embedder_settings(self) -> dict[str, Any]:
        return next(m.embedder_settings() for m, _ in self.members if m.needs_vectors)

    def load(self) -> list[Any]:
        return [m.load() for m, _ in self.members]

    def score(self, texts: list[str], vectors: np.ndarray | None = None) -> np.ndarray:
        if not len(texts):
            return np.zeros(0)
        if vectors is None and self.needs_vectors:
            vectors = next(m for m, _ in self.members if m.needs_vectors).embed(texts)
        total = sum(w * m.score(texts, vectors) for m, w in self.members)
        return np.clip(total / sum(w for _, w in self.members), *SCALE)

    def predict(self, texts: list[str]) -> np.ndarray:
        return self.score(texts)


def save_ensemble(folder: str | Path, members: dict[str, float], card: dict[str, Any]) -> Path:
    """Write the ensemble card of ``folder`` whose members (sub-folder → weight) are already saved."""
    folder = Path(folder)
    payload = {**card, "kind": "ensemble", "members": [{"path": p, "weight": w} for p, w in members.items()], "scale": list(SCALE)}
    (folder / CARD_FILE).write_text(json.dumps(payload, indent=2, sort_keys=True, default=_jsonable) + "\n")
    return folder


EduScorer = EmbeddingEduScorer | HashedEduScorer | EnsembleEduScorer


def get_edu_scorer(folder: str | Path | None = None, **kwargs: Any) -> EduScorer:
    """The scorer stored in ``folder`` (kind read from its card); the shipped default when None."""
    folder = Path(folder) if folder is not None else default_model_dir()
    card = json.loads((folder / CARD_FILE).read_text()) if (folder / CARD_FILE).exists() else {}
    kind = card.get("kind")
    if kind == "embedding_head":
        return EmbeddingEduScorer(folder, **kwargs)
    if kind == "ensemble":
        return EnsembleEduScorer(folder, **kwargs)
    return HashedEduScorer(folder)


def _jsonable(obj: Any) -> Any:
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    raise TypeError(f"not JSON serialisable: {type(obj).__name__}")
