"""What a finished sub-step wrote, kept in its ``_DONE`` and checked before the step is reused.

A sub-step's folder in the cache (``.cache/<stage>/<step>-<key>/``) is hard-linked into its stage's
``artifacts/``, so a file changed there (truncated, rewritten, deleted) is changed in the cache
too. ``_DONE`` records the step's key and each file's name, size and modification time (ns); a
step whose files are missing, of another size or time, or joined by a file it did not write is
computed again, never reused. Times are compared in whole seconds, which is what an archive in
tar's default format keeps; the inode and change time are left out: a copy of a run that keeps
modification times (``cp -a``, ``tar``) reuses its steps. No byte is read to check a step.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

DONE = "_DONE"


def close_record(folder: Path, key: str) -> None:
    """Write ``folder``'s ``_DONE``: the step's ``key`` and every file it holds, as
    ``{name: [size, mtime_ns]}``; the last file a step writes."""
    files: dict[str, list[int]] = {}
    for path in sorted(p for p in Path(folder).rglob("*") if p.is_file() and p.name != DONE):
        st = path.stat()
        files[path.relative_to(folder).as_posix()] = [st.st_size, st.st_mtime_ns]
    (Path(folder) / DONE).write_text(json.dumps({"key": key, "files": files}, sort_keys=True))


def step_damage(folder: Path) -> str | None:
    """Why the finished step ``folder`` cannot be reused, naming the file; ``None`` when it can,
    ``""`` when it is not finished (no ``_DONE``: computed without a word).

    >>> step_damage(Path("/nonexistent/scores-0"))
    ''
    """
    folder = Path(folder)
    try:
        record: Any = json.loads((folder / DONE).read_text())
    except FileNotFoundError:
        return ""
    except (OSError, ValueError):
        record = None
    files = record.get("files") if isinstance(record, dict) else None
    if not isinstance(files, dict) or not all(isinstance(v, list) and len(v) == 2 for v in files.values()):
        return f"its {DONE} records no files (written by an older curate)"
    for rel, (size, mtime) in sorted(files.items()):
        try:
            st = (folder / rel).stat()
        except OSError:
            return f"{rel} is missing"
        if st.st_size != size:
            return f"{rel} has {st.st_size} bytes, the step wrote {size}"
        if st.st_mtime_ns // 1_000_000_000 != mtime // 1_000_000_000:  # whole seconds: what tar's default format keeps
            return f"{rel} was modified after the step wrote it (its modification time changed)"
    extra = sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file() and p.name != DONE)
    extra = [rel for rel in extra if rel not in files]
    return f"{extra[0]} was not written by the step" if extra else None


def reusable(stage: str, name: str, folder: Path) -> bool:
    """Whether ``stage`` may reuse its finished step ``name`` in ``folder``, logging one line: that it
    does, or which file keeps it from it (the step is computed again); nothing for a step not finished."""
    why = step_damage(folder)
    if why:
        log.warning("%s: the cached %s in %s is not as the step wrote it (%s): computing it again", stage, name, folder, why)
    elif why is None:
        log.info("%s: reusing %s from %s", stage, name, folder)
    return why is None
