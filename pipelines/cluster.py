"""The one place that creates a Dask client.

``open_client()`` gives an embedded ``LocalCluster`` (processes, one per core, a memory
limit per worker), ``open_client("tcp://host:8786")`` (or a ``--scheduler-file`` JSON path) connects to an existing scheduler,
``open_client("synchronous")`` runs in the calling thread (tests, debugging).
:mod:`pipelines.scheduler_choice` picks between the last and the first for the CLI when nothing
asks for a cluster: small inputs run in one process.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import functools
import gc
import logging
import os
import signal
import sys
from collections.abc import Iterator
from typing import Any

import dask

log = logging.getLogger(__name__)

# ``distributed`` is imported where a client is made (pipelines.cluster_plugin, open_client): a
# one-process run (--scheduler synchronous) never loads it, ~0.4 CPU-s of imports (benchmarks/recipe).


def __getattr__(name: str) -> Any:
    if name == "ReleaseMemory":  # its base class is distributed's
        from pipelines.cluster_plugin import ReleaseMemory

        return ReleaseMemory
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def release_memory(collect: bool = False) -> None:
    """Give freed memory back to the OS: Arrow's pool, glibc's heap (``malloc_trim``, every arena)
    and, with ``collect``, Python's reference cycles first."""
    if collect:
        gc.collect()
    with contextlib.suppress(Exception):
        import pyarrow as pa

        pa.default_memory_pool().release_unused()
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


@functools.lru_cache(maxsize=1)
def _malloc_trim() -> Any:
    """glibc's ``malloc_trim`` (looked up once: ``find_library`` runs a subprocess), or None."""
    with contextlib.suppress(Exception):
        name = ctypes.util.find_library("c")
        return ctypes.CDLL(name).malloc_trim if name else None
    return None


def _this_process() -> Any:
    with contextlib.suppress(Exception):
        import psutil

        return psutil.Process()
    return None


#: The environment of the worker processes a LocalCluster starts (benchmarks/recipe, 2 workers
#: against one process): Dask's ``MALLOC_TRIM_THRESHOLD_`` of 64 KiB made glibc hand back every
#: freed block at once, so each task faulted its memory in again (with a trim after every task, one
#: worker spent 1.6x the CPU of one process on a pure map stage; :class:`ReleaseMemory` trims only
#: when memory is actually high); the tokenizers' Rust pool
#: (``RAYON_NUM_THREADS``) gets one thread per worker like the OpenMP, MKL, OpenBLAS and Arrow
#: pools Dask already limits, so two workers on two cores do not run four busy-waiting threads.
WORKER_ENVIRON = {
    "distributed.nanny.pre-spawn-environ.MALLOC_TRIM_THRESHOLD_": None,
    "distributed.nanny.pre-spawn-environ.RAYON_NUM_THREADS": 1,
}

#: Dask settings of an embedded LocalCluster (benchmarks/recipe). The workers' statistical
#: profiler (a stack sample every 10 ms, merged on the worker's event loop every second) cost ~2
#: CPU-s per worker over the 70 MB recipe, measured by thread. The periodic callbacks of an idle
#: 2-worker cluster (scheduler, client, nannies and workers: the 20 ms tick of every server, the
#: 500 ms system monitor, the 100 ms work stealing) cost 0.11 CPU-s per second of run, on the
#: two cores the tasks need; with the tick at 200 ms (it only measures event-loop stalls, for a
#: warning after 3 s), the monitor at 2 s (dashboard plots) and stealing every 500 ms, 0.044.
#: The memory monitor keeps its 100 ms: it enforces the memory limit. A ``DASK_…`` environment
#: variable for any of these keys wins, e.g. ``DASK_DISTRIBUTED__WORKER__PROFILE__ENABLED=True``
#: for the dashboard's profile page.
LOCAL_CLUSTER_CONFIG = {
    "distributed.worker.profile.enabled": False,
    "distributed.admin.tick.interval": "200ms",
    "distributed.admin.system-monitor.interval": "2s",
    "distributed.scheduler.work-stealing-interval": "500ms",
}

#: Seconds to wait for a ``--scheduler`` to answer before giving up with a one-line error (connect
#: and Dask's handshake together: :mod:`pipelines.cluster_connect`).
CONNECT_TIMEOUT_S = 15


class SchedulerError(RuntimeError):
    """The ``--scheduler`` given cannot be reached or is not a scheduler."""


def check_workers(value: Any, where: str = "--workers") -> int | None:
    """``None``/``auto`` (one per core) or an integer ≥ 1; anything else is a ConfigError."""
    from curation.config import ConfigError

    if value is None or value == "auto":
        return None
    try:
        n = int(value)
        if n != float(value):
            raise ValueError
    except (TypeError, ValueError):
        raise ConfigError(f"{where} = {value!r}: give a whole number of workers ≥ 1, or auto") from None
    if n < 1:
        raise ConfigError(f"{where} = {n}: give at least 1 worker (or auto: one per core)")
    return n


@contextlib.contextmanager
def _workers_ignore_sigint() -> Iterator[None]:
    """Start worker processes with SIGINT ignored: Ctrl-C reaches this process alone, which closes
    the cluster, instead of every worker printing its own KeyboardInterrupt traceback."""
    try:
        previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    except ValueError:  # not the main thread: leave signals alone
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def _env_key(key: str) -> str:
    """The environment variable that sets a Dask config key (the user's choice wins over ours)."""
    return "DASK_" + key.upper().replace(".", "__").replace("-", "_")


