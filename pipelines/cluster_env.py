"""That a ``--scheduler`` cluster has workers, and that the scheduler and every worker run this
command's curate.

A scheduler without workers is waited on for ``CURATE_WORKER_WAIT_S`` seconds (120; read only for
a ``--scheduler``, a value that is not a whole number ≥ 1 is a ConfigError naming it, exit 2), then
the command stops with one line (:func:`await_workers`, exit 9). Workers whose memory limit is under
the embedded cluster's least (640 MiB) are refused, all of them, or said, some (:func:`check_memory`).

A long-lived cluster outlives upgrades: a worker started from another checkout ran the first stages
on old code without a word and then left the run waiting; one that could not import curate failed
the plugin registration as "a bug in curate" (exit 70, a page of traceback); a scheduler holding old
modules could not read the new task graph. The driver asks each of them, before anything runs,
which curate it imports (its source digest) and stops with one line naming the process and the fix
(:class:`pipelines.cluster.SchedulerError`, exit 9). A worker that joins later (autoscaling, a
restarted job) is asked before and after each compute (:func:`check_joined`): one of another
curate stops the run, and the compute it took part in is not kept. An embedded LocalCluster's
workers are this process's own environment, so they are not asked.
"""

from __future__ import annotations

import functools
import hashlib
import logging
import os
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

#: the packages whose code runs on the workers
PACKAGES = ("curation", "pipelines", "classifiers")
#: Seconds to wait for a first worker when a ``--scheduler`` has none, unless ``CURATE_WORKER_WAIT_S`` says.
WORKER_WAIT_S = 120


def worker_wait_s() -> int:
    """``CURATE_WORKER_WAIT_S`` (default :data:`WORKER_WAIT_S`): a whole number of seconds ≥ 1, else a ConfigError."""
    from curation.config import ConfigError

    text = os.environ.get("CURATE_WORKER_WAIT_S", str(WORKER_WAIT_S))
    try:
        seconds = int(text.strip())
    except ValueError:
        seconds = 0
    if seconds < 1:
        raise ConfigError(f"CURATE_WORKER_WAIT_S = {text!r}: give a whole number of seconds ≥ 1 to wait for a first worker "
                          f"of a --scheduler (default {WORKER_WAIT_S}), or unset it")
    return seconds


def await_workers(client: Any, scheduler: str, wait: int) -> None:
    """Say how many workers the scheduler has; with none, wait up to ``wait`` seconds for one, then
    stop with one line (a scheduler without workers would leave the run waiting, silent)."""
    from pipelines.cluster import SchedulerError

    workers = client.scheduler_info().get("workers", {})
    if not workers:
        log.warning("the scheduler %s has no worker yet; waiting up to %d s for one (start `dask worker %s`)",
                    scheduler, wait, f"--scheduler-file {scheduler}" if scheduler.endswith(".json") else scheduler)
        try:
            client.wait_for_workers(1, timeout=wait)
        except TimeoutError:
            raise SchedulerError(f"--scheduler {scheduler}: no worker joined the scheduler within {wait} s; start "
                                 "`dask worker` processes for it, or leave out --scheduler for a local cluster") from None
        workers = client.scheduler_info().get("workers", {})
    threads = sum(int(w.get("nthreads") or 0) for w in workers.values())
    log.info("connected to scheduler %s: %d workers, %d threads (dashboard: %s)", scheduler, len(workers), threads, client.dashboard_link)
    check_memory(scheduler, {address: int(w.get("memory_limit") or 0) for address, w in workers.items()})


def check_memory(scheduler: str, limits: dict[str, int]) -> None:
    """Workers under ``MIN_WORKER_MEMORY`` (the least ``--memory-limit`` of the embedded cluster): all
    of them is a SchedulerError, some a warning. Such a worker's libraries fill 80 % of its limit
    before it runs a task, and Dask pauses it there: with no other worker the run waits for ever.

    >>> check_memory("tcp://h:8786", {"tcp://h:1": 0, "tcp://h:2": 4 << 30})  # 0: no limit
    >>> check_memory("tcp://h:8786", {"tcp://h:1": 300_000_000})
    Traceback (most recent call last):
    pipelines.cluster.SchedulerError: --scheduler tcp://h:8786: every worker has a memory limit under 640 MiB (tcp://h:1: 286 MiB), ...
    """
    from pipelines.cluster import SchedulerError
    from pipelines.scheduler_choice import MIN_WORKER_MEMORY

    small = {a: v for a, v in sorted(limits.items()) if 0 < v < MIN_WORKER_MEMORY}
    if not small:
        return
    named = ", ".join(f"{a}: {v >> 20} MiB" for a, v in list(small.items())[:3]) + (", …" if len(small) > 3 else "")
    why = ("a worker's imports and models take most of 0.5 GB and Dask pauses it at 80 % of its limit, so it runs no task: "
           "restart them with `dask worker --memory-limit 1GB` or more")
    if len(small) == len(limits):
        raise SchedulerError(f"--scheduler {scheduler}: every worker has a memory limit under 640 MiB ({named}), and {why}")
    log.warning("--scheduler %s: %d of %d workers have a memory limit under 640 MiB (%s); %s", scheduler, len(small),
                len(limits), named, why)


