"""Code-quality scorers: a structural score per language family and a learned model, both 0–10.

Scorers produce numbers and never decide (tiers are :mod:`curation.quality.code_tiers`).

- ``structural`` (:class:`StructuralScorer`): a weighted mean of component scores in [0, 1]
  computed from :func:`classifiers.code_quality_features.structural_features` — documentation
  and comments, function length, nesting depth, naming, duplicated lines, parse errors, long
  lines, file size — scaled to 0–10, with a small discount for test/example files. A file with no
  line of code (comments, docstrings or a licence text only) scores :data:`NO_CODE_SCORE`, below
  every file that holds code; a file cut short (``Batch.cut``) is read as the start of a file.
- ``learned`` (:class:`LearnedScorer`): a hashed n-gram regression model
  (:class:`classifiers.linear.HashedLinearModel`) trained on LLM annotations with the
  ``code_quality`` rubric (0–10, Seed-Coder's readability / modularity / clarity /
  reusability); ``curate train-classifier code-quality`` trains it.

Both implement :class:`classifiers.scorer.Scorer` over a batch with ``languages`` and ``paths``:

>>> s = StructuralScorer()
>>> good = "def area(radius):\\n    'Area of a circle.'\\n    return 3.14159 * radius * radius\\n" * 3
>>> bad = Batch(["def f(:\\n"], ["Python"], ["x.py"])
>>> bool(s.score(Batch([good], ["Python"], ["geo.py"]))[0] > s.score(bad)[0])
True
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from classifiers.code_quality_features import structural_features
from classifiers.scorer import Batch, Scorer, model_fingerprint

log = logging.getLogger(__name__)

#: Component weights of the structural score (they sum to 1). Changing them, or the features, changes the scorer version.
WEIGHTS: dict[str, float] = {
    "documentation": 0.20,
    "function_length": 0.15,
    "nesting": 0.15,
    "naming": 0.10,
    "duplication": 0.15,
    "parse": 0.15,
    "line_length": 0.05,
    "size": 0.05,
}
#: the component value of a feature a file does not have (no function: no function length, naming or documented share)
NEUTRAL = 0.6
TEST_DISCOUNT = 0.95  #: test and example files keep 95 % of their score
#: the score of a file with no line of code (:meth:`StructuralScorer.score`; a page's code block keeps its own score:
#: ``# apt install …`` in a shell block reads as a comment)
NO_CODE_SCORE = 0.0
DEFAULT_LEARNED_DIR = Path(__file__).resolve().parent / "models" / "code_quality"


def _ramp(x: float, lo: float, hi: float) -> float:
    """1 at ``x <= lo``, 0 at ``x >= hi``, linear between (``lo > hi`` ramps upward)."""
    v = (hi - x) / (hi - lo) if lo < hi else (x - hi) / (lo - hi)
    return 1.0 if v > 1.0 else 0.0 if v < 0.0 else float(v)  # np.clip's result (NaN and -0.0 kept) without its call


def components(f: dict[str, Any]) -> dict[str, float]:
    """Component scores in [0, 1] from structural features (names as in :data:`WEIGHTS`).

    Features a file does not have (no functions: ``-1``) get a neutral :data:`NEUTRAL`, so scripts and
    headers are neither rewarded nor punished for them: the share of documented functions too, which
    weighs half of the documentation component whether a file has functions or not.
    """
    c = f["comment_fraction"]
    comment_part = _ramp(c, 0.15, 0.0) if c <= 0.6 else 0.3 + 0.7 * _ramp(c, 0.6, 0.95)
    doc = f["documented_fraction"]
    documentation = 0.5 * comment_part + 0.5 * (NEUTRAL if doc < 0 else doc)
    # test names document tests; examples are read with their docs; type stubs (.pyi) declare, their
    # module's docs are elsewhere (typeshed's style has no docstrings)
    if f["is_test_or_example"] or f["is_stub"]:
        documentation = max(documentation, 0.6)
    mean_fn = f["mean_function_lines"]
    function_length = NEUTRAL if mean_fn < 0 else 0.7 * _ramp(mean_fn, 40, 200) + 0.3 * _ramp(f["max_function_lines"], 100, 500)
    naming = NEUTRAL if f["naming_fraction"] < 0 else f["naming_fraction"] * (1.0 - f["short_name_fraction"])
    # short names (minified, obfuscated, a/b/c code) score low
    naming = 0.6 * naming + 0.2 * _ramp(f["mean_identifier_length"], 6.0, 3.0) + 0.2 * _ramp(f["short_identifier_fraction"], 0.05, 0.3)
    return {
        "documentation": documentation,
        "function_length": function_length,
        "nesting": _ramp(f["max_nesting"], 3, 7),
        "naming": naming,
        "duplication": _ramp(f["duplicate_fraction"], 0.05, 0.4),
        "parse": 0.0 if f["parse_error"] else 1.0,
        "line_length": _ramp(f["long_line_fraction"], 0.0, 0.2),
        "size": _ramp(f["n_nonblank"], 30, 3),
    }


def structural_score(f: dict[str, Any]) -> float:
    """0–10 score of a file's structural features.

    >>> from classifiers.code_quality_features import structural_features
    >>> round(structural_score(structural_features("x=1\\n", "Python", "a.py")), 1)
    7.1
    """
    comp = components(f)
    value = 10.0 * sum(WEIGHTS[k] * comp[k] for k in WEIGHTS)
    return value * (TEST_DISCOUNT if f["is_test_or_example"] else 1.0)


class StructuralScorer:
    """Language-aware structural score (``ast`` for Python, lexical scans for the others)."""

    name = "structural"
    version = "structural_v6"  # 4: cut files read as a prefix, .pyi documentation floor, files without code 0;
    # 5: C definitions with the brace or the return type on a line of its own, neutral documented share without functions;
    # 6: C/C++ statements, type operators and attributes no function names (their own keyword list), attributes in
    # the return type, noexcept/requires lines before a constructor's initializer list
    needs = frozenset({"text", "language", "path"})

    def features(self, texts: Sequence[str], languages: Sequence[str | None], paths: Sequence[str | None],
                 cut: Sequence[bool] | None = None) -> list[dict[str, Any]]:
        cut = cut if cut is not None else [False] * len(texts)
        return [structural_features(t, lang, p, c) for t, lang, p, c in zip(texts, languages, paths, cut, strict=True)]

    def score(self, batch: Batch) -> np.ndarray:
        """The structural score of each file; :data:`NO_CODE_SCORE` for a file with no line of code."""
        n = len(batch)
        langs = batch.languages if batch.languages is not None else [None] * n
        paths = batch.paths if batch.paths is not None else [None] * n
        feats = self.features(batch.texts, langs, paths, batch.cut)
        return np.array([structural_score(f) if f["code_lines"] else NO_CODE_SCORE for f in feats], dtype=np.float64)


class LearnedScorer:
    """Regression head on hashed n-grams, trained from LLM ``code_quality`` annotations (0–10).

    The model folder (``model.json`` + ``weights.npz``) defaults to the shipped one in
    ``classifiers/models/code_quality/``; the language is prepended to the text so one model
    can learn per-language offsets.
    """

    name = "learned"
    needs = frozenset({"text", "language"})

    def __init__(self, model_dir: str | Path | None = None) -> None:
        self.model_dir = Path(model_dir) if model_dir else DEFAULT_LEARNED_DIR

    @functools.cached_property
    def version(self) -> str:
        """The card's model and rubric versions and the files' fingerprint (a retrained model re-scores)."""
        card = self.card()
        tag = model_fingerprint(self.model_dir) if self.available() else "missing"
        return f"learned:{card.get('model_version', '?')}:{card.get('rubric', '?')}@{card.get('rubric_version', '?')}+{tag}"

    def card(self) -> dict[str, Any]:
        import json

        path = self.model_dir / "model.json"
        return json.loads(path.read_text()) if path.exists() else {}

    def available(self) -> bool:
        return (self.model_dir / "model.json").exists() and (self.model_dir / "weights.npz").exists()

    def score(self, batch: Batch) -> np.ndarray:
        model = _load_linear(str(self.model_dir))
        langs = batch.languages if batch.languages is not None else [None] * len(batch)
        pred = model.predict([learned_input(t, lang) for t, lang in zip(batch.clean_texts(), langs, strict=True)])
        return np.clip(pred, 0.0, 10.0)


def learned_input(text: str, language: str | None, max_chars: int = 8000) -> str:
    """What the learned model reads: a language tag and the start of the file."""
    return f"<lang {language or 'unknown'}>\n{text[:max_chars]}"


@functools.lru_cache(maxsize=4)
def _load_linear(folder: str) -> Any:
    from classifiers.linear import HashedLinearModel

    log.info("loading code-quality model from %s", folder)
    return HashedLinearModel.load(folder)


def get_scorer(name: str, model_dir: str | None = None) -> Scorer:
    """A scorer by name: ``structural`` or ``learned``."""
    if name == "structural":
        return StructuralScorer()
    if name == "learned":
        return LearnedScorer(model_dir)
    raise ValueError(f"unknown code scorer {name!r}; choose structural or learned")
