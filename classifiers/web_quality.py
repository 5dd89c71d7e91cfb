"""Web-quality scorers: thin predictors behind one registry, each writing ``quality_score_<name>``.

>>> scorer = get_scorer("heuristics")
>>> scorer.name, scorer.version.startswith("heuristics-")
('heuristics', True)
>>> get_scorer("mine", {"kind": "nope"})
Traceback (most recent call last):
...
ValueError: scorer 'mine': unknown kind 'nope'; kinds: heuristics, linear, explanatory, explanatory_zh, embedding, hf, fasttext, or module:factory ...

Every scorer implements :class:`classifiers.scorer.Scorer`: ``name``, ``version`` (the model's
fingerprint: it goes into cache keys), ``needs`` and ``score(batch)``; the heuristics also give
their signals (``score_details``). Models load lazily on the first batch and once per process.
Kinds:

- ``heuristics``: Gopher/C4/FineWeb signals combined (:mod:`classifiers.heuristics`); options ``model`` (JSON);
- ``linear``: a :class:`classifiers.linear.HashedLinearModel` folder (default: the shipped ``web_linear``);
- ``explanatory``: the same kind of model trained the DCLM / Nemotron-CC way — explanatory,
  instruction-like and reference text (textbooks, arXiv abstracts, documentation, reviewed main
  content) against random crawl pages (the shipped ``web_explanatory``, English);
  ``explanatory_zh``: Chinese technical notes against Chinese short reviews (``web_explanatory_zh``,
  opt-in); both are ``linear`` scorers with another default folder (``model`` overrides it);
- ``embedding``: a :class:`classifiers.embedding_head.EmbeddingHeadScorer` folder (``head.npz`` +
  ``model.json``) over the run's stored embeddings;
- ``hf``: a local Hugging Face sequence-classification folder (e.g. a downloaded FineWeb-Edu
  classifier); options ``model``, ``label`` (index or name; regression models use their one
  output), ``max_length``, ``batch_size``, ``device``;
- ``fasttext``: a fastText ``.bin`` (e.g. DCLM's), needs the ``fasttext`` package; options
  ``model``, ``label`` (default ``__label__hq``).
"""

from __future__ import annotations

import functools
import inspect
import json
import logging
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from classifiers.embedding_head import EmbeddingHeadScorer
from classifiers.scorer import Batch, model_fingerprint

log = logging.getLogger(__name__)

MODELS_DIR = Path(__file__).resolve().parent / "models"
DEFAULT_LINEAR = MODELS_DIR / "web_linear"
#: kind → the shipped HashedLinearModel folder it loads unless ``model`` names another
SHIPPED_LINEAR = {"linear": DEFAULT_LINEAR, "explanatory": MODELS_DIR / "web_explanatory",
                  "explanatory_zh": MODELS_DIR / "web_explanatory_zh"}
#: the languages a shipped model was trained on, scored unless the recipe's scorer_languages says
#: otherwise (``linear``: the recipe lists English)
SHIPPED_LANGUAGES = {"explanatory": ("en",), "explanatory_zh": ("zh",)}
KINDS = ("heuristics", "linear", "explanatory", "explanatory_zh", "embedding", "hf", "fasttext")


def _need(path: Any, what: str) -> Path:
    if not path:
        raise ValueError(f"{what}: give the model path (scorer_options.<name>.model)")
    p = Path(str(path)).expanduser()
    if not p.exists():
        raise FileNotFoundError(f"{what}: model {p} does not exist")
    return p


class HeuristicsScorer:
    """The web scorer over a :class:`classifiers.heuristics.HeuristicModel` (the shipped one unless
    ``model`` names another ``model.json``); its details are the signals."""

    kind = "heuristics"
    needs = frozenset({"text", "language"})

    def __init__(self, name: str, model: str | None = None) -> None:
        from classifiers.heuristics import COMBINE_RULE, DEFAULT_MODEL_DIR

        self.name = name
        self.path = _need(model, f"scorer {name!r}") if model else DEFAULT_MODEL_DIR
        self.version = f"heuristics-{model_fingerprint(self.path)}-{COMBINE_RULE}"  # the model and how it combines

    @functools.cached_property
    def model(self) -> Any:
        from classifiers.heuristics import HeuristicModel

        return HeuristicModel.load(self.path)

    def score_details(self, batch: Batch) -> tuple[np.ndarray, pd.DataFrame]:
        """Scores and every signal (one column each), with each text's language."""
        langs = list(batch.languages) if batch.languages is not None else None
        signals = self.model.signals(batch.clean_texts(), langs)
        return self.model.combine(signals, langs), signals

    def score(self, batch: Batch) -> np.ndarray:
        return self.score_details(batch)[0]


