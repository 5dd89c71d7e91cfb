"""How a ``train-classifier`` command runs its LLM judge where the user can see it: a warning
before the local CPU judge starts (what it is good for, and how long it will take), and a progress
line as the texts are judged, in steps, under the calling command's logger.

The local judge (SmolLM2-135M on CPU) takes about 2 s per text on a free core
(docs/annotation.md: 24 sample documents in 50 s on one thread) and several times that on a
busy machine (24 in 4.3 min on two shared cores), so the warning gives that range for the texts
at hand:

>>> eta_range(24)
'1 min to 4 min'
>>> eta_range(2000)
'1.1 h to 5.6 h'
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

#: Seconds per text of the local CPU judge: on a free core, and on a busy two-core machine.
LOCAL_SECONDS_PER_TEXT = (2.0, 10.0)
#: Texts per step (one ``annotate`` call): the CPU judge's first step, small so the first line comes early
#: (its later steps are sized from its rate); an HTTP judge spreads each step over its concurrency; vLLM
#: batches the whole sample at once.
STEP_TEXTS = {"local": 8, "vllm": None}
HTTP_STEP_TEXTS = 256
#: Seconds between progress lines: about this for the CPU judge, at least this for an HTTP judge (the
#: first step and the last are always said).
EVERY_S = 30.0


def _duration(seconds: float) -> str:
    if seconds < 3600:
        return f"{max(1, round(seconds / 60))} min"
    return f"{seconds / 3600:.1f} h"


def eta_range(n: int) -> str:
    """How long the local judge takes for ``n`` texts, free core to busy machine."""
    lo, hi = LOCAL_SECONDS_PER_TEXT
    return f"{_duration(n * lo)} to {_duration(n * hi)}"


def warn_if_local(config: dict[str, Any], n: int, logger: logging.Logger) -> None:
    """The CPU judge runs the annotation path for real, but its answers rank near chance: say so
    before it spends its time on ``n`` texts, how long that is, and what gives a model worth using."""
    if config.get("backend") == "local":
        lo, hi = LOCAL_SECONDS_PER_TEXT
        logger.warning(
            "annotating %d texts with the local CPU judge (SmolLM2-135M: it ranks near chance, AUC 0.54, and takes "
            "%.0f-%.0f s per text on CPU, %s for these; a progress line follows after the first %d texts and then "
            "about every %.0f s); the model it teaches is for trying the path. For a real one give an openai or vllm "
            "--annotator, or labels you have",
            n,
            lo,
            hi,
            eta_range(n),
            STEP_TEXTS["local"],
            EVERY_S,
        )


def annotate_with_progress(
    annotator: Any, texts: list[str], rubric: Any, config: dict[str, Any], logger: logging.Logger, label: str
) -> Any:
    """``annotator.annotate(texts, rubric)`` in steps (:func:`judge_in_steps`), with progress lines."""
    from classifiers.annotation.base import AnnotationResult

    parts = judge_in_steps(
        lambda chunk: annotator.annotate(chunk, rubric), texts, config.get("backend", "local"), logger, label
    )
    return AnnotationResult.concat(parts) if len(parts) != 1 else parts[0]


def judge_in_steps(
    judge: Callable[[list[str]], Any],
    texts: list[str],
    backend: str,
    logger: logging.Logger,
    label: str,
    clock: Callable[[], float] = time.monotonic,
) -> list[Any]:
    """``judge`` of each step of ``texts``, in order, with a line ``label: judged N/M texts (P%), Ts
    elapsed, ETA Us`` after the first step, the last, and each one after which the next would likely
    end more than :data:`EVERY_S` seconds after the last line. The local judge's first step is 8
    texts, each next one about EVERY_S seconds of texts at the slowest rate of a step so far (seconds
    per text it judged, its cached answers aside), at least 1; an HTTP judge's steps are
    :data:`HTTP_STEP_TEXTS` texts and vLLM's the whole sample, with a line at most every EVERY_S."""
    step = STEP_TEXTS.get(backend, HTTP_STEP_TEXTS) or max(len(texts), 1)
    parts, started, said, done, per_text = [], clock(), 0.0, 0, 0.0
    while done < len(texts):
        began, count = clock(), min(step, len(texts) - done)
        parts.append(judge(texts[done : done + count]))
        done, took, elapsed = done + count, clock() - began, clock() - started
        asked = count - min(count, int(getattr(getattr(parts[-1], "stats", None), "cache_hits", 0) or 0))
        ahead = 0.0  # how long the next step is likely to take
        if backend == "local" and asked:
            per_text = max(per_text, took / asked)
            step = max(1, int(EVERY_S / per_text)) if per_text > 0 else step
            ahead = min(step, len(texts) - done) * per_text * asked / count
        if len(parts) == 1 or done == len(texts) or elapsed - said + ahead > EVERY_S:
            said = elapsed
            logger.info(
                "%s: judged %d/%d texts (%.0f%%), %.0fs elapsed, ETA %.0fs",
                label,
                done,
                len(texts),
                100 * done / len(texts),
                elapsed,
                elapsed / done * (len(texts) - done),
            )
    return parts
