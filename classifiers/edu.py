"""Educational-value scorers for mathematics and science, on the ``edu`` rubric's 0–5 scale.

Every scorer implements :class:`classifiers.scorer.Scorer` (``name``, ``version``, ``needs``,
``score(batch)``); one that needs ``vectors`` embeds the batch's texts itself when the batch
carries none. A model folder says its kind in its card (``model.json``):

- ``ensemble`` — the embedded CPU default shipped under ``classifiers/models/edu_default/``: the
  mean of a linear head on all-MiniLM-L6-v2 embeddings plus a zero-shot prior (similarity to
  rubric descriptions) and a hashed n-gram regression, both trained on labelled reference
  documents and calibrated to the 0–5 scale (see the model card and ``docs/edu_score.md``);
- ``hashed_linear`` with the name ``edu_fast`` — the CPU scorer shipped under
  ``classifiers/models/edu_fast/``: a hashed n-gram regression distilled from the default's scores
  on English and Chinese text (``benchmarks/edu_score/train_fast.py``), no embeddings needed;
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
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from classifiers.embedding_head import CARD_FILE, SCALE, EmbeddingHeadScorer, jsonable
from classifiers.scorer import Batch, model_fingerprint, read_card
from curation.hashing import codepoints, segment_sums

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


def fast_model_dir() -> Path:
    """The shipped CPU scorer (``classifiers/models/edu_fast``): hashed word/char n-grams distilled from
    the default on English and Chinese text, no transformer (``scorer: fast``, ``--profile cpu``)."""
    return Path(__file__).resolve().parent / "models" / "edu_fast"


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
        model = self.load()
        texts = batch.clean_texts()
        raw = np.asarray(model.predict(texts), dtype=np.float64)
        han = model.card.get("calibration_han")
        if not han:
            return calibrate(raw, model.card.get("calibration"))
        mostly_han = han_shares(texts) >= float(han["min_share"])
        return np.where(mostly_han, calibrate(raw, han), calibrate(raw, model.card.get("calibration")))


def han_share(text: str, chars: int = 2000) -> float:
    """Han characters over Han characters plus Latin letters in the first ``chars`` characters.

    >>> han_share("函数的导数 f(x) = 2x"), han_share("the derivative"), han_share("")
    (0.625, 0.0, 0.0)
    """
    return float(han_shares([text], chars)[0])


def han_shares(texts: Sequence[str], chars: int = 2000) -> np.ndarray:
    """:func:`han_share` of every text, counted over the code points of the whole batch at once.

    >>> han_shares(["函数 f", "", "ab"]).tolist()
    [0.6666666666666666, 0.0, 0.0]
    """
    heads = [t[:chars] for t in texts]
    cp = codepoints(heads, "")
    lengths = np.fromiter(map(len, heads), dtype=np.int64, count=len(heads))
    han = ((cp >= 0x4E00) & (cp <= 0x9FFF)) | ((cp >= 0x3400) & (cp <= 0x4DBF))
    latin = ((cp | 0x20) >= ord("a")) & ((cp | 0x20) <= ord("z"))  # ASCII letters: A-Z and a-z
    n_han, n_latin = segment_sums(han, lengths), segment_sums(latin, lengths)
    both = n_han + n_latin
    return np.where(both > 0, n_han / np.maximum(both, 1), 0.0)


def calibrate(raw: np.ndarray, calibration: dict[str, Any] | None) -> np.ndarray:
    """``raw`` through a monotone piecewise-linear map (knots ``raw`` → ``score``), clipped to 0–5.

    A card may hold two maps: ``calibration``, and ``calibration_han`` for texts whose letters are
    mostly Han (:func:`han_share` at least its ``min_share``), fitted on Chinese text.

    >>> calibrate(np.array([-1.0, 1.0, 2.0, 9.0]), {"raw": [0.0, 2.0, 4.0], "score": [0.0, 3.0, 5.0]}).tolist()
    [0.0, 1.5, 3.0, 5.0]
    >>> calibrate(np.array([7.0]), None).tolist()
    [5.0]
    """
    if calibration:
        raw = np.interp(raw, np.asarray(calibration["raw"], dtype=np.float64), np.asarray(calibration["score"], dtype=np.float64))
    return np.clip(raw, *SCALE)


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
        self.card = read_card(self.folder / CARD_FILE)
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
    card = read_card(folder / CARD_FILE) if (folder / CARD_FILE).exists() else {}
    kind = card.get("kind")
    if kind == "embedding_head":
        return EmbeddingHeadScorer(folder, **kwargs)
    if kind == "ensemble":
        return EnsembleEduScorer(folder, **kwargs)
    return HashedEduScorer(folder)