class LinearScorer:
    """A :class:`classifiers.linear.HashedLinearModel` folder (the shipped ``web_linear`` by default,
    or the one of ``shipped``: a key of :data:`SHIPPED_LINEAR`)."""

    kind = "linear"
    needs = frozenset({"text"})

    def __init__(self, name: str, model: str | None = None, max_chars: int | None = None, shipped: str = "linear") -> None:
        self.name = name
        self.path = _need(model, f"scorer {name!r}") if model else SHIPPED_LINEAR[shipped]
        if not (self.path / "model.json").exists():
            raise FileNotFoundError(f"scorer {name!r}: {self.path} is not a HashedLinearModel folder (no model.json)")
        self.max_chars = max_chars
        self.languages = SHIPPED_LANGUAGES.get(shipped) if not model else None
        self.version = f"linear-{model_fingerprint(self.path)}"

    @functools.cached_property
    def model(self) -> Any:
        from classifiers.linear import HashedLinearModel

        m = HashedLinearModel.load(self.path)
        if self.max_chars:
            m.max_chars = int(self.max_chars)
        return m

    def score(self, batch: Batch) -> np.ndarray:
        return self.model.predict(batch.clean_texts())


def _embedding(name: str, model: str | None = None, device: str = "auto", batch_size: int = 64) -> EmbeddingHeadScorer:
    path = _need(model, f"scorer {name!r} (train one with `curate train-classifier web-embedding`)")
    return EmbeddingHeadScorer(path, name=name, device=device, batch_size=batch_size)


class HFScorer:
    """A local Hugging Face sequence-classification model; regression heads return their value."""

    kind = "hf"
    needs = frozenset({"text"})

    def __init__(self, name: str, model: str | None = None, label: int | str | None = None, max_length: int = 512,
                 batch_size: int = 32, device: str = "auto") -> None:
        self.name = name
        self.path = _need(model, f"scorer {name!r}")
        self.label, self.max_length, self.batch_size, self.device = label, int(max_length), int(batch_size), device
        self.version = f"hf-{model_fingerprint(self.path)}-{label}"

    @functools.cached_property
    def model(self) -> tuple[Any, Any, str]:
        try:
            import torch
            from transformers import AutoModelForSequenceClassification, AutoTokenizer
        except ImportError as exc:  # pragma: no cover - both are core dependencies
            raise ImportError("the hf scorer needs torch and transformers installed") from exc
        device = ("cuda" if torch.cuda.is_available() else "cpu") if self.device == "auto" else self.device
        tok = AutoTokenizer.from_pretrained(self.path)
        mdl = AutoModelForSequenceClassification.from_pretrained(self.path).to(device).eval()
        return tok, mdl, device

    def _column(self, n_labels: int, id2label: Mapping[int, str]) -> int | None:
        if n_labels == 1:
            return None
        if self.label is None:
            return n_labels - 1  # the last class ("positive"/"high") unless told
        if isinstance(self.label, int) or str(self.label).isdigit():
            return int(self.label)
        names = {v: k for k, v in id2label.items()}
        if self.label not in names:
            raise ValueError(f"scorer {self.name!r}: label {self.label!r} not in {sorted(names)}")
        return int(names[self.label])

    def score(self, batch: Batch) -> np.ndarray:
        import torch

        texts = batch.clean_texts()
        tok, mdl, device = self.model
        out: list[np.ndarray] = []
        col = self._column(mdl.config.num_labels, mdl.config.id2label)
        with torch.inference_mode():
            for i in range(0, len(texts), self.batch_size):
                chunk = texts[i : i + self.batch_size]
                enc = tok(chunk, truncation=True, max_length=self.max_length, padding=True, return_tensors="pt").to(device)
                logits = mdl(**enc).logits.float()
                if col is None:
                    out.append(logits[:, 0].cpu().numpy())
                else:
                    out.append(torch.softmax(logits, dim=-1)[:, col].cpu().numpy())
        return np.concatenate(out).astype(np.float64) if out else np.zeros(0)


