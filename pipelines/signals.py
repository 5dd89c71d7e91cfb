"""SIGTERM, how SLURM and Kubernetes stop a job, handled like Ctrl-C; a step that a stop must not
cut short, once a stage's new output is in place; and what a stop says once the command's work is
done (a light module: the CLI imports it).

A stop that comes once a command has finished its work (the run's last stage and ``run.json`` are in
place, while the embedded cluster closes, or while the process exits) is said like any other, in one
line that says the output is complete, and ends with 130 (Ctrl-C) or 143 (SIGTERM): a signal always
gives its exit code. In the CLI process, :func:`exit_process` runs the exit functions (Dask's,
torch's, logging's) with SIGINT and SIGTERM still said that way, then leaves with ``os._exit``: the
interpreter's teardown after them resets both signals to their defaults, so a stop during it (a
second or two once torch is loaded) would end the process without a word.
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import os
import signal
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NoReturn

log = logging.getLogger("curate")
#: what the command under way has finished ("done": what is in place, complete), and its exit code once it has ended
_STATE: dict[str, Any] = {}


class Terminated(BaseException):
    """SIGTERM arrived: unwinds like Ctrl-C (the stage under way is removed, the lock released)."""


def _on_sigterm(signum: int, frame: Any) -> None:
    raise Terminated()


def catch_sigterm() -> Any:
    """Turn SIGTERM into :class:`Terminated` in this (main) thread; returns the previous handler
    (``None`` when not in the main thread, where signals cannot be handled). A command starts here:
    nothing of it is finished yet (:func:`finished`)."""
    _STATE.clear()
    try:
        return signal.signal(signal.SIGTERM, _on_sigterm)
    except ValueError:
        return None


def restore_sigterm(previous: Any) -> None:
    if previous is not None:
        signal.signal(signal.SIGTERM, previous)


@contextlib.contextmanager
def held_stops() -> Iterator[list[BaseException]]:
    """Hold SIGINT and SIGTERM for the duration: a stop that arrives is appended to the yielded list
    (``KeyboardInterrupt`` or :class:`Terminated`) for the caller to raise once the step is done. Outside
    the main thread, where no signal reaches Python, nothing is held."""
    held: list[BaseException] = []

    def hold(signum: int, frame: Any) -> None:
        held.append(KeyboardInterrupt() if signum == signal.SIGINT else Terminated())

    previous: dict[int, Any] = {}
    try:
        for signum in (signal.SIGINT, signal.SIGTERM):
            previous[signum] = signal.signal(signum, hold)
    except ValueError:
        pass
    try:
        yield held
    finally:
        for signum, handler in previous.items():
            if handler is not None:
                signal.signal(signum, handler)


def stopped_after(stop: BaseException, done: Path, what: str) -> BaseException:
    """Tag a stop that came once ``done`` was in place, finished: the CLI says ``what`` (what is in
    place, what is left to delete) instead of its line for a stop that kept nothing, and a run records
    the stage as done."""
    stop.done, stop.what = Path(done), what  # type: ignore[attr-defined]
    return stop


def finished(what: str) -> None:
    """The command's work is done and its output complete: a stop from here on (the cluster closing,
    the process exiting) says ``what`` (what is in place) instead of the line of a stop that kept nothing."""
    _STATE["done"] = what


def stop_what(stop: BaseException, otherwise: str) -> str:
    """What the line of a stop says: what a stop once a stage was in place kept (:func:`stopped_after`),
    or what the command had finished (:func:`finished`), or ``otherwise`` (the command's own words)."""
    return getattr(stop, "what", None) or _STATE.get("done") or otherwise


def _stopped_late(signum: int, frame: Any) -> None:
    """SIGINT or SIGTERM once the command has ended: one line, then exit 130 or 143 at once."""
    name, code = ("interrupted", 130) if signum == signal.SIGINT else ("terminated (SIGTERM)", 143)
    ended = _STATE.get("code")
    what = _STATE.get("done") or (
        "the command had ended with exit code 0: its output is complete"
        if ended == 0
        else "the command had ended; its last line above says what it left"
    )
    log.error("%s: %s", name, what)
    _leave(code)


def hold_until_exit() -> None:
    """In the CLI process, from the end of the command to the process's exit: SIGINT and SIGTERM say
    one line (what is in place) and exit 130 or 143 at once."""
    for signum in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(ValueError):  # not the main thread
            signal.signal(signum, _stopped_late)


def exit_process(code: int) -> NoReturn:
    """End the CLI process with ``code``: the exit functions run (Dask's, torch's, logging's), a stop
    among them said by :func:`hold_until_exit`'s handlers, then ``os._exit`` without the interpreter's
    teardown, where a stop could no longer be said."""
    _STATE["code"] = code
    with contextlib.suppress(BaseException):
        for thread in threading.enumerate():  # as at a normal exit: threads that are not daemons first
            if thread is not threading.current_thread() and not thread.daemon:
                thread.join()
        atexit._run_exitfuncs()  # each one's errors are printed and ignored, as at a normal exit
    _leave(code)


def _leave(code: int) -> NoReturn:
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(code)
