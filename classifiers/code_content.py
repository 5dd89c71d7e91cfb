"""Fast code-content classifier: does a text contain source code? (hashed n-gram logistic model)

A page is cut into windows of consecutive lines; the model scores each window and the page's
score is the highest window probability, so one code block in a long article is enough. The
model is a :class:`classifiers.linear.HashedLinearModel` trained on windows of code files
(positives) and prose (negatives) by ``curate train-classifier code-content``; a small default
trained on real code and prose ships in ``classifiers/models/code_content/`` (weights only).

>>> windows("a\\nb\\nc", window_lines=2)
['a\\nb', 'c']
"""

from __future__ import annotations

import functools
import json
import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

log = logging.getLogger(__name__)

DEFAULT_DIR = Path(__file__).resolve().parent / "models" / "code_content"


#: windows a page is scored by at most (evenly spaced over a longer page: the cost stays bounded)
MAX_WINDOWS = 64


def windows(text: str, window_lines: int = 12, max_chars: int = 1500, max_windows: int = MAX_WINDOWS, min_chars: int = 0) -> list[str]:
    """Consecutive non-empty lines of ``text``, ``window_lines`` at a time (each cut at ``max_chars``).

    Windows under ``min_chars`` characters are left out unless the whole text is that short.
    """
    return sample_windows(all_windows(text, window_lines, max_chars, min_chars), max_windows)


def all_windows(text: str, window_lines: int = 12, max_chars: int = 1500, min_chars: int = 0) -> list[str]:
    """:func:`windows` of ``text`` before any are left out for length (``max_windows`` unbounded)."""
    lines = [ln for ln in text.split("\n") if ln.strip()]
    out = ["\n".join(lines[i : i + window_lines])[:max_chars] for i in range(0, len(lines), window_lines)]
    if min_chars:
        long_enough = [w for w in out if len(w) >= min_chars]
        out = long_enough or (["\n".join(lines)[:max_chars]] if lines else [])
    return out


def sample_windows(ws: list[str], max_windows: int = MAX_WINDOWS) -> list[str]:
    """``ws``, or ``max_windows`` evenly spaced ones of a longer list (long pages: the cost stays bounded)."""
    if len(ws) > max_windows:
        idx = np.linspace(0, len(ws) - 1, max_windows).astype(int)
        ws = [ws[i] for i in idx]
    return ws


class CodeContentClassifier:
    """Page-level probability that a text holds code (max over line windows)."""

    name = "code_content"

    def __init__(self, model_dir: str | Path | None = None, window_lines: int | None = None, min_chars: int = 40) -> None:
        self.model_dir = Path(model_dir) if model_dir else DEFAULT_DIR
        self._window_lines = window_lines
        self.min_chars = min_chars  #: shorter windows ("Next", "SKU: N667FD") say nothing about code

    def card(self) -> dict[str, Any]:
        path = self.model_dir / "model.json"
        if not path.exists():
            raise FileNotFoundError(
                f"no code-content model in {self.model_dir}; train one with `curate train-classifier code-content`"
            )
        return dict(_card(str(path), path.stat().st_mtime_ns))

    @property
    def version(self) -> str:
        card = self.card()
        return f"code_content:{card.get('model_version', '?')}:{card.get('feature_version', '?')}"

    @property
    def window_lines(self) -> int:
        return int(self._window_lines or self.card().get("window_lines", 12))

    def predict_windows(self, texts: Sequence[str]) -> np.ndarray:
        """Probability of code for each text taken as one window."""
        return _load(str(self.model_dir)).predict(list(texts), batch_size=BATCH) if len(texts) else np.zeros(0)

    def predict(self, texts: Sequence[str]) -> np.ndarray:
        """Per text: the highest window probability (0.0 for an empty text)."""
        lines = self.window_lines if len(texts) else 12
        return self.predict_pages([windows(t or "", lines, min_chars=self.min_chars) for t in texts])[0]

    def predict_pages(self, per_doc: Sequence[list[str]]) -> tuple[np.ndarray, list[np.ndarray]]:
        """:meth:`predict` from each page's :func:`windows`: the page probabilities and, per page, its
        windows' probabilities (all windows of all pages in one model call)."""
        flat = [w for ws in per_doc for w in ws]
        probs = self.predict_windows(flat)
        out = np.zeros(len(per_doc), dtype=np.float64)
        parts: list[np.ndarray] = []
        i = 0
        for d, ws in enumerate(per_doc):
            part = probs[i : i + len(ws)]
            if ws:
                out[d] = float(part.max())
            parts.append(part)
            i += len(ws)
        return out, parts


#: windows per model call: a window's probability does not depend on the batch it is scored in,
#: and batches of this size keep the featurisation's arrays in cache (faster than the model's 256)
BATCH = 128


@functools.lru_cache(maxsize=4)
def _card(path: str, mtime_ns: int) -> dict[str, Any]:
    """The model card, read once per process and file version (``window_lines`` asks for it per page)."""
    return json.loads(Path(path).read_text())


@functools.lru_cache(maxsize=4)
def _load(folder: str) -> Any:
    from classifiers.linear import HashedLinearModel

    log.info("loading code-content model from %s", folder)
    return HashedLinearModel.load(folder)


def training_windows(code_texts: Sequence[str], prose_texts: Sequence[str], window_lines: int = 12,
                     per_doc: int = 4, seed: int = 0) -> tuple[list[str], np.ndarray]:
    """Labelled windows (1 = code) sampled from whole code files and prose documents.

    Up to ``per_doc`` windows per document, so long files do not dominate.
    """
    rng = np.random.default_rng(seed)
    texts: list[str] = []
    labels: list[int] = []
    for label, docs in ((1, code_texts), (0, prose_texts)):
        for t in docs:
            ws = [w for w in windows(t or "", window_lines, max_windows=10_000) if len(w) >= 20]
            if len(ws) > per_doc:
                ws = [ws[i] for i in sorted(rng.choice(len(ws), per_doc, replace=False))]
            texts.extend(ws)
            labels.extend([label] * len(ws))
    return texts, np.asarray(labels, dtype=np.float64)


def fit_code_content(texts: Sequence[str], labels: np.ndarray, n_features: int = 2**18, epochs: int = 4,
                     seed: int = 0) -> Any:
    """Train the window model (classes balanced by sample weights)."""
    from classifiers.linear import HashedLinearModel
    from classifiers.linear_train import fit_linear

    pos = float(labels.mean()) if len(labels) else 0.5
    weights = np.where(labels > 0.5, 0.5 / max(pos, 1e-6), 0.5 / max(1 - pos, 1e-6))
    model = HashedLinearModel(n_features=n_features, word_ngrams=(1, 2), char_ngrams=(2, 4), task="binary", max_chars=1500)
    return fit_linear(model, list(texts), labels, epochs=epochs, lr=0.5, l2=1e-6, sample_weight=weights, seed=seed)
