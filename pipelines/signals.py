"""SIGTERM, how SLURM and Kubernetes stop a job, handled like Ctrl-C; and a step that a stop must not
cut short, once a stage's new output is in place (a light module: the CLI imports it)."""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any


class Terminated(BaseException):
    """SIGTERM arrived: unwinds like Ctrl-C (the stage under way is removed, the lock released)."""


def _on_sigterm(signum: int, frame: Any) -> None:
    raise Terminated()


def catch_sigterm() -> Any:
    """Turn SIGTERM into :class:`Terminated` in this (main) thread; returns the previous handler
    (``None`` when not in the main thread, where signals cannot be handled)."""
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
