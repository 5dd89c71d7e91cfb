"""The ``heuristics`` web-quality scorer: Gopher / C4 / FineWeb signals combined into one score.

Every signal of :mod:`classifiers.heuristics_signals` is kept (the stage writes them as
``quality_signal_<name>`` columns); the score is a fixed linear combination of robust z-scores:

    score = Σ_i w_i · clip((f_i(x_i) − center_i) / scale_i, −3, 3) / Σ_i |w_i|

with ``f_i`` a log or clip transform, ``center``/``scale`` the median and spread of the signal on
real Common Crawl WET pages, and the signs of ``w_i`` the directions of the published rules
(more terminal punctuation is better, more short lines is worse, …). The parameters ship as
JSON (``classifiers/models/web_heuristics/model.json``, rebuilt by
``benchmarks/web_quality/build_defaults.py``); a recipe may point to its own file.

Languages: signals are computed with the document's language (its words and stop words,
:mod:`classifiers.heuristics_signals`), and a language listed under ``languages`` in the model
file has its own ``center``/``scale`` per signal: the median and spread of the signal on good
real text of that language (``benchmarks/languages/build_heuristics_lang.py``), so "few stop
words" or "short lines" mean what they mean in that language. With ``penalty_only`` a term only
subtracts (``min(w·z, 0)``): like the published rules, which are floors and ceilings, a page is
marked down for being worse than typical good text of its language, never rewarded for being
"more" (a Chinese tutorial has fewer function words than a chatty review and is not worse for it).
Other languages use the English terms. A signal that is not defined for a page's language (NaN:
the stop-word signals of a language without a stop-word list) is left out of that page's score:
the sum runs over the defined terms and is divided by their ``Σ|w|`` alone, so the page is judged
on what can be measured in its language, never marked as if it had no stop words.

>>> scorer = HeuristicModel.default()
>>> good = "The committee met on Tuesday. It reviewed the budget and approved it after a long debate.\\n" * 3
>>> bad = "Home\\nLogin\\nCart\\nSHOP NOW\\nContact"
>>> s = scorer.predict([good, bad])
>>> bool(s[0] > s[1])
True
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from classifiers.heuristics_signals import SIGNAL_NAMES, signal_matrix

DEFAULT_MODEL_DIR = Path(__file__).resolve().parent / "models" / "web_heuristics"
CLIP_Z = 3.0
#: The rule of :meth:`HeuristicModel.combine`, part of the scorer's version (so of the cache key of
#: its scores): "c2" leaves a signal undefined for the page's language out of the page's score.
COMBINE_RULE = "c2"


@dataclasses.dataclass(frozen=True)
class Term:
    """One signal's part of the combination."""

    signal: str
    weight: float
    center: float
    scale: float
    transform: str = "none"  #: none | log1p | clip:<lo>:<hi>
    why: str = ""  #: where the direction comes from (documentation only)

    def z(self, values: np.ndarray, center: np.ndarray | float | None = None, scale: np.ndarray | float | None = None) -> np.ndarray:
        """Clipped robust z-score; ``center``/``scale`` per document override the term's (languages)."""
        v = _transform(values, self.transform)
        c = self.center if center is None else center
        s = self.scale if scale is None else scale
        return np.nan_to_num(np.clip((v - c) / s, -CLIP_Z, CLIP_Z), nan=0.0)


def _transform(values: np.ndarray, how: str) -> np.ndarray:
    if how == "none":
        return values
    if how == "log1p":
        return np.log1p(np.maximum(values, 0.0))
    if how.startswith("clip:"):
        _, lo, hi = how.split(":")
        return np.clip(values, float(lo), float(hi))
    raise ValueError(f"unknown transform {how!r}; use none, log1p or clip:<lo>:<hi>")


