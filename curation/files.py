"""File naming and atomic writes shared by every layer (stages, artifacts, model stores).

>>> part_name(7)
'part-00007.parquet'
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def part_name(number: int) -> str:
    """``part-00007.parquet``: the file of input partition ``number``."""
    return f"part-{int(number):05d}.parquet"


@contextmanager
def atomic_path(path: Path) -> Iterator[Path]:
    """Yield a temp path next to ``path``; rename it onto ``path`` when the block succeeds, so a
    reader never sees a half-written file and a retried task overwrites cleanly."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        yield tmp
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()


def link_file(src: Path, dst: Path) -> None:
    """``dst`` as a hard link to ``src`` (a copy across file systems), replacing it atomically."""
    with atomic_path(dst) as tmp:
        tmp.unlink(missing_ok=True)
        try:
            os.link(src, tmp)
        except OSError:
            shutil.copyfile(src, tmp)
