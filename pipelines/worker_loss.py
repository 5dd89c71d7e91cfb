"""What a user is told when Dask gives up on a task because its workers died."""

from __future__ import annotations

import contextlib
import logging
import sys
import threading
import time
from collections.abc import Iterator
from typing import Any

log = logging.getLogger(__name__)

#: How often (s) a compute on a cluster checks that some worker can run it, and how long none may before it says so
#: (and before a run on its own LocalCluster, left with no worker at all, stops: nothing would restart one).
WATCH_EVERY_S, STALL_S = 15.0, 60.0


def is_killed_worker(exc: BaseException) -> bool:
    """True for Dask's ``KilledWorker`` (a task whose workers died). Looked up where ``distributed``
    is already loaded: a run that never imported it (one process) cannot have raised one."""
    killed = getattr(sys.modules.get("distributed.scheduler"), "KilledWorker", None)
    return isinstance(exc, NoWorkerLeftError) or (killed is not None and isinstance(exc, killed))


def is_lost_scheduler(exc: BaseException) -> bool:
    """True when the client lost its scheduler mid-run: Dask cancels every future with the reason
    ``scheduler-connection-lost``, or a comm to it closes."""
    comm = getattr(sys.modules.get("distributed.comm.core"), "CommClosedError", None)
    cancelled = type(exc).__module__.startswith("distributed") and "Cancelled" in type(exc).__name__
    return (comm is not None and isinstance(exc, comm)) or (cancelled and "scheduler-connection-lost" in str(exc))


class WorkerLostError(RuntimeError):
    """Dask gave up on a task after its workers died; the message says what to change."""


class NoWorkerLeftError(WorkerLostError):
    """curate's own LocalCluster had no worker for :data:`STALL_S` while a step waited on it: its
    workers died (usually out of memory) and none came back, so nothing would ever run the step."""

    def __init__(self, step: str, waited: float) -> None:
        self.step, self.waited = step, waited
        super().__init__(f"{step}: every worker of the LocalCluster died and none restarted within {waited:.0f} s "
                         "(the usual cause is memory: raise --memory-limit; the workers' logs say why they died)")


def memory_limits(client: Any) -> list[int]:
    """The memory limit (bytes, 0 = none) of each worker the scheduler knows now ([] without a cluster)."""
    if client is None:
        return []
    with contextlib.suppress(Exception):
        return [int(w.get("memory_limit") or 0) for w in client.scheduler_info()["workers"].values()]
    return []


def describe_limits(limits: list[int]) -> str:
    """``limits`` in words: "a memory limit of 0.37 GiB per worker", or what was not seen."""
    if not limits:
        return "no workers to ask for their memory limit"
    if not min(limits):
        return "no memory limit on at least one worker"
    low, high = min(limits) / 2**30, max(limits) / 2**30
    return f"a memory limit of {low:.2f} GiB per worker" if low == high else f"memory limits of {low:.2f}–{high:.2f} GiB"


def killed_worker_message(name: str, exc: BaseException, limits: list[int], recipe: dict[str, Any], specs: Any = ()) -> str:
    """One line: the stage, the limit the workers had when the stage started, what to change.
    ``specs``: ingest's planned partitions (groups of input chunks), whose largest is compared with
    ``ingest.blocksize_mb``: a partition over it holds a record that no smaller block would cut."""
    block = (recipe.get("stages", {}).get("ingest") or {}).get("blocksize_mb", "?")
    if isinstance(exc, NoWorkerLeftError):
        what = f"every worker of the LocalCluster died during {exc.step} and none restarted within {exc.waited:.0f} s"
    else:
        task = getattr(exc, "task", None)
        what = f"Dask gave up on {f'task {str(task)[:120]}' if task is not None else 'a task'} because the workers running it died"
    largest = max((sum(int(getattr(s, "nbytes", 0) or 0) for s in group) for group in specs), default=0) / 2**20
    if isinstance(block, (int, float)) and largest > block:
        sizes = (f"its largest partition holds {largest:,.0f} MB, over ingest.blocksize_mb={block} MB, as no partition is "
                 "cut inside a record: a single record may be larger than the memory limit allows (a JSONL line needs "
                 "a few times its size while it is parsed), whatever the block size")
        change = ("Raise --memory-limit, or lower ingest.max_chars (it drops longer texts as too_large once they are "
                  "parsed, so the steps after parsing do not hold them)")
    else:
        sizes = f"partitions hold up to ingest.blocksize_mb={block} MB of text"
        change = "Lower ingest.blocksize_mb (ingest then re-runs, the later stages follow) or raise --memory-limit"
    return (
        f"stage {name}: {what}. The usual cause is memory: the workers had {describe_limits(limits)} and {sizes}; "
        "a worker needs ~0.5 GiB for its libraries plus ~6x its partition size (BENCHMARKS.md, memory-bound run). "
        f"{change}; the workers' logs say why they died. Completed stages are kept and will be skipped on the re-run."
    )


