"""LLM annotation: one small protocol, three backends, a persistent cache.

>>> ann = get_annotator({"backend": "local", "cache_dir": "/tmp/ann"})   # doctest: +SKIP
>>> res = ann.annotate(["Newton's second law states F = ma …"], get_rubric("edu"))   # doctest: +SKIP
>>> res.scores, res.failures                                           # doctest: +SKIP
(array([3.4]), [None])

Backends (``backend``): ``local`` (a small model on CPU, :mod:`.local`), ``openai`` (any
OpenAI-compatible server such as ``vllm serve``, :mod:`.openai`), ``vllm`` (the offline engine
on GPU, :mod:`.vllm`, from the ``gpu`` extra). Backend modules are imported on demand.
"""

from __future__ import annotations

import importlib
import inspect
from typing import Any

from classifiers.annotation.base import AnnotationResult, AnnotationStats, Annotator, expected_score
from classifiers.annotation.cache import AnnotationCache, CachedAnnotator, CacheRecord

__all__ = [
    "AnnotationCache",
    "AnnotationResult",
    "AnnotationStats",
    "Annotator",
    "BACKENDS",
    "CacheRecord",
    "CachedAnnotator",
    "expected_score",
    "get_annotator",
]

#: backend → (module, class)
BACKENDS: dict[str, tuple[str, str]] = {
    "local": ("classifiers.annotation.local", "LocalAnnotator"),
    "openai": ("classifiers.annotation.openai", "OpenAIAnnotator"),
    "vllm": ("classifiers.annotation.vllm", "VLLMAnnotator"),
}


def get_annotator(config: dict[str, Any]) -> Annotator:
    """An annotator from a plain config dict: ``backend``, optional ``cache_dir``, backend keys.

    Unknown keys are an error that lists the valid ones.
    """
    cfg = dict(config)
    backend = cfg.pop("backend", "local")
    cache_dir = cfg.pop("cache_dir", None)
    chunk_size = int(cfg.pop("cache_chunk_size", 64))
    if backend not in BACKENDS:
        raise ValueError(f"unknown annotator backend {backend!r}; choose one of {sorted(BACKENDS)}")
    module, name = BACKENDS[backend]
    cls = getattr(importlib.import_module(module), name)
    params = inspect.signature(cls).parameters
    unknown = sorted(set(cfg) - set(params))
    if unknown:
        raise ValueError(f"annotator backend {backend!r} has no option {unknown[0]!r}; valid options: {', '.join(params)}")
    inner = cls(**cfg)
    return CachedAnnotator(inner, AnnotationCache(cache_dir), chunk_size) if cache_dir else inner
