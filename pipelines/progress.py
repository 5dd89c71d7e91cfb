"""Console progress: a bar with ETA per compute on a TTY, periodic log lines otherwise.

On a distributed client each output partition is a future, so the bar counts partitions
as they finish (rich); in one process (the synchronous scheduler) it counts tasks, through a Dask
callback, with the same step name, bar or log lines (it was Dask's bare bar on a terminal and
nothing otherwise).
"""

from __future__ import annotations

import logging
import sys
import time
from typing import Any

import dask
import pandas as pd
from dask.callbacks import Callback

from pipelines.cluster_env import check_joined
from pipelines.worker_loss import watch_workers

log = logging.getLogger(__name__)


def compute_with_progress(collection: Any, client: Any, label: str, quiet: bool = False, costs: list[int] | None = None) -> Any:
    """Compute ``collection`` (a Dask dataframe/series, a delayed or a list of delayed) with
    progress; return the result (a list for a list). With ``costs`` (one per partition of a
    dataframe) a cluster starts the costliest partitions first (largest first: the step's last
    task is a short one)."""
    tty = sys.stderr.isatty()
    if client is None:
        if quiet:
            return dask.compute(collection)[0]
        with _LocalProgress(label, tty):
            return dask.compute(collection)[0]
    frame_like = _is_frame(collection)
    several = isinstance(collection, list)
    parts = collection.to_delayed() if frame_like else (collection if several else [collection])
    check_joined(client)  # a worker of another curate that joined since the last compute gets no task of this one
    if costs is not None and len(costs) == len(parts) > 1:
        futures = _largest_first(client, parts, costs)
    else:
        futures = client.compute(parts)
    with watch_workers(client, label, futures):
        _track(futures, label, quiet=quiet, tty=tty)
        results = client.gather(futures)
    check_joined(client)  # nor does one that joined during it: its results are not kept
    if frame_like:
        frames = [r for r in results if r is not None]
        return pd.concat(frames) if frames else collection._meta
    return list(results) if several else results[0]


def _is_frame(collection: Any) -> bool:
    """A Dask dataframe or series; not imported here where nothing has (a delayed's compute, an
    export's: ~0.6 CPU-s of dask.dataframe's imports that a command of no dataframe never uses)."""
    dd = sys.modules.get("dask.dataframe")
    return dd is not None and isinstance(collection, (dd.DataFrame, dd.Series))


def persist(collection: Any, client: Any) -> Any:
    """``collection`` persisted (its tasks started, not waited for): on a cluster after
    :func:`check_joined`, as a compute. What waits for them is the compute that reads them, whose
    wait :func:`compute_with_progress` watches (a stall, no worker left) and follows with
    :func:`check_joined`."""
    if client is None:
        return dask.persist(collection)[0]
    check_joined(client)
    return client.persist(collection)


def _largest_first(client: Any, parts: list[Any], costs: list[int]) -> list[Any]:
    """The parts in one submission, each task prioritised by the cost rank of its partition
    (Dask's ``priority`` outranks its graph order), so the first task a free worker gets is the
    costliest left. ``costs[i]`` is part ``i``'s; parts that name the same partition (a sliced
    step's writes for several steps) share its rank, and so do the slices each depends on. One
    submission, not one per part: each ``client.compute`` serialises the whole graph, and a
    stage's 16-part write sent it 16 times (1.9 s of the driver's CPU over a 116 MB recipe on 2
    workers, py-spy, benchmarks/recipe)."""
    cost: dict[int, int] = {}
    for i, (part, c) in enumerate(zip(parts, costs, strict=True)):
        number = _part_number(part.key, i)
        cost[number] = max(cost.get(number, c), c)
    order = sorted(cost, key=lambda n: (-cost[n], n))
    ranks = {n: len(order) - rank for rank, n in enumerate(order)}
    return client.compute(parts, priority=_partition_priority(ranks))


def _part_number(key: Any, index: int) -> int:
    """The partition a part's key names (its last element, as in ``(name, i)``); its position
    where the key names none."""
    return key[-1] if type(key) is tuple and key and type(key[-1]) is int else index


def _partition_priority(ranks: dict[int, int]) -> Any:
    """A task key's priority: the rank of its partition, the key's last element (``(name, i)``,
    as in every partition-wise layer); 0 for any other key. Dask's scheduler calls a callable
    global annotation once per task key. Built from builtins alone, so the scheduler unpickles it
    without importing this package."""
    return lambda key: ranks.get(key[-1], 0) if type(key) is tuple and key and type(key[-1]) is int else 0


def _track(futures: list[Any], label: str, quiet: bool, tty: bool) -> None:
    from distributed import as_completed

    total = len(futures)
    if quiet:
        return
    if tty:
        with _bar() as bar:
            task = bar.add_task(label, total=total)
            for _ in as_completed(futures):
                bar.advance(task)
        return
    started, next_report = time.time(), 0.0
    for done, _ in enumerate(as_completed(futures), 1):
        frac = done / total
        if frac >= next_report or done == total:
            elapsed = time.time() - started
            eta = elapsed / frac - elapsed if frac else 0.0
            log.info("%s: %d/%d partitions (%.0f%%), %.0fs elapsed, ETA %.0fs", label, done, total, frac * 100, elapsed, eta)
            next_report = frac + 0.1


def _bar() -> Any:
    """A rich progress bar: the step's name, the bar, done of all, elapsed, ETA."""
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    return Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), TextColumn("ETA"),
                    TimeRemainingColumn(), transient=False)


class _LocalProgress(Callback):
    """Progress of a compute in one process: tasks done of the graph's, as a bar named after the
    step on a terminal, else a log line every 10 % (the format of :func:`_track`)."""

    def __init__(self, label: str, tty: bool) -> None:
        super().__init__()
        self.label, self.tty, self.bar, self.total = label, tty, None, 0
        self.started = self.last = time.time()
        self.next_report = 0.0

    def _start_state(self, dsk: Any, state: dict[str, Any]) -> None:
        self.total = max(sum(len(state[k]) for k in ("ready", "waiting", "running", "finished")), 1)
        self.started = self.last = time.time()
        if self.tty:
            self.bar = _bar()
            self.bar.start()
            self.task = self.bar.add_task(self.label, total=self.total)

    def _posttask(self, key: Any, result: Any, dsk: Any, state: dict[str, Any], worker_id: Any) -> None:
        done = len(state["finished"])
        if self.bar is not None:
            self.bar.update(self.task, completed=done)
            return
        frac, now = done / self.total, time.time()
        if (frac >= self.next_report and now - self.last >= 1.0) or done == self.total:  # a short step: its last line only
            elapsed = now - self.started
            eta = elapsed / frac - elapsed if frac else 0.0
            log.info("%s: %d/%d tasks (%.0f%%), %.0fs elapsed, ETA %.0fs", self.label, done, self.total, frac * 100, elapsed, eta)
            self.next_report, self.last = frac + 0.1, now

    def _finish(self, dsk: Any, state: dict[str, Any], errored: bool) -> None:
        if self.bar is not None:
            self.bar.update(self.task, completed=len(state["finished"]))
            self.bar.refresh()
            self.bar.stop()
