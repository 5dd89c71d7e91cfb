"""CPU seconds spent by a run: the calling process plus, on a cluster, every worker process.

Wall-clock seconds hide how much CPU a stage burns (and on a shared machine they vary with the
load); ``stats.json`` records both so benchmarks can report MB per CPU-second per stage.

>>> cpu_seconds(None) >= 0
True
>>> driver, total = cpu_times(None); driver == total
True
"""

from __future__ import annotations

import logging
import os
from typing import Any

log = logging.getLogger(__name__)


def _process_cpu() -> float:
    t = os.times()
    return t.user + t.system


def cpu_seconds(client: Any) -> float:
    """User + system CPU seconds of this process and of the client's workers so far."""
    return cpu_times(client)[1]


def cpu_times(client: Any) -> tuple[float, float]:
    """(this process, this process + the client's workers): CPU seconds so far. The first is the
    driver's share, which on a cluster should be coordination only (and the scheduler, when it
    runs in this process)."""
    driver = _process_cpu()
    if client is None:
        return driver, driver
    try:
        per_worker = client.run(_process_cpu)
    except Exception as exc:  # a worker lost mid-read: the figure is informative, never fatal
        log.debug("worker CPU times unavailable: %s", exc)
        return driver, driver
    return driver, driver + sum(per_worker.values())
