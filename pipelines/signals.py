"""SIGTERM, how SLURM and Kubernetes stop a job, handled like Ctrl-C (a light module: the CLI imports it)."""

from __future__ import annotations

import signal
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