class HeuristicModel:
    """Signals → one score. ``name``/``version`` identify it in cache keys and ledger details."""

    name = "heuristics"

    def __init__(self, terms: Sequence[Term], version: str = "1", card: dict[str, Any] | None = None) -> None:
        if not terms:
            raise ValueError("a heuristic combination needs at least one term")
        unknown = sorted({t.signal for t in terms} - set(SIGNAL_NAMES))
        if unknown:
            raise ValueError(f"unknown signals {unknown}; known: {', '.join(SIGNAL_NAMES)}")
        for t in terms:
            if not (t.scale > 0 and math.isfinite(t.scale) and math.isfinite(t.center)):
                raise ValueError(f"signal {t.signal}: scale must be > 0 and center finite")
        self.terms = tuple(terms)
        self.version = f"heuristics-{version}"
        self.card = card or {}
        self._index = {n: i for i, n in enumerate(SIGNAL_NAMES)}
        #: {lang: {signal: (center, scale)}} and the penalty-only languages, from the ``languages`` block
        blocks = self.card.get("languages") or {}
        self.languages: dict[str, dict[str, tuple[float, float]]] = {
            str(lang): {sig: (float(v["center"]), float(v["scale"])) for sig, v in b.get("signals", {}).items()}
            for lang, b in blocks.items()
        }
        self.penalty_only = frozenset(str(lang) for lang, b in blocks.items() if b.get("penalty_only"))
        for lang, per in self.languages.items():
            for sig, (c, sc) in per.items():
                if not (sc > 0 and math.isfinite(sc) and math.isfinite(c)):
                    raise ValueError(f"language {lang}, signal {sig}: scale must be > 0 and center finite")

    @classmethod
    def load(cls, folder: str | Path) -> HeuristicModel:
        """Read ``model.json`` ({"version", "terms": [{signal, weight, center, scale, transform}], …})."""
        path = Path(folder)
        path = path / "model.json" if path.is_dir() else path
        if not path.exists():
            raise FileNotFoundError(f"heuristic weights {path} not found")
        card = json.loads(path.read_text())
        terms = [Term(**t) for t in card["terms"]]
        return cls(terms, str(card.get("version", "1")), card)

    @classmethod
    def default(cls) -> HeuristicModel:
        """The shipped combination (classifiers/models/web_heuristics/model.json)."""
        return cls.load(DEFAULT_MODEL_DIR)

    def signals(self, texts: Sequence[str], langs: Sequence[str] | None = None) -> pd.DataFrame:
        """Every signal, one column each (named as in SIGNAL_NAMES), with each text's language (default en)."""
        texts = [t if isinstance(t, str) else "" for t in texts]
        return pd.DataFrame(signal_matrix(texts, list(langs) if langs is not None else None), columns=list(SIGNAL_NAMES))

    def combine(self, signals: pd.DataFrame | np.ndarray, langs: Sequence[str] | None = None) -> np.ndarray:
        """The score from a signal matrix (rows = documents, columns in SIGNAL_NAMES order)."""
        x = signals.to_numpy(dtype=np.float64) if isinstance(signals, pd.DataFrame) else np.asarray(signals, dtype=np.float64)
        lang_arr = np.asarray(list(langs), dtype=object) if langs is not None else np.full(len(x), "en", dtype=object)
        penalty = np.isin(lang_arr, list(self.penalty_only)) if self.penalty_only else np.zeros(len(x), dtype=bool)
        total, norm = np.zeros(len(x)), np.zeros(len(x))
        for t in self.terms:
            center, scale = np.full(len(x), t.center), np.full(len(x), t.scale)
            for lang, per in self.languages.items():
                if t.signal in per:
                    mask = lang_arr == lang
                    center[mask], scale[mask] = per[t.signal]
            values = x[:, self._index[t.signal]]
            part = t.weight * t.z(values, center, scale)  # 0 where the signal is undefined (NaN)
            total += np.where(penalty, np.minimum(part, 0.0), part)
            norm += np.where(np.isnan(values), 0.0, abs(t.weight))  # an undefined signal is left out of the mean
        return np.divide(total, norm, out=np.zeros(len(x)), where=norm > 0)

    def predict(self, texts: Sequence[str], langs: Sequence[str] | None = None) -> np.ndarray:
        """Scores of ``texts`` (higher = better), float64; ``langs``: each text's ``lang`` (default en)."""
        return self.combine(self.signals(texts, langs), langs)

    def to_json(self) -> dict[str, Any]:
        return {**self.card, "version": self.version.split("-", 1)[1], "terms": [dataclasses.asdict(t) for t in self.terms]}
