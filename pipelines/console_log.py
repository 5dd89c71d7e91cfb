"""The console's log lines: one format and one level for the command and for the workers of its
own cluster.

The command (:mod:`pipelines.cli`) logs ``HH:MM:SS LEVEL name: message`` at INFO, or WARNING with
``--quiet``. A worker process of the embedded ``LocalCluster`` starts with no logging of its own:
a line a task logs there (a stage's progress note, the LLM judge's first retries) would reach the
console only at WARNING, bare, and its INFO lines not at all. :func:`worker_console` gives such a
worker the command's format and level (run by :class:`pipelines.cluster_plugin.WorkerConsole`,
also on a worker that replaces a lost one), writing to the worker's stderr, which is the
command's: each line is written once, when it is logged, and none waits on the client at the end
of a run. A ``--scheduler``'s workers are the user's processes: their logging is left as their
``dask worker`` sets it.
"""

from __future__ import annotations

import logging
import sys

#: the command's log line: ``12:03:41 INFO curate: …``
FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
DATEFMT = "%H:%M:%S"
#: libraries whose INFO lines are not news of the run: WARNING and above only
NOISY = ("distributed", "bokeh", "tornado", "faiss")


def configure_console(quiet: bool) -> None:
    """The command's logging: :data:`FORMAT` on stderr, INFO (WARNING with ``quiet``)."""
    logging.basicConfig(level=logging.WARNING if quiet else logging.INFO, format=FORMAT, datefmt=DATEFMT)
    quiet_libraries()


def quiet_libraries() -> None:
    """The :data:`NOISY` loggers at WARNING, unless set higher (a LocalCluster's worker keeps
    Dask's own at ERROR)."""
    for name in NOISY:
        logger = logging.getLogger(name)
        if logger.level < logging.WARNING:  # NOTSET too
            logger.setLevel(logging.WARNING)


class _WorkerHandler(logging.StreamHandler):
    """The handler :func:`worker_console` adds (found again when it runs twice)."""


def worker_console(level: int) -> None:
    """On a worker process of the embedded cluster: the root logger at ``level`` (the command's)
    with a handler of :data:`FORMAT` on stderr, unless the process has a root handler already (its
    lines would be written twice); the :data:`NOISY` libraries at WARNING. Dask's own handler (a
    worker imports ``distributed`` before any logging is set, so Dask adds one to its loggers and
    stops them at it) writes :data:`FORMAT` too; their levels stay Dask's (errors only on the
    embedded cluster's workers)."""
    formatter = logging.Formatter(FORMAT, DATEFMT)
    root = logging.getLogger()
    for handler in [h for h in root.handlers if isinstance(h, _WorkerHandler)]:
        root.removeHandler(handler)
    if not root.handlers:
        handler = _WorkerHandler(sys.stderr)
        handler.setFormatter(formatter)
        root.addHandler(handler)
    root.setLevel(level)
    quiet_libraries()
    for name in (*NOISY, "distributed.client", "distributed.gc", "tornado.application"):
        for handler in logging.getLogger(name).handlers:
            if getattr(handler, "stream", None) is sys.stderr:
                handler.setFormatter(formatter)
