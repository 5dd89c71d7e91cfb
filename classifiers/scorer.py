"""One scorer protocol for every model that turns documents into numbers (web quality, edu, code).

A scorer has a ``name``, a ``version`` (it goes into cache keys), declares what it ``needs`` of a
:class:`Batch` (``text``, ``vectors``, ``language``, ``path``) and scores a whole batch at once:

>>> class Length:
...     name, version, needs = "length", "1", frozenset({"text"})
...     def score(self, batch: Batch) -> np.ndarray:
...         return np.array([len(t) for t in batch.texts], dtype=np.float64)
>>> Length().score(Batch(["ab", "abcd"])).tolist()
[2.0, 4.0]

Stages build one :class:`Batch` per partition with what the scorer declares (vectors from
:class:`classifiers.vector_source.VectorSource` when it needs ``vectors``) and call
``score(batch)``; a scorer that also explains its score per document (the heuristics' signals)
offers ``score_details(batch) -> (scores, frame)``, reached through :func:`score_with_details`.
Scorers produce numbers; they never decide.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import pandas as pd

#: What a scorer may need of a batch.
NEEDS = frozenset({"text", "vectors", "language", "path"})


@dataclasses.dataclass
class Batch:
    """The documents of one call: texts, and where a scorer needs them their languages, file paths
    and unit embedding rows (``vectors``, one per text); ``cut``, where given: per text, whether it
    is only the start of its document (a stage's character limit cut it short)."""

    texts: Sequence[str]
    languages: Sequence[str | None] | None = None
    paths: Sequence[str | None] | None = None
    vectors: np.ndarray | None = None
    cut: Sequence[bool] | None = None

    def __len__(self) -> int:
        return len(self.texts)

    def clean_texts(self) -> list[str]:
        """The texts with anything that is not a string (a null) as ``""``."""
        return [t if isinstance(t, str) else "" for t in self.texts]


class Scorer(Protocol):
    name: str
    version: str
    needs: frozenset[str]

    def score(self, batch: Batch) -> np.ndarray: ...


def score_with_details(scorer: Scorer, batch: Batch) -> tuple[np.ndarray, pd.DataFrame | None]:
    """``(scores, per-document details)``; details are ``None`` for a scorer that offers none."""
    details = getattr(scorer, "score_details", None)
    if details is None:
        return np.asarray(scorer.score(batch), dtype=np.float64), None
    scores, frame = details(batch)
    return np.asarray(scores, dtype=np.float64), frame


def has_details(scorer: Any) -> bool:
    """Whether ``scorer`` explains its scores per document (:func:`score_with_details`)."""
    return hasattr(scorer, "score_details")


def model_fingerprint(path: str | Path, sample_above: int | None = None) -> str:
    """sha256 (16 hex) of a model file, or of a folder's files (relative names and contents,
    sub-folders included, hidden files and folders left out): a retrained model changes every cache
    key. With ``sample_above``, a file larger than that many bytes is read as its size and
    :data:`SLICES` slices of 64 KiB spread over it (an LLM's weights: ~1 MiB read, not gigabytes);
    content only, never times, so two copies of one model agree.

    >>> import tempfile; d = Path(tempfile.mkdtemp()); _ = (d / "w.bin").write_bytes(b"1")
    >>> a = model_fingerprint(d); _ = (d / "w.bin").write_bytes(b"2"); a != model_fingerprint(d)
    True
    """
    root = Path(path).expanduser()
    files = [root] if not root.is_dir() else sorted(
        p for p in root.rglob("*") if p.is_file() and not any(part.startswith(".") for part in p.relative_to(root).parts))
    h = hashlib.sha256()
    for f in files:
        h.update(str(f.relative_to(root) if root.is_dir() else f.name).encode() + b"\0")
        size = f.stat().st_size
        with open(f, "rb") as fh:
            if sample_above is not None and size > sample_above:
                h.update(f"{size}\0".encode())
                for k in range(SLICES):
                    fh.seek((size - SLICE) * k // (SLICES - 1))
                    h.update(fh.read(SLICE))
                continue
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                h.update(chunk)
    return h.hexdigest()[:16]


#: A sampled file (``model_fingerprint``'s ``sample_above``) is read as this many slices of this size.
SLICES, SLICE = 16, 64 << 10


#: What a damaged model file's message ends with: the model, not a run, wrote it.
RETRAIN = "it was cut or edited after it was written: train the model again"


def read_card(path: str | Path) -> dict[str, Any]:
    """A model card (``model.json``) as a dict, or :class:`~curation.errors.DamagedFileError` naming
    it (exit 4) when it is not JSON or not a JSON object; a missing file stays FileNotFoundError."""
    from curation.errors import DamagedFileError

    path = Path(path)
    try:
        card = json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as exc:
        raise DamagedFileError(f"{path} cannot be read as JSON ({exc}); {RETRAIN}") from None
    if not isinstance(card, dict):
        raise DamagedFileError(f"{path} holds no model card (a JSON object); {RETRAIN}")
    return card


@contextlib.contextmanager
def open_weights(path: str | Path) -> Iterator[Any]:
    """``np.load(path)`` (no pickle) for a ``with`` block that reads its arrays; a cut, garbled or
    missing file (or array) is :class:`~curation.errors.DamagedFileError` naming the file (exit 4)."""
    import zipfile

    from curation.errors import DamagedFileError

    try:
        with np.load(path, allow_pickle=False) as arrays:
            yield arrays
    except (zipfile.BadZipFile, EOFError, OSError, KeyError, ValueError) as exc:
        raise DamagedFileError(f"{path} cannot be read ({type(exc).__name__}: {exc}); {RETRAIN}") from None
