"""Educational-value scorers for mathematics and science, on the ``edu`` rubric's 0–5 scale.

Every scorer implements :class:`classifiers.scorer.Scorer` (``name``, ``version``, ``needs``,
``score(batch)``); one that needs ``vectors`` embeds the batch's texts itself when the batch
carries none. A model folder says its kind in its card (``model.json``):

- ``ensemble`` — the embedded CPU default shipped under ``classifiers/models/edu_default/``: the
  mean of a linear head on all-MiniLM-L6-v2 embeddings plus a zero-shot prior (similarity to
  rubric descriptions) and a hashed n-gram regression, both trained on labelled reference
  documents and calibrated to the 0–5 scale (see the model card and ``docs/edu_score.md``);
- ``embedding_head`` — :class:`classifiers.embedding_head.EmbeddingHeadScorer`, the FineWeb-Edu
  recipe: a head fit on a run's LLM annotations (``curate train-classifier edu``) is one;
- anything else — a hashed word/char n-gram linear regression on the annotations
  (:class:`classifiers.linear.HashedLinearModel`), no embeddings needed.

>>> scorer = get_edu_scorer()
>>> scorer.name, sorted(scorer.needs)
('edu_default', ['text', 'vectors'])
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

import numpy as np

from classifiers.embedding_head import CARD_FILE, SCALE, EmbeddingHeadScorer, jsonable
from classifiers.scorer import Batch, model_fingerprint

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
    """The shipped default scorer (``classifiers/models/edu_default``)."""
    return Path(__file__).resolve().parent / "models" / "edu_default"


class HashedEduScorer:
    """A hashed n-gram linear regression (``classifiers.linear.HashedLinearModel``) clipped to 0–5."""

    needs = frozenset({"text"})

    def __init__(self, folder: str | Path, **_unused: Any) -> None:
        self.folder = Path(folder)
        self.fingerprint = model_fingerprint(self.folder)
        self.name = "edu_hashed"

    @property
    def version(self) -> str:
        return self.fingerprint

    def load(self) -> Any:
        return _load_hashed(str(self.folder), self.fingerprint)

    def score(self, batch: Batch) -> np.ndarray:
        if not len(batch):
            return np.zeros(0)
        return np.clip(np.asarray(self.load().predict(batch.clean_texts()), dtype=np.float64), *SCALE)


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
        self.fingerprint = model_fingerprint(self.folder)
        self.name = str(self.card.get("name", "edu_ensemble"))
        self.needs = frozenset().union(*(m.needs for m, _ in self.members))

    @property
    def version(self) -> str:
        return f"{self.card.get('version', '1')}+{self.fingerprint}"

    def _vector_member(self) -> EmbeddingHeadScorer:
        return next(m for m, _ in self.members if "vectors" in m.needs)

    @property
    def embedder(self) -> dict[str, Any]:
        """The embedder settings of the member that needs vectors."""
        return self._vector_member().embedder

    def score(self, batch: Batch) -> np.ndarray:
        if not len(batch):
            return np.zeros(0)
        if batch.vectors is None and "vectors" in self.needs:  # embed once for every member
            batch = Batch(batch.texts, batch.languages, batch.paths, self._vector_member().vectors(batch))
        total = sum(w * m.score(batch) for m, w in self.members)
        return np.clip(total / sum(w for _, w in self.members), *SCALE)


def save_ensemble(folder: str | Path, members: dict[str, float], card: dict[str, Any]) -> Path:
    """Write the ensemble card of ``folder`` whose members (sub-folder → weight) are already saved."""
    folder = Path(folder)
    payload = {**card, "kind": "ensemble", "members": [{"path": p, "weight": w} for p, w in members.items()], "scale": list(SCALE)}
    (folder / CARD_FILE).write_text(json.dumps(payload, indent=2, sort_keys=True, default=jsonable) + "\n")
    return folder


EduScorer = EmbeddingHeadScorer | HashedEduScorer | EnsembleEduScorer


def get_edu_scorer(folder: str | Path | None = None, **kwargs: Any) -> EduScorer:
    """The scorer stored in ``folder`` (kind read from its card); the shipped default when None."""
    folder = Path(folder) if folder is not None else default_model_dir()
    card = json.loads((folder / CARD_FILE).read_text()) if (folder / CARD_FILE).exists() else {}
    kind = card.get("kind")
    if kind == "embedding_head":
        return EmbeddingHeadScorer(folder, **kwargs)
    if kind == "ensemble":
        return EnsembleEduScorer(folder, **kwargs)
    return HashedEduScorer(folder)
