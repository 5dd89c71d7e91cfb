"""Console progress: a bar per compute (distributed's progress or dask's ProgressBar)."""

from __future__ import annotations

import logging
import sys
from typing import Any

import dask

log = logging.getLogger(__name__)


def compute_with_progress(collection: Any, client: Any, label: str, quiet: bool = False) -> Any:
    """Compute ``collection`` showing a progress bar on a TTY; log a line otherwise."""
    show = not quiet and sys.stderr.isatty()
    log.info("%s …", label)
    if client is None:
        if show:
            from dask.diagnostics import ProgressBar

            with ProgressBar(out=sys.stderr):
                return dask.compute(collection)[0]
        return dask.compute(collection)[0]
    future = client.compute(collection)
    if show:
        from distributed import progress

        progress(future)
        sys.stderr.write("\n")
    return future.result()
