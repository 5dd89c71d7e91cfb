"""What a ``train-classifier`` command says when its LLM judge failed in transport: the one-line
diagnosis ``edu_score`` gives (how many requests failed and how, what the server answered, what to
change), as a ServiceError (exit 10), instead of "only 0 annotated files" (exit 2) or "annotate
more pages" (exit 4), which sent the user the wrong way."""

from __future__ import annotations

import logging
import re
from typing import Any

import numpy as np

from curation.errors import ServiceError

log = logging.getLogger(__name__)


def check_judge(command: str, result: Any, config: dict[str, Any], needed: int) -> None:
    """Raise ServiceError when requests of ``result`` (an ``AnnotationResult``) failed in transport and
    fewer than ``needed`` answers are usable; warn when some failed but enough are."""
    from classifiers.annotation import diagnose

    counts, examples = diagnose.summarise(result.failures, result.raw)
    transport = {r: n for r, n in counts.items() if diagnose.is_transport(r)}
    if not transport:
        return
    usable = int(np.isfinite(np.asarray(result.scores, dtype=np.float64)).sum())
    failed = sum(transport.values())
    fix = diagnose.likely_fix(transport, examples, config, len(result.failures) - failed, diagnose.stopped(result.failures, result.raw))
    fix = re.sub(r"\bannotator_(\w+)", r"the --annotator's \1", fix)  # the stage's keys are the JSON's keys here
    message = (f"{command}: {failed} of {len(result.failures)} annotation requests to {config.get('base_url') or config.get('backend')} "
               f"failed in transport ({diagnose.describe(transport, examples)}): {fix}")
    if usable < needed:
        raise ServiceError(f"{message}; {usable} usable answer(s), {needed} needed. Answers received are cached with --cache/--cache-dir, "
                           "so a re-run asks only for the rest")
    log.warning("%s; training on the %d usable answers", message, usable)
