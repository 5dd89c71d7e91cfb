"""Never lose the user's data: which folders a stage may replace, overlapping paths, run locks.

- A stage replaces an existing output folder only when its ``_SUCCESS`` says this project wrote
  it and the folder holds no file the marker does not list; otherwise it refuses, naming it.
- An output equal to, inside or containing one of the inputs is refused before anything runs.
- A finished folder is renamed into place and the output it replaces, moved aside to ``.NAME.old``,
  is deleted last; a stop after the rename waits for the caller's bookkeeping and is reported as a
  finished stage with what is left (:func:`swapped_into_place`).
- A folder that receives stage output is locked while a run or a stage writes into it: a lock
  file ``.curate.lock`` (host, pid, start, command) held with ``flock``, so a dead process's
  lock is released by the kernel; where ``flock`` is unsupported (some network file systems)
  a lock whose process is gone on this host is taken over.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import shlex
import shutil
import socket
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from curation.ingest.patterns import expand, is_pattern
from pipelines.marker import MARKER, is_stage_output, read_marker, unrecorded
from pipelines.signals import Terminated, held_stops, stopped_after

LOCK_NAME = ".curate.lock"
#: A single-stage run's sub-step cache inside its --output folder (kept when the folder is replaced).
CACHE = ".cache"
_HELD: dict[Path, int] = {}


class OutputError(RuntimeError):
    """The output would overwrite or delete something curate did not write."""


class LockError(RuntimeError):
    """Another curate process is writing into the same folder."""


def check_replaceable(stage_dir: Path, stages: tuple[str, ...] = ()) -> None:
    """Raise :class:`OutputError` unless ``stage_dir`` is absent, empty, or a stage output of ours
    (of one of ``stages`` where they are given: an export never replaces a stage's output, nor a
    stage another stage's)."""
    stage_dir = Path(stage_dir)
    if not stage_dir.exists() and not stage_dir.is_symlink():
        return
    if stage_dir.is_symlink() or not stage_dir.is_dir():
        raise OutputError(f"{stage_dir} exists and is not a folder; choose another --output")
    if not any(p.name != CACHE for p in stage_dir.iterdir()):
        return  # empty, or only the stage's own cache from an interrupted single-stage run
    marker = read_marker(stage_dir)
    if not is_stage_output(marker):
        sample = sorted(p.name for p in stage_dir.iterdir())[:3]
        why = "its _SUCCESS is not one curate wrote, or is cut" if (stage_dir / MARKER).exists() else "no _SUCCESS written by it"
        raise OutputError(
            f"{stage_dir} exists and is not a stage output of curate ({why}; it holds {', '.join(sample)}…); "
            f"nothing was changed: {_what_to_do(stage_dir)}"
        )
    wrote = (marker or {}).get("stage")
    if stages and wrote not in stages:
        raise OutputError(f"{stage_dir} holds curate's {wrote} output, not {' or '.join(stages)}'s; nothing was changed: "
                          "choose another --output")
    foreign = unrecorded(stage_dir, marker or {})
    if foreign:
        raise OutputError(
            f"{stage_dir} holds files curate did not write ({', '.join(foreign[:3])}"
            f"{'…' if len(foreign) > 3 else ''}); move them away or choose another --output"
        )


def _what_to_do(stage_dir: Path) -> str:
    """What to do with a stage folder curate may not replace: inside a run's folder (its ``run.json`` or
    progress file, or other stage outputs beside it), move or delete that one folder."""
    parent = stage_dir.parent
    beside = (p for p in parent.iterdir() if p != stage_dir and p.name[:2].isdigit() and p.is_dir())
    if not any((parent / f).is_file() for f in ("run.json", "run.progress.json")) and not any(
        is_stage_output(read_marker(p)) for p in beside
    ):
        return "choose a new or empty --output folder"
    return (
        f"it is a stage folder of the run {parent}: move it away or delete it (`rm -r {shlex.quote(str(stage_dir))}`) "
        "and run the command again: it makes that stage again, and a `curate run` makes again only those later stages "
        "whose input comes out changed"
    )


def swap_into_place(work: Path, target: Path) -> None:
    """Rename the finished ``work`` folder to ``target``; the old output (checked to be ours) goes last."""
    with swapped_into_place(work, target):
        pass


@contextlib.contextmanager
def swapped_into_place(work: Path, target: Path, what: Callable[[Path], str] | None = None) -> Iterator[None]:
    """Rename the finished ``work`` folder to ``target``, run the with-block (the caller's bookkeeping), then
    delete the old output (checked to be ours), moved aside to ``.NAME.old``. From the rename on, the
    output is in place and the step has succeeded: SIGINT and SIGTERM are held until the with-block is
    done, and such a stop, or one that comes while the old output is deleted (seconds to minutes on a
    large corpus), is raised tagged with ``what(old)`` (:func:`pipelines.signals.stopped_after`): what
    is in place and what is left; the next write of ``target`` deletes that leftover."""
    old = target.parent / f".{target.name}.old"
    shutil.rmtree(old, ignore_errors=True)  # a stopped swap's leftover: a stop here has changed nothing yet
    with held_stops() as held:
        if target.exists():
            target.rename(old)
        work.rename(target)
        if (old / CACHE).is_dir() and not (target / CACHE).exists():
            (old / CACHE).rename(target / CACHE)  # a single-stage run's cache stays with its folder
        yield
    try:
        if held:
            raise held[0]
        shutil.rmtree(old, ignore_errors=True)
    except (KeyboardInterrupt, Terminated) as stop:
        left = f"; its previous output is left, whole or in part, in {old}" if old.exists() else ""
        raise stopped_after(stop, target, what(old) if what else f"{target} is in place, complete{left}") from None


def input_paths(args: list[Any]) -> list[Path]:
    """The paths behind CLI inputs: files/folders, glob matches, ``@list`` files and their entries
    (a path that exists is itself, whatever its name holds: a folder ``br[1]``)."""
    out: list[Path] = []
    for arg in args:
        entries = [str(arg)]
        if entries[0].startswith("@"):
            out.append(Path(entries[0][1:]))
            listed, entries = entries[0], []
            with contextlib.suppress(Exception):
                from curation.ingest.discover import read_list

                entries = [q for q, _root in read_list(Path(listed))]
        for entry in entries:
            out.extend(Path(m) for m in (expand(entry) if is_pattern(entry) else [entry]))
    return out


def check_overlap(output: Path, inputs: list[Any], option: str = "--output") -> None:
    """Raise :class:`OutputError` when ``output`` is, is inside, or contains one of ``inputs``."""
    out = Path(os.path.realpath(output))
    for path in input_paths(inputs):
        inp = Path(os.path.realpath(path))  # never raises (symlink loops are ingest's to report)
        if out == inp:
            relation = "is"
        elif inp in out.parents:
            relation = "is inside"
        elif out in inp.parents:
            relation = "contains"
        else:
            continue
        raise OutputError(
            f"{option} {output} {relation} the input {path}; writing there could replace or re-read the input. "
            f"Choose {'an output' if option == '--output' else 'a'} folder outside the inputs"
        )


def make_folder(folder: Path, option: str = "--output") -> None:
    """``mkdir -p folder``, or :class:`OutputError` naming the file that stands where a folder must be."""
    check_folder_path(folder, option)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except FileNotFoundError:  # every parent is a folder, yet none can be made: /proc, /sys
        raise PermissionError(errno.EACCES, "that file system takes no new folders", str(folder)) from None


def check_folder_path(folder: Path, option: str = "--output") -> None:
    """:class:`OutputError` naming the file that stands where ``folder`` (or a parent) must be a folder."""
    blocking = next((p for p in (folder, *folder.parents) if p.exists() and not p.is_dir()), None)
    if blocking is not None:
        raise OutputError(f"{option} {folder}: {blocking} is a file, not a folder; choose a folder "
                          "(it is made if missing)")


@contextlib.contextmanager
def folder_lock(folder: Path, name: str = LOCK_NAME) -> Iterator[None]:
    """Hold ``folder/<name>`` (``.curate.lock``) for the duration (re-entrant within this process)."""
    folder = Path(folder).resolve()
    path = folder / name
    if path in _HELD:
        yield
        return
    make_folder(folder)
    fd = _acquire(path)
    _HELD[path] = fd
    try:
        yield
    finally:
        _HELD.pop(path, None)
        with contextlib.suppress(OSError):
            os.unlink(path)
        os.close(fd)


def stage_lock(stage_dir: Path) -> contextlib.AbstractContextManager[None]:
    """The lock a stage holds while it writes ``stage_dir``: its run folder's where that folder is a
    run's (or this process holds it: a run), else one beside the stage folder
    (``.<name>.curate.lock``), so single stages written side by side do not wait for each other."""
    parent = Path(stage_dir).resolve().parent
    if parent / LOCK_NAME in _HELD or any((parent / f).is_file() for f in ("run.json", "run.progress.json")):
        return folder_lock(parent)
    return folder_lock(parent, f".{Path(stage_dir).name}{LOCK_NAME}")


def _acquire(path: Path) -> int:
    for _ in range(20):
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        except FileNotFoundError:
            if not path.parent.is_dir():
                raise
            raise PermissionError(errno.EACCES, "that folder takes no new files", str(path)) from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            holder = _describe(_read_holder(fd))
            if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                os.close(fd)
                raise LockError(
                    f"{_locked_folder(path)} is being written by another curate process ({holder}); wait for it to finish "
                    "or use another --output"
                ) from None
            if not _stale_or_free(_read_holder(fd)):  # no flock here (e.g. NFS): judge by host and pid
                os.close(fd)
                raise LockError(
                    f"{path.parent} is locked by {holder} ({path}); if no curate process is running there, "
                    "delete the lock file"
                ) from None
        try:
            same = os.fstat(fd).st_ino == os.stat(path).st_ino
        except FileNotFoundError:
            same = False
        if not same:  # the holder unlinked the file between our open and flock: try again
            os.close(fd)
            continue
        holder_info = json.dumps({"host": socket.gethostname(), "pid": os.getpid(), "started": time.time(),
                                  "command": " ".join(sys.argv[:6])})
        os.ftruncate(fd, 0)
        os.pwrite(fd, holder_info.encode(), 0)
        return fd
    raise LockError(f"could not lock {path}; another process keeps replacing it")


def _locked_folder(lock: Path) -> Path:
    """The folder a lock guards: its own folder's (``.curate.lock``), or the stage folder beside it
    (``.<stage folder>.curate.lock``, a single stage's)."""
    return lock.parent if lock.name == LOCK_NAME else lock.parent / lock.name[1 : -len(LOCK_NAME)]


def lock_holder(folder: Path) -> str:
    """Who holds ``folder``'s lock, in words ("" when nobody alive does): for ``curate stats``."""
    path = Path(folder) / LOCK_NAME
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return ""
    try:
        holder = _read_holder(fd)
    finally:
        os.close(fd)
    return "" if _stale_or_free(holder) else _describe(holder)


def _read_holder(fd: int) -> dict[str, Any]:
    try:
        data = json.loads(os.pread(fd, 4096, 0) or b"{}")
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _describe(holder: dict[str, Any]) -> str:
    if not holder:
        return "a process that has not written its id yet"
    since = time.strftime("%H:%M:%S", time.localtime(holder.get("started", 0)))
    return f"pid {holder.get('pid')} on {holder.get('host')} since {since}"


def _stale_or_free(holder: dict[str, Any]) -> bool:
    """True when nobody holds the lock, or its holder was on this host and is gone."""
    if not holder:
        return True
    if holder.get("host") != socket.gethostname():
        return False
    try:
        os.kill(int(holder.get("pid", -1)), 0)
    except ProcessLookupError:
        return True
    except (PermissionError, ValueError):
        return False
    return False
