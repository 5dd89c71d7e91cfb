"""Work whose objects must be freed on the thread that made them, kept out of Dask's profiler.

Resiliparse's ``HTMLTree`` is freed on the thread that parsed it or not at all: freed on another,
it is leaked and its error ("… HTMLTreePy is unsendable, but is being dropped on another thread")
is printed on the worker's terminal. A Dask worker's profiler takes the frames of the threads
running tasks (``sys._current_frames``, every 10 ms, on the worker's event loop) and lets go of them
there; a frame that returned in the meantime still holds its locals, so the last reference to a tree
one of them held goes on the event loop's thread. The profiler samples the task's thread only: a
thread started here is never sampled.
"""

from __future__ import annotations

import threading
import traceback
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")


def on_own_thread(fn: Callable[..., T], *args: Any) -> T:
    """``fn(*args)`` on a thread of its own, waited for. Its error is raised here, the locals of the
    frames in its traceback cleared first on that thread (the objects they held freed there).

    >>> on_own_thread(threading.current_thread) is threading.current_thread()
    False
    """
    out: dict[str, Any] = {}

    def run() -> None:
        try:
            out["value"] = fn(*args)
        except BaseException as exc:  # noqa: BLE001 - raised again by the caller, on its thread
            traceback.clear_frames(exc.__traceback__)
            out["error"] = exc

    thread = threading.Thread(target=run, name="curate-own-thread", daemon=True)
    thread.start()
    thread.join()
    if "error" in out:
        raise out.pop("error")
    return out["value"]
