"""``ingest.inputs`` entries: which one takes a file (the first whose ``match`` glob takes it), and the
warning, while ingest plans, for an entry that takes no input file: a typo in ``match`` (``*.jsonl.gz``
for files named ``.jsonl.zst``) would otherwise send a whole corpus down the default path unsaid.

>>> entries = ({"match": "*.zst", "source": "code"}, {"match": "*.jsonl", "source": "math_science"})
>>> [entry_index(names(Path("a/b.jsonl"), "a/b.jsonl"), entries)]
[1]
>>> [w.split(" matches")[0] for w in unused_entry_warnings(entries, [names(Path("a/b.jsonl"), "a/b.jsonl")])]
["ingest: ingest.inputs entry '*.zst'"]
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from fnmatch import fnmatch
from pathlib import Path
from typing import Any


def names(path: Path, label: str) -> tuple[str, ...]:
    """The names an entry's ``match`` is tried on: the file's label (:func:`~curation.ingest.discover.input_label`)
    and its absolute path (the same under any scheduler), its path as given, and its name."""
    return (label, os.path.abspath(path), path.as_posix(), path.name)


def entry_index(file_names: tuple[str, ...], inputs: Sequence[dict[str, Any]]) -> int | None:
    """The index of the first entry whose ``match`` takes a file of ``file_names`` (:func:`names`); None."""
    return next((i for i, entry in enumerate(inputs) if _takes(entry, file_names)), None)


def _takes(entry: dict[str, Any], file_names: tuple[str, ...]) -> bool:
    return any(fnmatch(x, entry["match"]) for x in file_names)


def unused_entry_warnings(inputs: Sequence[dict[str, Any]], files: Sequence[tuple[str, ...]], shown: int = 3) -> list[str]:
    """One warning for each entry that takes no file of ``files`` (each file's :func:`names`): its
    ``match`` matches none (with what the inputs' names look like), or an earlier entry takes every
    file it matches."""
    taken = {entry_index(f, inputs) for f in files}
    out = []
    for i, entry in enumerate(inputs):
        if i in taken:
            continue
        settings = ", ".join(f"{k}: {entry[k]}" for k in ("source", "fields") if k in entry) or "no settings"
        mine = [f for f in files if _takes(entry, f)]
        if mine:
            first = inputs[entry_index(mine[0], inputs) or 0]["match"]
            out.append(f"ingest: ingest.inputs entry {entry['match']!r} takes no input file: an earlier entry takes every "
                       f"file it matches (e.g. {mine[0][0]}, taken by {first!r}; the first entry that matches a file takes "
                       f"it), so its {settings} applies to none; put it before that entry or remove it")
            continue
        out.append(f"ingest: ingest.inputs entry {entry['match']!r} matches no input file, so its {settings} applies "
                   f"to none; the inputs are named like {', '.join(_examples(files, shown))} (a match is tried on each "
                   "file's path as given, its absolute path and its name): correct the match or remove the entry")
    return out


def _examples(files: Sequence[tuple[str, ...]], shown: int) -> list[str]:
    """Up to ``shown`` labels of the inputs, one of each kind of name ending first (``.jsonl.zst``, ``.parquet``)."""
    ends: dict[str, str] = {}
    for f in files:
        ends.setdefault("".join(Path(f[-1]).suffixes).lower(), f[0])
    picked = list(ends.values())[:shown]
    picked += [f[0] for f in files if f[0] not in picked][: shown - len(picked)]
    return picked + (["…"] if len(files) > len(picked) else [])