def stalled(client: Any) -> str | None:
    """Why no task can run now (no worker, or every worker paused at its memory limit), or None."""
    with contextlib.suppress(Exception):
        workers = client.scheduler_info().get("workers", {})
        if not workers:
            if own_cluster(client):
                return "the LocalCluster has no worker: its workers died (usually out of memory) and none restarted"
            return "the scheduler has no worker: start `dask worker` processes for it (or re-run without --scheduler)"
        paused = [a for a, w in workers.items() if str(w.get("status", "")).endswith("paused")]
        if len(paused) == len(workers) and all(_idle(w) for w in workers.values()):
            return (f"all {len(workers)} workers are paused at their memory limit ({describe_limits(memory_limits(client))}) "
                    "while running no task and holding no data (their libraries alone fill it), so no task runs: "
                    "give the workers more memory (dask worker --memory-limit 1GB or more)")
        if len(paused) == len(workers):
            return (f"all {len(workers)} workers are paused at their memory limit ({describe_limits(memory_limits(client))}), "
                    "so no task runs: give the workers more memory (dask worker --memory-limit) or lower ingest.blocksize_mb")
    return None


def own_cluster(client: Any) -> bool:
    """True for a client of curate's embedded LocalCluster (its workers are this run's own processes),
    False for one connected to a ``--scheduler`` (whose workers someone else starts)."""
    return getattr(client, "cluster", None) is not None


def _idle(worker: dict[str, Any]) -> bool:
    """A worker (the scheduler's view) that runs no task and holds under a tenth of its memory limit in data.

    >>> _idle({"memory_limit": 1000, "metrics": {"task_counts": {}, "managed_bytes": 0}})
    True
    >>> _idle({"memory_limit": 1000, "metrics": {"task_counts": {"executing": 1}, "managed_bytes": 0}})
    False
    """
    metrics = worker.get("metrics") or {}
    held, limit = int(metrics.get("managed_bytes") or 0), int(worker.get("memory_limit") or 0)
    return not (metrics.get("task_counts") or {}).get("executing") and held * 10 < limit


@contextlib.contextmanager
def watch_workers(client: Any, label: str, futures: list[Any] | None = None) -> Iterator[None]:
    """While the block waits on ``client``'s cluster, warn when no task can run for :data:`STALL_S`,
    and again each time the wait doubles (a cluster that cannot run the work would otherwise leave
    the run waiting, silent; one line said once covered a 9-minute wait). On curate's own
    LocalCluster, whose workers nobody else starts, no worker for :data:`STALL_S` ends the wait
    instead: the ``futures`` it waits on are cancelled and the block raises :class:`NoWorkerLeftError`
    (a worker the nanny could not restart after it died for memory left the run waiting for ever).
    A worker that leaves the cluster meanwhile (killed, out of memory) is said in one line: Dask
    re-runs its tasks. Workers are compared between polls of the client's view of the scheduler and
    once more when the block ends (an ``all`` event handler unsubscribed after a step made the client
    log a traceback for each later event)."""
    if client is None:
        yield
        return
    done = threading.Event()
    seen: dict[str, Any] = {"workers": _addresses(client), "gave_up": None}
    local = own_cluster(client) and futures is not None

    def watch() -> None:
        since: float | None = None
        empty_since: float | None = None  # since when the LocalCluster has had no worker
        next_at = STALL_S
        while not done.wait(WATCH_EVERY_S):
            seen["workers"] = _say_gone(client, label, seen["workers"])
            why = stalled(client)
            since = (since or time.monotonic()) if why else None
            next_at = next_at if why else STALL_S
            empty_since = (empty_since or time.monotonic()) if local and seen["workers"] == set() else None
            if empty_since is not None and time.monotonic() - empty_since >= STALL_S:
                seen["gave_up"] = time.monotonic() - empty_since
                with contextlib.suppress(Exception):
                    client.cancel(futures, reason="no-worker-left", msg=why or "")
                return
            if why and since is not None and time.monotonic() - since >= next_at:
                log.warning("%s: waiting %.0f s and counting: %s", label, time.monotonic() - since, why)
                next_at *= 2

    thread = threading.Thread(target=watch, name="curate-watch-workers", daemon=True)
    thread.start()
    try:
        yield
    except Exception as exc:
        done.set()
        thread.join(timeout=5)
        if seen["gave_up"] is not None:  # the cancelled futures' error: say why they were cancelled
            raise NoWorkerLeftError(label, seen["gave_up"]) from exc
        raise
    finally:
        done.set()
        thread.join(timeout=5)
        _say_gone(client, label, seen["workers"])


def _addresses(client: Any) -> set[str] | None:
    """The workers in the client's view of the scheduler (None where it cannot be read)."""
    with contextlib.suppress(Exception):
        return set(client.scheduler_info().get("workers", {}))
    return None


def _say_gone(client: Any, label: str, before: set[str] | None) -> set[str] | None:
    """Warn once for each worker of ``before`` that is no longer in the cluster; the workers now."""
    now = _addresses(client)
    if before is not None and now is not None:
        for gone in sorted(before - now):
            log.warning("%s: the worker %s left the cluster mid-step; %s (the outputs do not change; the worker's "
                        "log says why it left)", label, gone, _rerun_where(client, now))
    return now if now is not None else before


def _rerun_where(client: Any, now: set[str]) -> str:
    """Where Dask runs a lost worker's tasks again: on the workers ``now`` left, else on one that joins."""
    if now:
        return "Dask runs its tasks again on the other workers"
    if own_cluster(client):
        return "no worker is left: the step waits for the LocalCluster to restart one"
    return ("no worker is left: the step waits for a worker to join: start `dask worker` processes for the "
            "scheduler (or re-run without --scheduler)")
