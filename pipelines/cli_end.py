"""How a ``curate`` command that did not finish ends: one line on stderr and its exit code
(:data:`pipelines.exit_codes.EXIT_CODES`) for each failure and stop; a bug in curate prints its
traceback and ends with 70.

A stop (Ctrl-C, SIGTERM) says what is in place: what a stage already in place kept
(:func:`pipelines.signals.stopped_after`), the command's finished work where it came once that was
done (:func:`pipelines.signals.finished`: the embedded cluster closing after the run's last stage
and ``run.json``), else the command's own words below.
"""

from __future__ import annotations

import logging
import os
import sys

from pipelines.exit_codes import failure, short, where
from pipelines.signals import Terminated, stop_what

log = logging.getLogger("curate")

#: what a stopped run left, and what to do
_RUN = "finished stages are kept and the stage under way was removed; re-run the same command to resume"
#: a stage run alone
_STAGE = (
    "what the stage had written was removed and a finished folder it would replace is kept as it was; "
    "re-run the same command"
)
#: other commands, where it is not "re-run the same command"
_STOPPED = {
    "run": _RUN,
    "export": "nothing was written (an export is moved into place only once every phase is done); re-run the same command",
}


def stopped_words(command: str) -> str:
    """What an interrupted ``command`` left, and what to do, when the stop kept nothing it finished."""
    from pipelines.stages import STAGES

    if command.replace("-", "_") in STAGES:
        return _STAGE
    return _STOPPED.get(command, "re-run the same command")


def ended(command: str, exc: BaseException) -> int:
    """Say ``exc``, which ended ``command``, in one line (a bug: with its traceback), and return the exit code."""
    if isinstance(exc, KeyboardInterrupt):
        log.error("interrupted: %s", stop_what(exc, stopped_words(command)))
        return 130
    if isinstance(exc, Terminated):
        log.error("terminated (SIGTERM): %s", stop_what(exc, stopped_words(command)))
        return 143
    if isinstance(exc, BrokenPipeError):  # `curate stats --json | head`: the reader has what it wanted
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no second error when Python flushes stdout
        return 141
    code, message = failure(exc)
    if code is None:
        import traceback

        traceback.print_exception(exc)
        log.error(
            "internal error (a bug in curate, exit code 70): %s at %s%s; the traceback is above, "
            "please report it with the command you ran",
            short(f"{type(exc).__name__}: {exc}"),
            where(exc),
            "".join(f" ({note})" for note in getattr(exc, "__notes__", ())[:1]),  # the stage and method it came from
        )
        return 70
    log.error("%s", message)
    return code
