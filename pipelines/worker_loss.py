"""What a user is told when Dask gives up on a task because its workers died."""

from __future__ import annotations

import contextlib
import sys
from typing import Any


def is_killed_worker(exc: BaseException) -> bool:
    """True for Dask's ``KilledWorker`` (a task whose workers died). Looked up where ``distributed``
    is already loaded: a run that never imported it (one process) cannot have raised one."""
    killed = getattr(sys.modules.get("distributed.scheduler"), "KilledWorker", None)
    return killed is not None and isinstance(exc, killed)


class WorkerLostError(RuntimeError):
    """Dask gave up on a task after its workers died; the message says what to change."""


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


def killed_worker_message(name: str, exc: BaseException, limits: list[int], recipe: dict[str, Any]) -> str:
    """One line: the stage, the limit the workers had when the stage started, what to change."""
    block = (recipe.get("stages", {}).get("ingest") or {}).get("blocksize_mb", "?")
    task = getattr(exc, "task", None)
    what = f"task {str(task)[:120]}" if task is not None else "a task"
    return (
        f"stage {name}: Dask gave up on {what} because the workers running it died. The usual cause "
        f"is memory: the workers had {describe_limits(limits)} and partitions hold up to ingest.blocksize_mb={block} MB of text; "
        "a worker needs ~0.5 GiB for its libraries plus ~6x its partition size (BENCHMARKS.md, memory-bound run). "
        "Lower ingest.blocksize_mb (ingest then re-runs, the later stages follow) or raise --memory-limit; "
        "the workers' logs say why they died. Completed stages are kept and will be skipped on the re-run."
    )
