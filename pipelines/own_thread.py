"""Work whose objects must be freed on the thread that made them, kept out of Dask's profiler.

Resiliparse's ``HTMLTree`` is freed on the thread that parsed it or not at all: freed on another,
it is leaked and its error ("… HTMLTreePy is unsendable, but is being dropped on another thread")
is printed on the worker's terminal. A Dask worker's profiler takes the frames of the threads
running tasks (``sys._current_frames``, every 10 ms, on the worker's event loop) and lets go of them
there; a frame that returned in the meantime still holds its locals, so the last reference to a tree
one of them held goes on the event loop's thread. The profiler samples the task's thread only: a
thread started here is never sampled.

Two more ways let a tree outlive the thread, and :func:`on_own_thread` closes both before that
thread ends. A reference cycle (an exception kept in a local of the frame it was raised through,
a frame, a closure) is freed by Python's cyclic collector on whichever thread runs it next: the
worker's event loop runs one when memory is high (:class:`~pipelines.cluster_plugin.ReleaseMemory`),
so the thread collects its own cycles before it ends (the young generations, ~1 ms, or all three
when a collection of an older one ran during the call and may have moved the call's objects there). An error's traceback holds the frames it was raised through, and so do the errors it
was raised while handling (``__context__``) or from (``__cause__``): their frames are cleared on
the thread too.
"""

from __future__ import annotations

import gc
import threading
import traceback
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")


def on_own_thread(fn: Callable[..., T], *args: Any) -> T:
    """``fn(*args)`` on a thread of its own, waited for. Its error is raised here, the locals of the
    frames in its traceback and in those of the errors it chains to cleared first on that thread
    (the objects they held freed there); the reference cycles the call left are collected there too.

    >>> on_own_thread(threading.current_thread) is threading.current_thread()
    False
    """
    out: dict[str, Any] = {}

    def run() -> None:
        before = _older_collections()
        try:
            out["value"] = fn(*args)
        except BaseException as exc:  # noqa: BLE001 - raised again by the caller, on its thread
            clear_chain(exc)
            out["error"] = exc
        # what the call made is still in the two young generations unless one of them was collected meanwhile
        gc.collect(2 if _older_collections() != before else 1)

    thread = threading.Thread(target=run, name="curate-own-thread", daemon=True)
    thread.start()
    thread.join()
    if "error" in out:
        raise out.pop("error")
    return out["value"]


def _older_collections() -> tuple[int, int]:
    """How many collections of generations 1 and 2 (which move survivors to an older one) this process ran."""
    stats = gc.get_stats()
    return stats[1]["collections"], stats[2]["collections"]


def clear_chain(exc: BaseException) -> None:
    """Clear the locals of the frames in the traceback of ``exc``, of the errors it chains to
    (``__context__``, ``__cause__``) and of those an exception group holds; a frame still running is left.

    >>> def parse(page):
    ...     raise ValueError(page)
    >>> def extract(page):
    ...     try:
    ...         parse(page)
    ...     except ValueError:
    ...         raise RuntimeError("extraction failed") from None
    >>> try:
    ...     extract("<p>x</p>")
    ... except RuntimeError as e:
    ...     clear_chain(e)
    ...     inner = e.__context__.__traceback__.tb_next.tb_frame
    >>> inner.f_code.co_name, inner.f_locals
    ('parse', {})
    """
    todo, seen = [exc], set()
    while todo:
        e = todo.pop()
        if e is None or id(e) in seen:
            continue
        seen.add(id(e))
        traceback.clear_frames(e.__traceback__)
        todo += [e.__context__, e.__cause__, *getattr(e, "exceptions", ())]
