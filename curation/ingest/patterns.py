"""How an ``--input`` argument (or an ``@list`` line) becomes paths: one that exists is itself, even when
its name holds ``[``, ``*`` or ``?`` (``data[1].jsonl``, a folder ``br[1]``); one that does not exist and
holds them is a glob, expanded in name order (``**`` recursive; a trailing ``/`` matches folders only).

A glob's matches are what a folder walk would find: below the pattern's fixed folders, a name that
starts with ``_`` (Spark's ``_temporary``, a writer's ``_tmp.parquet``) is passed over as a folder walk
passes it over, unless the pattern itself spells a ``_`` there; glob never matches a name starting
with ``.`` unless the pattern spells the dot.

>>> underscored("raw/**/*.jsonl", "raw/_temporary/0/a.jsonl"), underscored("raw/_*.jsonl", "raw/_a.jsonl")
(True, False)
"""

from __future__ import annotations

import glob
import os
from pathlib import PurePath

_MAGIC = "*?["


def is_pattern(arg: str) -> bool:
    """Whether ``arg`` is a glob to expand: it holds ``*``, ``?`` or ``[`` and names no existing path
    (a link counts as existing, even one whose target is missing: it is reported as itself)."""
    return any(c in arg for c in _MAGIC) and not os.path.lexists(arg)


def expand(arg: str) -> list[str]:
    """The matches of ``arg`` (:func:`is_pattern`), in name order; with a trailing ``/`` only folders."""
    return sorted(glob.glob(arg, recursive=True))


def underscored(pattern: str, match: str) -> bool:
    """Whether a name of ``match`` that the pattern's wildcards matched starts with ``_`` while the
    pattern spells no ``_`` at the start of a name there: what a folder walk passes over."""
    parts = PurePath(pattern).parts
    fixed = next((i for i, p in enumerate(parts) if any(c in p for c in _MAGIC)), len(parts))
    if any(p.startswith("_") for p in parts[fixed:]):
        return False
    return any(p.startswith("_") for p in PurePath(match).parts[fixed:])
