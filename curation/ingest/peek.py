"""What input discovery and planning read of a file or folder before reading its records: the first
line of a ``.json`` file, a ``datasets`` folder's ``state.json``, the first bytes of a Git LFS pointer
or of a WARC file."""

from __future__ import annotations

import json
from pathlib import Path

from curation.ingest.streams import compression, magic_kind


def opens_json_document(path: Path) -> bool:
    """Whether ``path`` (named ``.json``, uncompressed) opens with a line of ``{`` alone: one JSON
    object written over many lines (``json.dump(..., indent=2)``, ``jq .``), as a dataset's
    ``metadata.json`` is, not JSON Lines (one object a line). Only its first line is read."""
    if not path.name.lower().endswith(".json"):
        return False
    try:
        with open(path, "rb") as fh:
            for raw in fh:
                if line := raw.removeprefix(b"\xef\xbb\xbf").strip():
                    return line == b"{"
                if fh.tell() > 1 << 16:  # blank lines only, that far: not what a metadata file looks like
                    return False
    except OSError:
        return False
    return False


def empty_dataset(path: Path) -> bool:
    """A ``save_to_disk`` folder of 0 rows: its state.json lists no data file (and ``datasets``
    cannot load it: an IndexError)."""
    try:
        return json.loads((path / "state.json").read_text()).get("_data_files") == []
    except (OSError, ValueError, AttributeError):
        return False


def lfs_pointer(path: Path) -> bool:
    """A Git LFS pointer file standing where the data should be (a clone without ``git lfs pull``)."""
    try:
        with open(path, "rb") as fh:
            return fh.read(40).startswith(b"version https://git-lfs.github.com/spec/")
    except OSError:
        return False


def warc_head_problem(path: Path) -> str | None:
    """Why the WARC reader cannot read ``path`` from its first bytes (not a WARC file, or a zstd file that
    opens with a skippable frame), as an error that says what to do; None if it can."""
    with open(path, "rb") as fh:
        head = fh.read(8)
    if head and not (head.startswith(b"WARC/") or magic_kind(head) or compression(path)):
        return f"{path}: not a WARC file (it starts with {head!r}, not 'WARC/' or a gzip/zstd header)"
    if magic_kind(head) == "zstd" and not head.startswith(b"\x28\xb5\x2f\xfd"):  # FastWARC reads no skippable frame
        return (
            f"{path}: opens with a zstd skippable frame (pzstd, seekable zstd), which the WARC reader does not "
            f"read; recompress it (zstd -dc {path.name} | zstd -o {path.stem}.re.zst)"
        )
    return None
