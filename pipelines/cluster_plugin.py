"""The worker plugin of every cluster a run uses (registered by :func:`pipelines.cluster.open_client`).

A module of its own so that :mod:`pipelines.cluster` imports ``distributed`` only when a client is
made: a one-process run never loads it.
"""

from __future__ import annotations

import contextlib
import time
from typing import Any

from distributed.diagnostics.plugin import WorkerPlugin

from pipelines.cluster import _this_process, release_memory


class ReleaseMemory(WorkerPlugin):
    """Worker plugin: give freed memory back to the OS (:func:`release_memory`) when a worker's
    memory is high, after a task and on a timer.

    Our tasks read a partition, write their result to disk and return a few numbers, so a worker
    holds little *managed* memory; much of what Dask sees is freed-but-kept memory of the
    allocators. Left there it trips the 80 % pause threshold with nothing to spill, and a paused
    worker whose memory never drops pauses for ever: with 1 GB workers the whole run hung twice
    (benchmarks/reliability). So: after a task, a trim (and, after tasks over ``collect_seconds``,
    a cycle collection first) when the process is above ``after_task`` of its memory limit; and
    every ``check_seconds`` a collection and trim while it is above ``high`` (a paused worker runs
    no tasks). Below ``after_task`` the freed memory stays with the allocator for the next task:
    handing it back after every task made the next task fault it in again: one worker spent
    23.7 CPU-s on code_quality's map against 14.5 in one process (benchmarks/recipe).
    """

    name = "curation-release-memory"
    idempotent = True

    def __init__(self, collect_seconds: float = 2.0, check_seconds: float = 2.0, high: float = 0.6, after_task: float = 0.4) -> None:
        self.collect_seconds, self.check_seconds, self.high, self.after_task = collect_seconds, check_seconds, high, after_task
        self._started: dict[Any, float] = {}
        self._callback: Any = None
        self._over: Any = None

    def setup(self, worker: Any) -> None:
        from tornado.ioloop import PeriodicCallback

        self._started = {}
        # Arrow on glibc malloc: mimalloc's heaps are per thread, so memory freed by a task (run in
        # the worker's task thread) could not be handed back from the plugin's thread, and stayed.
        with contextlib.suppress(Exception):
            import pyarrow as pa

            pa.set_memory_pool(pa.system_memory_pool())
        limit = getattr(getattr(worker, "memory_manager", None), "memory_limit", None)
        process = _this_process()
        self._over = (lambda share: process.memory_info().rss > share * limit) if limit and process else (lambda share: True)
        if limit:
            def check() -> None:
                if self._over(self.high):
                    release_memory(collect=True)

            self._callback = PeriodicCallback(check, self.check_seconds * 1000)
            self._callback.start()

    def teardown(self, worker: Any) -> None:
        self._started.clear()
        if self._callback is not None:
            self._callback.stop()

    def transition(self, key: Any, start: str, finish: str, **kwargs: Any) -> None:
        if finish == "executing":
            self._started[key] = time.monotonic()
        elif start == "executing":
            began = self._started.pop(key, None)
            if self._over is None or self._over(self.after_task):
                took = time.monotonic() - began if began is not None else 0.0
                release_memory(collect=took >= self.collect_seconds)


class WorkerConsole(WorkerPlugin):
    """Worker plugin of the embedded cluster only: the worker logs like the command, its format
    and ``level`` (:func:`pipelines.console_log.worker_console`), on each worker, a replacement too."""

    name = "curation-worker-console"
    idempotent = True

    def __init__(self, level: int) -> None:
        self.level = level

    def setup(self, worker: Any) -> None:
        from pipelines.console_log import worker_console

        worker_console(self.level)
