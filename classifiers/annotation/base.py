"""The annotator protocol, its result and statistics, and score-token arithmetic shared by backends.

>>> expected_score({" 4": 0.5, "5": 0.25, "x": 0.25}, (0, 5))
(4.333333333333333, 0.75)
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Protocol

import numpy as np

from classifiers.rubrics import Rubric

#: Below this probability mass on the score tokens the distribution says nothing: a failure.
MIN_SCORE_MASS = 0.05


class Annotator(Protocol):
    """Scores documents with an LLM following a rubric.

    ``model_id`` names everything that changes the answers besides the rubric (backend,
    model, scoring mode, document budget); the cache keys on it.
    """

    model_id: str

    def annotate(self, texts: list[str], rubric: Rubric) -> AnnotationResult: ...


@dataclasses.dataclass
class Answer:
    """One document's final answer (after the backend's own retries), as it arrives."""

    score: float | None
    raw: str
    failure: str | None
    tokens_in: int = 0
    tokens_out: int = 0


#: ``on_answer(index, answer)``: a backend whose ``annotate`` takes an ``on_answer`` keyword (the
#: ``openai`` one) calls it once per document, with its index in ``texts``, as soon as that
#: document's answer is final, from any of its threads; the answer equals the one ``annotate``
#: returns for it. :class:`~classifiers.annotation.cache.CachedAnnotator` stores answers so, as
#: they are paid for, not when the whole batch returns. An exception from the hook propagates.
AnswerHook = Callable[[int, Answer], None]


@dataclasses.dataclass
class AnnotationStats:
    """Counters that add up across batches and backends (``a + b``): ``failure_reasons`` counts the
    documents without a score by reason; ``retry_reasons`` the requests sent again by the reason of
    the one before (``http_429``, ``http_503``, ``timeout``, ``connection_error``, … and an unreadable
    answer's reason when it is asked again), so they add up to ``retries``."""

    documents: int = 0
    requests: int = 0
    cache_hits: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    retries: int = 0
    failures: int = 0
    failure_reasons: dict[str, int] = dataclasses.field(default_factory=dict)
    seconds: float = 0.0
    retry_reasons: dict[str, int] = dataclasses.field(default_factory=dict)

    def __add__(self, other: AnnotationStats) -> AnnotationStats:
        reasons, retried = dict(self.failure_reasons), dict(self.retry_reasons)
        for k, v in other.failure_reasons.items():
            reasons[k] = reasons.get(k, 0) + v
        for k, v in other.retry_reasons.items():
            retried[k] = retried.get(k, 0) + v
        return AnnotationStats(
            documents=self.documents + other.documents,
            requests=self.requests + other.requests,
            cache_hits=self.cache_hits + other.cache_hits,
            tokens_in=self.tokens_in + other.tokens_in,
            tokens_out=self.tokens_out + other.tokens_out,
            retries=self.retries + other.retries,
            failures=self.failures + other.failures,
            failure_reasons=reasons,
            seconds=self.seconds + other.seconds,
            retry_reasons=retried,
        )

    def count_failures(self, failures: list[str | None]) -> None:
        for f in failures:
            if f is not None:
                self.failures += 1
                self.failure_reasons[f] = self.failure_reasons.get(f, 0) + 1

    def count_retries(self, reasons: Iterable[str]) -> None:
        for r in reasons:
            self.retry_reasons[r] = self.retry_reasons.get(r, 0) + 1

    def to_dict(self) -> dict[str, Any]:
        out = dataclasses.asdict(self)
        out["seconds"] = round(self.seconds, 3)
        out["documents_per_s"] = round(self.documents / self.seconds, 3) if self.seconds > 0 else None
        return out


@dataclasses.dataclass
class AnnotationResult:
    """Per document: ``scores`` (float64, NaN on failure), ``raw`` answers, ``failures`` (reason or None)."""

    scores: np.ndarray
    raw: list[str]
    failures: list[str | None]
    stats: AnnotationStats = dataclasses.field(default_factory=AnnotationStats)
    tokens_in: list[int] | None = None
    tokens_out: list[int] | None = None

    def __post_init__(self) -> None:
        if not (len(self.scores) == len(self.raw) == len(self.failures)):
            raise ValueError("scores, raw and failures must have one entry per document")

    @classmethod
    def concat(cls, parts: list[AnnotationResult]) -> AnnotationResult:
        stats = AnnotationStats()
        for p in parts:
            stats = stats + p.stats
        return cls(
            scores=np.concatenate([p.scores for p in parts]) if parts else np.zeros(0),
            raw=[r for p in parts for r in p.raw],
            failures=[f for p in parts for f in p.failures],
            stats=stats,
            tokens_in=[t for p in parts for t in (p.tokens_in or [0] * len(p.raw))],
            tokens_out=[t for p in parts for t in (p.tokens_out or [0] * len(p.raw))],
        )


def score_probs(token_probs: Mapping[str, float], scale: tuple[int, int]) -> dict[int, float]:
    """Probability of each score value from token → probability (``" 3"`` and ``"3"`` merge)."""
    out: dict[int, float] = {}
    for token, p in token_probs.items():
        t = token.strip().replace("\u2581", "").replace("\u0120", "")  # sentencepiece / byte-level spaces
        if t.isascii() and t.isdigit() and scale[0] <= int(t) <= scale[1]:
            out[int(t)] = out.get(int(t), 0.0) + float(p)
    return out


def expected_score(
    token_probs: Mapping[str, float], scale: tuple[int, int], p_zero_after_one: float | None = None
) -> tuple[float | None, float]:
    """Σ k·p(k) / Σ p(k) over the score tokens, and the mass Σ p(k); None below :data:`MIN_SCORE_MASS`.

    On a 0–10 scale "10" is usually two tokens ("1", "0"): pass ``p_zero_after_one``, the
    probability of "0" right after "1", to split p("1") between 1 and 10.
    """
    probs = score_probs(token_probs, (scale[0], min(scale[1], 9)))
    if scale[1] >= 10:
        ten = score_probs(token_probs, (10, 10)).get(10, 0.0)  # a tokenizer with a "10" token
        if p_zero_after_one is not None and 1 in probs:
            ten += probs[1] * p_zero_after_one
            probs[1] *= 1.0 - p_zero_after_one
        if ten:
            probs[10] = ten
    mass = sum(probs.values())
    if mass < MIN_SCORE_MASS or not math.isfinite(mass):
        return None, mass
    return sum(k * p for k, p in probs.items()) / mass, mass


#: A log-probability above this is no log-probability (above 0 is a probability over 1); a little
#: slack above 0 for a server's rounding.
MAX_LOGPROB = 1e-4


def logprobs_to_probs(top: Mapping[str, float]) -> dict[str, float]:
    """token → logprob (as servers return them) → token → probability.

    A token whose logprob is missing, NaN or ±inf is left out. A logprob above :data:`MAX_LOGPROB`
    makes the whole distribution unusable (empty): it is no distribution, and ``exp`` of one above
    ~709 overflows.

    >>> logprobs_to_probs({"3": 0.0, "4": float("-inf"), "5": None}), logprobs_to_probs({"3": 1000.0, "4": -1.0})
    ({'3': 1.0}, {})
    """
    valid = {t: float(lp) for t, lp in top.items() if isinstance(lp, (int, float)) and math.isfinite(lp)}
    if any(lp > MAX_LOGPROB for lp in valid.values()):
        return {}
    return {t: math.exp(min(lp, 0.0)) for t, lp in valid.items()}
