"""Exit codes of ``curate``: each known failure class ends in one line and its own code
(:data:`EXIT_CODES`); anything else is a bug, reported with its traceback and code 70."""

from __future__ import annotations

import errno
import sys

from curation.config import ConfigError
from curation.errors import DamagedFileError, ServiceError

#: Exit code of each failure class (argparse's usage errors are 2 as well). A stop is 130 or 143 also
#: when it comes once the work is done (the cluster closing, the process exiting): its line says the
#: output is complete (:mod:`pipelines.signals`).
EXIT_CODES = {
    "ok": 0,
    "verify found problems": 1,
    "bad recipe, override or option": 2,
    "workers lost": 3,
    "input missing or damaged": 4,
    "output refused (would replace or overlap something)": 5,
    "output folder locked by another run": 6,
    "output not writable (read-only or no permission)": 7,
    "disk full": 8,
    "scheduler unreachable": 9,
    "a service a stage calls (an LLM judge's server) unreachable or failing": 10,
    "finished, but a stage is incomplete (requests an LLM judge did not answer): re-run the same command": 11,
    "export refused: the run is incomplete (re-run the same `curate run` command, or pass --allow-incomplete)": 12,
    "a stage broke the stage contract, or a stage curate does not ship raised an error (the message names the stage, "
    "its method and what to change)": 13,
    "internal error (a bug in curate: the traceback is printed)": 70,
    "interrupted (Ctrl-C)": 130,
    "terminated (SIGTERM, how SLURM and Kubernetes stop a job)": 143,
}


def short(text: str, limit: int = 300) -> str:
    """``text``'s first line, at most ``limit`` characters (a message never formats an unbounded value)."""
    first = (text.strip().splitlines() or [""])[0]
    return first if len(first) <= limit else first[:limit] + "…"


def where(exc: BaseException) -> str:
    """The file and line where ``exc`` was raised."""
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    return f"{tb.tb_frame.f_code.co_filename}:{tb.tb_lineno}" if tb is not None else "?"


def failure(exc: BaseException) -> tuple[int | None, str]:
    """(exit code, one-line message) of a known failure, or (None, "") to let it propagate."""
    from curation.ingest.inputs import InputError
    from pipelines.cluster import SchedulerError
    from pipelines.incomplete import EXIT_INCOMPLETE, EXIT_INCOMPLETE_EXPORT, IncompleteExportError, IncompleteRunError
    from pipelines.kit.contract import EXIT_STAGE, StageError
    from pipelines.safety import LockError, OutputError
    from pipelines.worker_loss import WorkerLostError, is_lost_scheduler

    if isinstance(exc, IncompleteRunError):  # every file is written: the funnel is shown as for a run that completes
        print(exc.funnel, flush=True)
        return EXIT_INCOMPLETE, str(exc)
    if isinstance(exc, StageError):  # the traceback of the stage's own error, then what to change
        if exc.trace:
            print(exc.trace, file=sys.stderr, flush=True)
        return EXIT_STAGE, short(str(exc), 2000)
    if isinstance(exc, IncompleteExportError):
        return EXIT_INCOMPLETE_EXPORT, short(str(exc), 2000)
    if isinstance(exc, WorkerLostError):
        return 3, str(exc)
    if is_lost_scheduler(exc):
        return 9, (
            "the connection to the Dask scheduler was lost mid-run; finished stages are kept and the stage under way "
            "was removed: restart `dask scheduler` and its workers (or leave out --scheduler) and re-run the same command"
        )
    if isinstance(exc, OutputError):
        return 5, str(exc)
    if isinstance(exc, LockError):
        return 6, str(exc)
    if isinstance(exc, SchedulerError):
        return 9, str(exc)
    from curation.mixture.checks import ConcentrationError

    # ConcentrationError: the recipe asked to stop on a concentration (on_concentration: fail)
    if isinstance(exc, (ConfigError, ConcentrationError)):
        return 2, short(str(exc), 2000)
    if isinstance(exc, ServiceError):
        return 10, short(str(exc), 2000)
    from curation.export.sequences import TokenCountError

    # TokenCountError: a shard that its tokenizer does not count alike
    if isinstance(exc, (InputError, FileNotFoundError, DamagedFileError, TokenCountError)):
        return 4, short(str(exc), 2000)
    if isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT):
        where = f" writing {exc.filename}" if exc.filename else ""
        then = "then re-run (finished stages are kept)"
        return 8, f"disk full{where}; free space or choose an --output on another disk, {then}"
    if isinstance(exc, OSError) and exc.errno in (errno.EROFS, errno.EACCES, errno.EPERM):
        where = f" {exc.filename}" if exc.filename else ""
        return 7, f"cannot write{where}: {exc.strerror}; choose an --output folder you can write to"
    return None, ""