class FastTextScorer:
    """A fastText supervised ``.bin`` (DCLM's quality classifier): probability of ``label``."""

    kind = "fasttext"
    needs = frozenset({"text"})

    def __init__(self, name: str, model: str | None = None, label: str = "__label__hq") -> None:
        self.name = name
        self.path = _need(model, f"scorer {name!r}")
        self.label = label
        self.version = f"fasttext-{model_fingerprint(self.path)}-{label}"

    @functools.cached_property
    def model(self) -> Any:
        try:
            import fasttext
        except ImportError as exc:
            raise ImportError(
                f"scorer {self.name!r} needs the fasttext package: pip install fasttext-wheel "
                "(or use the built-in `linear` kind, trained with `curate train-classifier linear`)"
            ) from exc
        return fasttext.load_model(str(self.path))

    def score(self, batch: Batch) -> np.ndarray:
        m, texts = self.model, batch.clean_texts()
        out = np.zeros(len(texts))
        for i, t in enumerate(texts):
            line = " ".join(t.split())
            # the low-level call: fastText's own predict() breaks under numpy 2 (np.array(copy=False))
            pairs = m.f.predict(line + "\n", -1, 0.0, "strict") if hasattr(m, "f") else list(zip(*m.predict(line, k=-1)[::-1], strict=True))
            out[i] = dict((label, prob) for prob, label in pairs).get(self.label, 0.0)
        return out


_FACTORIES: dict[str, Any] = {
    "heuristics": HeuristicsScorer,
    "linear": LinearScorer,
    "explanatory": functools.partial(LinearScorer, shipped="explanatory"),
    "explanatory_zh": functools.partial(LinearScorer, shipped="explanatory_zh"),
    "embedding": _embedding,
    "hf": HFScorer,
    "fasttext": FastTextScorer,
}


def get_scorer(name: str, options: Mapping[str, Any] | None = None) -> Any:
    """The scorer ``name``; its kind is ``options["kind"]`` or the name itself (cached per process)."""
    frozen = json.dumps(dict(options or {}), sort_keys=True, default=str)
    return _cached_scorer(name, frozen)


@functools.lru_cache(maxsize=32)
def _cached_scorer(name: str, frozen: str) -> Any:
    opts = json.loads(frozen)
    kind = opts.pop("kind", name)
    factory = _FACTORIES.get(kind) or (_imported(name, kind) if ":" in kind else None)
    if factory is None:
        raise ValueError(f"scorer {name!r}: unknown kind {kind!r}; kinds: {', '.join(KINDS)}, or module:factory for "
                         "your own (a callable importable on every worker, called as factory(name, **options))")
    try:
        return factory(name, **opts)
    except TypeError as exc:
        raise ValueError(f"scorer {name!r} ({kind}): bad options {sorted(opts)}: {exc}") from exc


#: options that change how a scorer runs, never what it scores: left out of its cache key
RUN_ONLY = frozenset({"device", "batch_size"})


def score_options(name: str, options: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The options of scorer ``name`` that can change its scores, for its cache key beside its
    ``version``: each option given, over its factory's defaults, less :data:`RUN_ONLY` and
    ``model`` (the version holds the model's fingerprint). A new option is in the key unless
    :data:`RUN_ONLY` lists it.

    >>> score_options("linear", {"max_chars": 2000, "model": "/m"})
    {'kind': 'linear', 'max_chars': 2000, 'shipped': 'linear'}
    """
    opts = dict(options or {})
    kind = opts.pop("kind", name)
    factory = _FACTORIES.get(kind) or (_imported(name, kind) if ":" in kind else None)
    try:
        params = inspect.signature(factory).parameters.values() if factory is not None else ()
    except (TypeError, ValueError):  # a callable without a signature: its given options only
        params = ()
    named = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    resolved = {p.name: p.default for p in params if p.default is not p.empty and p.kind in named} | opts
    return {"kind": kind} | {k: resolved[k] for k in sorted(resolved) if k not in RUN_ONLY | {"model"}}


def _imported(name: str, kind: str) -> Any:
    """The factory ``module:attr`` names (a scorer of the user's own, outside this package)."""
    import importlib

    module, _, attr = kind.partition(":")
    try:
        return getattr(importlib.import_module(module), attr)
    except (ImportError, AttributeError) as exc:
        raise ValueError(f"scorer {name!r}: kind {kind!r} names {attr!r} in module {module!r}, which cannot be imported "
                         f"({exc}); put the module on PYTHONPATH of the driver and of every worker") from exc
