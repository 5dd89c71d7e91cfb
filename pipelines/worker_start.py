"""How an embedded LocalCluster's workers start: their settings, and a forkserver that has the
libraries loaded.

A spawned worker is a new interpreter that imports distributed, pandas, pyarrow, dask.dataframe
and our stage modules (~1.5 CPU-s) before it joins, after the driver has imported the same. With
Dask's ``forkserver`` start method one server process imports them once and each worker is a fork
of it. ``curate`` starts the server first thing, when its command line will start a local cluster
(:func:`local_cluster_ahead`), so the server's imports run on a second core beside the driver's own
imports and recipe checks: a 2-worker cluster was up 0.2 s after ``open_client`` asked for it,
against 1.7 s spawned (benchmarks/recipe).

The server starts with the environment Dask's nanny gives a spawned worker (its
``pre-spawn-environ`` with :data:`WORKER_ENVIRON`, and ``PYTHONHASHSEED``), so the thread pools
that its imports size are a worker's: one OpenMP, BLAS and Rayon thread. It ignores Ctrl-C, so its
workers do too. Variables the driver sets after the server started reach the workers through the
nanny (:func:`environ_changes`); a variable the driver removes does not, and modules edited after
the server started are not re-read by its workers. The user's
``DASK_DISTRIBUTED__WORKER__MULTIPROCESSING_METHOD=spawn`` turns it off.

Light on purpose (no distributed, pandas or pyarrow at import): ``curate`` imports it before the
server starts.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import signal
from collections.abc import Iterator

from pipelines.stages import STAGES

METHOD_KEY = "distributed.worker.multiprocessing-method"

#: The environment of the worker processes a LocalCluster starts (benchmarks/recipe, 2 workers
#: against one process): Dask's ``MALLOC_TRIM_THRESHOLD_`` of 64 KiB made glibc hand back every
#: freed block at once, so each task faulted its memory in again (with the per-task trim, one worker
#: spent 1.6x the CPU of one process on a pure map stage; ``ReleaseMemory`` now trims only when
#: memory is actually high); the tokenizers' Rust pool (``RAYON_NUM_THREADS``) gets one thread per
#: worker like the OpenMP, MKL, OpenBLAS and Arrow pools Dask already limits, so two workers on two
#: cores do not run four busy-waiting threads.
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
#: The memory monitor keeps its 100 ms: it enforces the memory limit. Workers start from a
#: forkserver (above). A ``DASK_…`` environment variable for any of these keys wins, e.g.
#: ``DASK_DISTRIBUTED__WORKER__PROFILE__ENABLED=True`` for the dashboard's profile page.
LOCAL_CLUSTER_CONFIG = {
    "distributed.worker.profile.enabled": False,
    "distributed.admin.tick.interval": "200ms",
    "distributed.admin.system-monitor.interval": "2s",
    "distributed.scheduler.work-stealing-interval": "500ms",
    METHOD_KEY: "forkserver",
}

#: Imported once by the server, before its first fork: what every worker imports and the stage
#: modules with their libraries. Not torch: its import is long and the stages that need it load it
#: on their own. Not ``pipelines.cli``: a worker of ``python -m pipelines.cli`` runs that module
#: as ``__mp_main__`` (light, see its imports), and runpy warns when it is already loaded.
PRELOAD: tuple[str, ...] = (
    "distributed",
    "numpy",
    "pandas",
    "pyarrow.parquet",
    "dask.dataframe",
    *(module for _, module in STAGES.values()),
)

#: Dask's own ``distributed.nanny.pre-spawn-environ`` (distributed.yaml), which a process that has
#: not imported distributed yet does not have in its config.
DASK_PRE_SPAWN = {"MALLOC_TRIM_THRESHOLD_": 65536, "OMP_NUM_THREADS": 1, "MKL_NUM_THREADS": 1, "OPENBLAS_NUM_THREADS": 1}

#: The environment the running server was started with (None: not started by this process).
_server_environ: dict[str, str] | None = None


def env_key(key: str) -> str:
    """The environment variable that sets a Dask config key (the user's choice wins over ours).

    >>> env_key("distributed.admin.tick.interval")
    'DASK_DISTRIBUTED__ADMIN__TICK__INTERVAL'
    """
    return "DASK_" + key.upper().replace(".", "__").replace("-", "_")


def local_settings() -> dict[str, object]:
    """:data:`LOCAL_CLUSTER_CONFIG` less the keys the user set, and ``spawn`` where this platform
    has no forkserver."""
    local = {k: v for k, v in LOCAL_CLUSTER_CONFIG.items() if env_key(k) not in os.environ}
    if local.get(METHOD_KEY) not in (None, *multiprocessing.get_all_start_methods()):
        local[METHOD_KEY] = "spawn"
    return local


def chosen_method() -> str:
    """The start method the embedded cluster's workers get: ours, or the user's Dask setting."""
    import dask

    return str(local_settings().get(METHOD_KEY) or dask.config.get(METHOD_KEY, default="spawn"))


def worker_environ() -> dict[str, str]:
    """What Dask's nanny sets before it spawns a worker: the ``pre-spawn-environ`` config with ours
    on top, a variable already set in this process winning, and ``PYTHONHASHSEED`` 6640 (the
    nanny's own rule, for hashing that agrees across workers).

    >>> env = worker_environ()
    >>> env["RAYON_NUM_THREADS"], env["PYTHONHASHSEED"], "MALLOC_TRIM_THRESHOLD_" in env
    ('1', '6640', False)
    """
    import dask

    prefix = "distributed.nanny.pre-spawn-environ."
    config = {**DASK_PRE_SPAWN, **(dask.config.get(prefix.rstrip("."), default=None) or {})}
    config.update({key.removeprefix(prefix): value for key, value in WORKER_ENVIRON.items()})
    env = {k: os.environ.get(k, str(v)) for k, v in config.items() if v is not None}
    if env.get("PYTHONHASHSEED") in (None, "0"):
        env["PYTHONHASHSEED"] = "6640"
    return env


@contextlib.contextmanager
def workers_ignore_sigint() -> Iterator[None]:
    """Start processes with SIGINT ignored: Ctrl-C reaches this process alone, which closes the
    cluster, instead of every worker printing its own KeyboardInterrupt traceback."""
    try:
        previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    except ValueError:  # not the main thread: leave signals alone
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def server_running() -> bool:
    """Whether this process has started the server (and not stopped it)."""
    return _server_environ is not None


def start_server() -> bool:
    """Start the forkserver with :data:`PRELOAD` and :func:`worker_environ` (once per process; the
    server imports in the background). False where the chosen method is not ``forkserver``."""
    global _server_environ
    if _server_environ is not None:
        return True
    if chosen_method() != "forkserver":
        return False
    from multiprocessing import forkserver

    env = worker_environ()
    saved = {key: os.environ.get(key) for key in env}
    os.environ.update(env)
    try:
        forkserver.set_forkserver_preload(list(PRELOAD))
        with workers_ignore_sigint():
            forkserver.ensure_running()
        _server_environ = dict(os.environ)
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
    return True


def stop_server() -> None:
    """Stop the server this process started and wait for it, as ``curate`` does when its command
    ends: the server and the workers it forked then count among this process's finished children
    (``os.times()``, ``time``), as spawned workers did. A later :func:`start_server` starts anew."""
    global _server_environ
    if _server_environ is None:
        return
    from multiprocessing import forkserver

    stop = getattr(forkserver._forkserver, "_stop", None)  # closes its pipe, then waits for it
    if stop is not None:
        stop()
    _server_environ = None


def environ_changes() -> dict[str, str]:
    """Variables of this process that the server's environment lacks or has otherwise: the nanny
    sets them in each worker before the worker starts."""
    server = _server_environ or {}
    return {k: v for k, v in os.environ.items() if server.get(k) != v}


def local_cluster_ahead(argv: list[str], commands: set[str]) -> bool:
    """Whether a ``curate`` command line will start a local cluster: one of ``commands`` (a run or a
    stage) without ``--scheduler``, ``--dry-run`` or ``--help``, abbreviations included.

    It is read before the parser is built, so that the server's imports overlap the driver's; a
    wrong guess costs time only (an idle server, or the spawn it would have saved).

    >>> local_cluster_ahead(["run", "r.yaml", "--input", "x", "--output", "y"], {"run"})
    True
    >>> local_cluster_ahead(["run", "r.yaml", "--sched=synchronous"], {"run"})
    False
    """
    if not argv or argv[0] not in commands:
        return False
    options = ("--scheduler", "--dry-run", "--help")
    for word in argv[1:]:
        if word == "--":
            break
        name = word.split("=", 1)[0]
        if name == "-h" or (len(name) > 3 and any(option.startswith(name) for option in options)):
            return False
    return True
