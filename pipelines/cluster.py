"""The one place that creates a Dask client.

``open_client()`` gives an embedded ``LocalCluster`` (processes, one per core, a memory
limit per worker), ``open_client("tcp://host:8786")`` (or a ``--scheduler-file`` JSON path) connects to an existing scheduler,
``open_client("synchronous")`` runs in the calling thread (tests, debugging).
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Iterator
from typing import Any

import dask

log = logging.getLogger(__name__)


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
        log.info("LocalCluster with %d workers; dashboard: %s", n, client.dashboard_link)
        try:
            yield client
        finally:
            client.close()
            cluster.close()
