"""One process or an embedded LocalCluster, for a command that was not told which.

``curate run``, a stage alone and ``curate export`` start a LocalCluster of one worker per core,
unless an option names the scheduler or the cluster (``--scheduler``, ``--workers``,
``--memory-limit``, the recipe's ``cluster.workers``) or their inputs are smaller than
``cluster.min_input_mb`` on disk: those run in one process (:func:`pipelines.cluster.open_client`
with ``"synchronous"``). The command says which, and why, on its first lines and in ``run.json``.
"""

from __future__ import annotations

import argparse
import logging
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

#: ``cluster.min_input_mb``: inputs smaller than this (MiB on disk) run in one process when nothing
#: asks for a cluster. Below it a LocalCluster's start, its workers' imports and model loads cost
#: more than the second worker gains: the whole recipe with ``--profile cpu`` on 2 cores, 2 workers
#: against one process, 1.7 MiB (the sample) 0.90x for +62 % CPU, 9.7 MiB 0.94x, 18.2 MiB 1.12x,
#: 30.2 MiB 1.19x (benchmarks/recipe, "One process or a cluster").
MIN_INPUT_MB = 16.0


def check_min_input_mb(value: Any) -> float:
    """``cluster.min_input_mb``: a number ≥ 0 (0: a LocalCluster whatever the inputs' size)."""
    from curation.config import ConfigError

    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value >= 0:
        raise ConfigError(f"cluster.min_input_mb = {value!r}: give a size in MiB ≥ 0 (0 starts a cluster for any input)")
    return float(value)


def input_mb(paths: Sequence[str | Path]) -> float | None:
    """MiB on disk of the input files ingest finds at ``paths`` (files, folders, globs, ``@lists``),
    or None where it finds none (a URL, a dataset name, a glob that matches nothing).

    >>> input_mb(["no/such/input"]) is None
    True
    """
    from curation.ingest.discover import InputError, find_inputs
    from curation.ingest.inputs import files_bytes

    try:
        return files_bytes(find_inputs(paths)) / (1 << 20)
    except (InputError, OSError):
        return None


def choose_scheduler(scheduler: str | None, asked: str | None, min_input_mb: float, inputs: Sequence[str | Path]) -> tuple[str | None, str, str]:
    """``(scheduler for open_client, what runs, why)``. ``asked``: the option that asked for a
    scheduler or cluster (``--workers`` …), or None; then inputs under ``min_input_mb`` MiB run in
    one process and larger ones (or of unknown size) on an embedded LocalCluster.

    >>> choose_scheduler("synchronous", "--scheduler", 16, [])
    ('synchronous', 'one process', 'chosen with --scheduler')
    """
    if asked:
        name = "one process" if scheduler == "synchronous" else scheduler or "LocalCluster"
        return scheduler, name, f"chosen with {asked}"
    size = input_mb(inputs) if min_input_mb > 0 else None
    if size is not None and size < min_input_mb:
        return "synchronous", "one process", f"inputs {size:.1f} MiB < cluster.min_input_mb {min_input_mb:g}; --workers N starts a cluster"
    what = "inputs of unknown size" if size is None and min_input_mb > 0 else f"inputs ≥ cluster.min_input_mb {min_input_mb:g} MiB"
    return None, "LocalCluster", f"{what}; --scheduler synchronous runs in one process"


def command_scheduler(args: Any, inputs: Sequence[str | Path], cluster: Mapping[str, Any] | None = None) -> tuple[str | None, dict[str, str]]:
    """:func:`choose_scheduler` for a command's ``--scheduler``, ``--workers`` and ``--memory-limit``
    and the recipe's ``cluster`` section: the scheduler for ``open_client`` and the record of the
    choice (``{"name", "why"}``, what ``run.json`` keeps)."""
    from curation.config import ConfigError

    cluster = cluster or {}
    if args.scheduler is not None:  # its syntax, or its scheduler file and the address there, --dry-run too (nothing is connected to here)
        from pipelines.cluster_connect import check_address

        check_address(args.scheduler)
    if args.scheduler is not None and args.memory_limit != "auto":
        raise ConfigError(f"--memory-limit {args.memory_limit} and --scheduler {args.scheduler}: --memory-limit sizes the "
                          "embedded cluster's workers; a scheduler elsewhere has its own (dask worker --memory-limit)")
    if args.scheduler is not None and args.workers is not None:
        raise ConfigError(f"--workers {args.workers} and --scheduler {args.scheduler}: choose one (--workers sizes the "
                          "embedded cluster, --scheduler runs elsewhere: in this process or on a cluster of its own)")
    if args.scheduler is not None and cluster.get("workers") is not None:  # a recipe's default for runs without --scheduler
        logging.getLogger("curate").warning("cluster.workers = %s sizes the embedded cluster; --scheduler %s runs elsewhere, "
                                            "so it is not used here", cluster["workers"], args.scheduler)
    limit = check_min_input_mb(MIN_INPUT_MB if cluster.get("min_input_mb") is None else cluster["min_input_mb"])
    options = (("--scheduler", args.scheduler), ("--workers", args.workers), ("cluster.workers", cluster.get("workers")),
               ("--memory-limit", None if args.memory_limit == "auto" else args.memory_limit))
    asked = next((option for option, value in options if value is not None), None)
    scheduler, what, why = choose_scheduler(args.scheduler, asked, limit, inputs)
    if scheduler not in (None, "synchronous"):  # CURATE_WORKER_WAIT_S: a bad value stops a --dry-run too (exit 2)
        from pipelines.cluster_env import worker_wait_s

        worker_wait_s()
    return scheduler, {"name": what, "why": why}


#: the least ``--memory-limit`` a worker runs under: its imports and models take most of 0.5 GB, and
#: Dask pauses a worker at 80 % of its limit (under 512 MB the sample run's workers paused for ever)
MIN_WORKER_MEMORY = 640 << 20


def memory_arg(text: str) -> str:
    """``--memory-limit`` of every command that starts a LocalCluster (argparse type)."""
    from dask.utils import parse_bytes

    if text in ("auto", "0"):
        return text
    try:
        size = parse_bytes(text)
        if size <= 0:
            raise ValueError
    except (ValueError, TypeError):
        raise argparse.ArgumentTypeError(f"{text!r}: give auto, 0 (no limit) or a size like 4GB") from None
    if size < MIN_WORKER_MEMORY:
        raise argparse.ArgumentTypeError(f"{text!r}: a worker needs at least 640MiB (its imports and models take most of "
                                         "0.5 GB, and Dask pauses it at 80 % of its limit); give 1GB or more")
    return text