@functools.lru_cache(maxsize=1)
def code_identity() -> dict[str, str]:
    """This process's curate: the digest of its packages' Python sources (names and bytes) and where they are."""
    import curation

    root = Path(curation.__file__).resolve().parent.parent
    h = hashlib.sha256()
    for package in PACKAGES:
        for f in sorted((root / package).rglob("*.py")):
            h.update(f.relative_to(root).as_posix().encode() + b"\0" + f.read_bytes() + b"\0")
    return {"digest": h.hexdigest()[:16], "where": str(root)}


def _probe() -> Any:
    """A function that runs on a worker or the scheduler and returns its :func:`code_identity`, or
    the import error. Defined inside this one so that it is pickled by value: a process that cannot
    import curate still runs it and says so."""

    def identity() -> dict[str, str]:
        import importlib

        try:
            return importlib.import_module("pipelines.cluster_env").code_identity()
        except Exception as exc:  # noqa: BLE001 -- any import failure is the answer
            return {"error": f"{type(exc).__name__}: {exc}"}

    return identity


def mismatches(mine: dict[str, str], theirs: dict[str, Any]) -> list[str]:
    """One phrase per process of ``theirs`` (name → identity, or an exception) that does not run ``mine``.

    >>> mismatches({"digest": "a", "where": "/x"}, {"w1": {"digest": "a", "where": "/y"}, "w2": {"digest": "b", "where": "/old"},
    ...                                            "w3": {"error": "ModuleNotFoundError: No module named 'pipelines'"}})
    ['w2 runs another curate (/old, source b; this command: /x, source a)', "w3 cannot import curate (ModuleNotFoundError: No module named 'pipelines')"]
    """
    out = []
    for name, ident in sorted(theirs.items()):
        if isinstance(ident, BaseException):
            out.append(f"{name} did not answer ({type(ident).__name__}: {ident})")
        elif "error" in ident:
            out.append(f"{name} cannot import curate ({ident['error']})")
        elif ident.get("digest") != mine["digest"]:
            out.append(f"{name} runs another curate ({ident.get('where')}, source {ident.get('digest')}; "
                       f"this command: {mine['where']}, source {mine['digest']})")
    return out


def check_same_code(client: Any, scheduler: str) -> None:
    """Raise SchedulerError when the scheduler or a worker does not run this command's curate."""
    from pipelines.cluster import SchedulerError

    probe = _probe()
    theirs: dict[str, Any] = dict(client.run(probe, on_error="return"))
    try:
        theirs["the scheduler"] = client.run_on_scheduler(probe)
    except Exception as exc:  # noqa: BLE001 -- said as a mismatch
        theirs["the scheduler"] = exc
    bad = mismatches(code_identity(), theirs)
    if bad:
        raise SchedulerError(f"--scheduler {scheduler}: {'; '.join(bad)}: install this curate (the same checkout or version) "
                             "where the scheduler and every worker run, and restart them")
    client._curate_checked = {name for name in theirs if name != "the scheduler"}


def check_joined(client: Any) -> None:
    """:func:`check_same_code` for the workers of a ``--scheduler`` client that joined since its last
    check (none for other clients). Raises SchedulerError when one runs another curate or none."""
    from pipelines.cluster import SchedulerError

    known = getattr(client, "_curate_checked", None)
    if known is None:
        return
    new = sorted(set(client.scheduler_info().get("workers", {})) - known)
    if not new:
        return
    bad = mismatches(code_identity(), dict(client.run(_probe(), workers=new, on_error="return")))
    if bad:
        raise SchedulerError(f"a worker joined the cluster mid-run: {'; '.join(bad)}: stop it, install this curate where it "
                             "runs and restart it; the stage under way is not kept, re-run the same command")
    known.update(new)
