"""Raw input files that change while ingest reads them.

Ingest's input fingerprint (:func:`pipelines.marker.raw_fingerprint`) is taken once, before its
partitions are planned; the planned byte ranges are read later. A file truncated meanwhile gives
fewer records and one that grows loses what was appended, with nothing to say so: the output
would look complete. So the runner notes each file's :func:`~pipelines.marker.stat_stamp` before
the fingerprint and checks them again once the stage has read its inputs, before it is marked
done (:func:`check_raw_unchanged`).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from curation.ingest.inputs import InputError
from pipelines.marker import stat_stamp


def raw_stamps(files: list[Path]) -> dict[Path, list[int]]:
    """Size, modification and change times (ns) and inode of each file (a folder's files, as
    :func:`~pipelines.marker.raw_fingerprint` takes them)."""
    expanded: set[Path] = set()
    for f in map(Path, files):
        expanded.update(p for p in f.rglob("*") if p.is_file()) if f.is_dir() else expanded.add(f)
    return {f: stat_stamp(f.stat()) for f in sorted(expanded)}


def changed(path: Path, before: list[int]) -> str | None:
    """How ``path`` differs from its stamp ``before`` ("size A → B"), or None when it does not."""
    try:
        now = stat_stamp(os.stat(path))
    except OSError:
        return f"size {before[0]} → removed"
    if [now[0], now[1], now[3]] == [before[0], before[1], before[3]]:
        return None  # the change time alone moves with chmod, chown, a hard link or xattrs: not the bytes
    return f"size {before[0]} → {now[0]}" + ("" if now[0] != before[0] else ", rewritten")


def check_raw_unchanged(name: str, stamps: dict[Path, list[int]] | None, made: list[Path]) -> None:
    """Refuse, as an input problem (exit 4), a stage whose raw input files changed since ``stamps``
    were taken (before planning): what it read is not the file its fingerprint names. The sub-steps
    it ``made`` hold what it read under that fingerprint's key: they are removed, so that a re-run
    on the completed file (the same bytes, the same key) reads it again."""
    for path, before in sorted((stamps or {}).items()):
        if (how := changed(path, before)) is not None:
            for step in made:
                shutil.rmtree(step, ignore_errors=True)
            raise InputError(f"{path} changed while {name} read it ({how}); re-run when it is complete")