def _exit_without_teardown() -> None:
    """Make this worker process end with ``os._exit`` once its worker has closed.

    Run on the embedded cluster's own workers when a run ends: the worker closes as usual (its
    tasks, plugins and scratch folder), and the process then skips the interpreter's teardown
    of every module and object it loaded, which kept ``cluster.close()`` waiting ~0.5 s (and
    ~0.4 CPU-s per worker) after each run (benchmarks/recipe). Registered last, this handler runs
    first of the ``atexit`` handlers; the streams are flushed first. Never on a ``--scheduler``'s
    workers: their processes are not ours.
    """
    import atexit

    def leave() -> None:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
        os._exit(0)

    atexit.register(leave)


def _quiet_teardown() -> None:
    """Closing after Ctrl-C or an error: the cancelled gathers and closing comms are not news (run
    on the driver, and on each embedded worker, whose heartbeats to a closed scheduler printed
    tracebacks in one interrupt of three); on the workers after a run that finished too (a heartbeat
    during the close printed one at the end of a successful run on a busy machine)."""
    for name in ("distributed", "asyncio", "tornado"):
        logging.getLogger(name).setLevel(logging.CRITICAL)


def _register(client: Any, own: bool = False) -> None:
    """The plugins of every cluster; on the embedded cluster (``own``), its workers' log lines in
    the command's format and at its level, the root logger's here (:mod:`pipelines.console_log`)."""
    from pipelines.cluster_plugin import ReleaseMemory, WorkerConsole

    client.register_plugin(ReleaseMemory(), name=ReleaseMemory.name)
    if own:
        client.register_plugin(WorkerConsole(logging.getLogger().getEffectiveLevel()), name=WorkerConsole.name)


@contextlib.contextmanager
def open_client(
    scheduler: str | None = None,
    workers: int | None = None,
    memory_limit: str = "auto",
    threads_per_worker: int = 1,
) -> Iterator[Any]:
    """Yield a ``distributed.Client`` (or ``None`` for the synchronous scheduler)."""
    frames = {"dataframe.convert-string": False, "dataframe.shuffle.method": "tasks"}
    if scheduler == "synchronous":
        # no distributed.* keys here: where this block were the first to set them, leaving it would
        # remove the defaults of a distributed imported inside it (a test's, or a later client's).
        # The scheduler as a function, not the name "synchronous": for a name, Dask imports
        # distributed to look for a client first (~0.4 CPU-s of imports a one-process run never uses)
        from dask.local import get_sync

        with dask.config.set({**frames, "scheduler": get_sync}):
            yield None
        return
    # imported before its keys are set: a key set first would be removed whole on leaving, with
    # every default distributed registered when it was imported inside the block
    from distributed import Client, LocalCluster

    from pipelines.cluster_connect import connect
    from pipelines.cluster_env import await_workers, check_same_code, worker_wait_s

    with dask.config.set({**frames, **WORKER_ENVIRON}):
        # distributed sets its loggers to INFO on import; keep the console for our progress.
        logging.getLogger("distributed").setLevel(logging.WARNING)

        if scheduler is not None:  # "" is a ConfigError (give an address), not a LocalCluster
            # a lost scheduler is said in one line (exit 9), not in the client's reconnect tracebacks
            logging.getLogger("distributed.client").setLevel(logging.CRITICAL)
            wait = worker_wait_s()  # CURATE_WORKER_WAIT_S, read where it is used: a bad value stops here (exit 2)
            client = connect(scheduler)
            try:
                await_workers(client, scheduler, wait)
                check_same_code(client, scheduler)  # an old or missing curate on a process of it: one line, not a traceback
            except BaseException:
                client.close()
                raise
            _register(client)
            try:
                yield client
            except BaseException:
                _quiet_teardown()
                raise
            finally:
                client.close()
            return
        n = check_workers(workers) or os.cpu_count() or 1
        if n > (cores := os.cpu_count() or 1):
            log.warning("%d workers on %d cores: the workers beyond one per core share the cores, each with its own memory "
                        "(--workers auto starts one per core)", n, cores)
        local = {k: v for k, v in LOCAL_CLUSTER_CONFIG.items() if _env_key(k) not in os.environ}
        with _workers_ignore_sigint(), dask.config.set(local):
            cluster = LocalCluster(
                n_workers=n,
                threads_per_worker=threads_per_worker,
                processes=True,
                memory_limit=memory_limit,
                dashboard_address=":0",
                silence_logs=logging.ERROR,
            )
            client = Client(cluster)
        _register(client, own=True)
        log.info("LocalCluster with %d workers; dashboard: %s", n, client.dashboard_link)
        try:
            yield client
        except BaseException:
            _quiet_teardown()
            with contextlib.suppress(Exception):
                client.run(_quiet_teardown)
            raise
        else:  # the work is done: a heartbeat that meets the closing scheduler is no news either
            with contextlib.suppress(Exception):
                client.run(_quiet_teardown)
                client.run(_exit_without_teardown)
        finally:
            client.close()
            cluster.close()
