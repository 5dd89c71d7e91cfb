"""What a user is told when Dask gives up on a task because its workers died."""

from __future__ import annotations

import contextlib
from typing import Any


class WorkerLostError(RuntimeError):
    """Dask gave up on a task after its workers died; the message says what to change."""


def killed_worker_message(name: str, exc: BaseException, client: Any, recipe: dict[str, Any]) -> str:
    limits = []
    with contextlib.suppress(Exception):
        limits = [w.get("memory_limit") or 0 for w in client.scheduler_info()["workers"].values()]
    limit = f"{min(limits) / 2**30:.2f} GiB" if limits and min(limits) else "no memory limit"
    block = (recipe.get("stages", {}).get("ingest") or {}).get("blocksize_mb", "?")
    return (
        f"stage {name}: Dask gave up on a task because the workers running it died ({exc}). The usual cause "
        f"is memory: a worker here has {limit} and partitions hold up to ingest.blocksize_mb={block} MB of text; "
        "a worker needs ~0.5 GiB for its libraries plus ~6x its partition size (BENCHMARKS.md, memory-bound run). "
        "Lower ingest.blocksize_mb (ingest then re-runs, the later stages follow) or raise --memory-limit; "
        "the workers' logs say why they died. Completed stages are kept and will be skipped on the re-run."
    )
