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
from typing import Any

#: Seconds per text of the local CPU judge: on a free core, and on a busy two-core machine.
LOCAL_SECONDS_PER_TEXT = (2.0, 10.0)
#: Texts per step (one ``annotate`` call): small for the CPU judge so the first line comes early; an
#: HTTP judge spreads each step over its concurrency; vLLM batches the whole sample at once.
STEP_TEXTS = {"local": 8, "vllm": None}
HTTP_STEP_TEXTS = 256
#: Seconds between progress lines (the first step and the last are always said).
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
            "%.0f-%.0f s per text on CPU, %s for these; a progress line follows every %.0f s); the model it teaches "
            "is for trying the path. For a real one give an openai or vllm --annotator, or labels you have",
            n,
            lo,
            hi,
            eta_range(n),
            EVERY_S,
        )


def annotate_with_progress(
    annotator: Any, texts: list[str], rubric: Any, config: dict[str, Any], logger: logging.Logger, label: str
) -> Any:
    """``annotator.annotate(texts, rubric)`` in steps, each followed (at most every :data:`EVERY_S`
    seconds, and after the first and the last) by ``label: judged N/M texts (P%), Ts elapsed, ETA Us``."""
    from classifiers.annotation.base import AnnotationResult

    backend = config.get("backend", "local")
    step = STEP_TEXTS.get(backend, HTTP_STEP_TEXTS) or max(len(texts), 1)
    parts, started, said = [], time.time(), 0.0
    for at in range(0, len(texts), step):
        parts.append(annotator.annotate(texts[at : at + step], rubric))
        done, elapsed = min(at + step, len(texts)), time.time() - started
        if at == 0 or done == len(texts) or elapsed - said >= EVERY_S:
            said = elapsed
            eta = elapsed / done * (len(texts) - done)
            logger.info(
                "%s: judged %d/%d texts (%.0f%%), %.0fs elapsed, ETA %.0fs",
                label,
                done,
                len(texts),
                100 * done / len(texts),
                elapsed,
                eta,
            )
    return AnnotationResult.concat(parts) if len(parts) != 1 else parts[0]
