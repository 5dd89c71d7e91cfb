"""The one place that creates a Dask client.

``open_client()`` gives an embedded ``LocalCluster`` (processes, one per core, a memory
limit per worker), ``open_client("tcp://host:8786")`` (or a ``--scheduler-file`` JSON path) connects to an existing scheduler,
``open_client("synchronous")`` runs in the calling thread (tests, debugging).
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import gc
import logging
import os
import time
from collections.abc import Iterator
from typing import Any

import dask
from distributed.diagnostics.plugin import WorkerPlugin

log = logging.getLogger(__name__)


def release_memory(collect: bool = False) -> None:
    """Give freed memory back to the OS: Arrow's pool (mimalloc keeps freed pages), glibc's heap
    (``malloc_trim``) and, with ``collect``, Python's reference cycles first."""
    if collect:
        gc.collect()
    with contextlib.suppress(Exception):
        import pyarrow as pa

        pa.default_memory_pool().release_unused()
    libc = ctypes.util.find_library("c")
    if libc:
        with contextlib.suppress(Exception):
            ctypes.CDLL(libc).malloc_trim(0)


class ReleaseMemory(WorkerPlugin):
    """Worker plugin: after each task that ran long enough to matter, :func:`release_memory`.

    Our tasks read a partition, write their result to disk and return a few numbers, so a worker
    holds almost no *managed* memory; what Dask sees is freed-but-kept memory of the allocators.
    Left there it trips the 80 % pause threshold with nothing to spill, and a paused worker whose
    memory never drops pauses for ever: with 1 GB workers the whole run hung (benchmarks/reliability).
    The cost is ~3 ms per task (~50 ms more with the cycle collection after tasks over 2 s).
    """

    name = "curation-release-memory"
    idempotent = True

    def __init__(self, min_seconds: float = 0.2, collect_seconds: float = 2.0) -> None:
        self.min_seconds, self.collect_seconds = min_seconds, collect_seconds
        self._started: dict[Any, float] = {}

    def setup(self, worker: Any) -> None:
        self._started = {}

    def teardown(self, worker: Any) -> None:
        self._started.clear()

    def transition(self, key: Any, start: str, finish: str, **kwargs: Any) -> None:
        if finish == "executing":
            self._started[key] = time.monotonic()
        elif start == "executing":
            began = self._started.pop(key, None)
            took = time.monotonic() - began if began is not None else 0.0
            if took >= self.min_seconds:
                release_memory(collect=took >= self.collect_seconds)


def _register(client: Any) -> None:
    client.register_plugin(ReleaseMemory(), name=ReleaseMemory.name)


@contextlib.contextmanager
def open_client(
    scheduler: str | None = None,
    workers: int | None = None,
    memory_limit: str = "auto",
    threads_per_worker: int = 1,
) -> Iterator[Any]:
    """Yield a ``distributed.Client`` (or ``None`` for the synchronous scheduler)."""
    with dask.config.set({"dataframe.convert-string": False, "dataframe.shuffle.method": "tasks"}):
        if scheduler == "synchronous":
            with dask.config.set(scheduler="synchronous"):
                yield None
            return
        from distributed import Client, LocalCluster

        # distributed sets its loggers to INFO on import; keep the console for our progress.
        logging.getLogger("distributed").setLevel(logging.WARNING)

        if scheduler:
            is_file = scheduler.endswith(".json") and os.path.exists(scheduler)
            client = Client(scheduler_file=scheduler) if is_file else Client(scheduler)
            log.info("connected to scheduler %s (dashboard: %s)", scheduler, client.dashboard_link)
            _register(client)
            try:
                yield client
            finally:
                client.close()
            return
        n = workers or os.cpu_count() or 1
        cluster = LocalCluster(
            n_workers=n,
            threads_per_worker=threads_per_worker,
            processes=True,
            memory_limit=memory_limit,
            dashboard_address=":0",
            silence_logs=logging.ERROR,
        )
        client = Client(cluster)
        _register(client)
        log.info("LocalCluster with %d workers; dashboard: %s", n, client.dashboard_link)
        try:
            yield client
        finally:
            client.close()
            cluster.close()
