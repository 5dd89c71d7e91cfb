"""One computation of a sub-step at a time in a shared cache (``--cache-dir`` several runs share).

Two runs that need the same sub-step (same input fingerprint and parameters, so the same folder)
would otherwise write the same temporary folder and replace each other's results: the second waits
for the first, then reuses what it finished. The lock is ``.<step>-<key>.lock`` in the cache,
held with ``flock`` (a dead holder's lock is released by the kernel) and removed on release;
where ``flock`` is unsupported (some network file systems) the step runs unlocked, as before.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import logging
import os
from collections.abc import Iterator
from pathlib import Path

log = logging.getLogger(__name__)

BUSY = (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES)


def lock_path(tmp: Path) -> Path:
    """The lock of a sub-step whose temporary folder is ``tmp`` (``.<step>-<key>.tmp``)."""
    return tmp.with_name(tmp.name.removesuffix(".tmp") + ".lock")


@contextlib.contextmanager
def step_locks(cache_dir: Path, steps: list[str], stage: str) -> Iterator[None]:
    """Hold the locks of the sub-steps ``steps`` (``<step>-<key>``), taken in name order so that two
    runs never wait on each other in a circle."""
    held: list[tuple[Path, int]] = []
    try:
        for step in sorted(set(steps)):
            held.append(_wait(Path(cache_dir) / f".{step}.lock", stage, step))
        yield
    finally:
        for path, fd in reversed(held):
            with contextlib.suppress(OSError):
                os.unlink(path)
            os.close(fd)


def held_by_another(lock: Path) -> bool:
    """True when another process holds ``lock`` now (its sub-step's temporary folder is in use)."""
    try:
        fd = os.open(lock, os.O_RDWR)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as exc:
        return exc.errno in BUSY
    finally:
        os.close(fd)
    return False


def _wait(path: Path, stage: str, step: str) -> tuple[Path, int]:
    path.parent.mkdir(parents=True, exist_ok=True)
    said = False
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            if exc.errno not in BUSY:  # no flock on this file system: run unlocked
                return path, fd
            if not said:
                log.info("%s: waiting for another curate process computing %s in %s", stage, step, path.parent)
                said = True
            fcntl.flock(fd, fcntl.LOCK_EX)
        try:
            same = os.fstat(fd).st_ino == os.stat(path).st_ino
        except FileNotFoundError:
            same = False
        if same:
            return path, fd
        os.close(fd)  # the holder removed the file as it released it: lock the one there now
