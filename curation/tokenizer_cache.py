"""A cache on disk of byte-level BPE vocabularies converted for ``tiktoken`` (``curation.tokens``).

Converting Qwen's 10.6 MB ``tokenizer.json`` (JSON parse, byte alphabet → bytes) costs every process
~0.2 CPU-s; the result is kept as one ``.npz`` (numpy arrays and JSON, nothing pickled) under
``$CURATION_TOKENIZER_CACHE`` (default ``~/.cache/curation/tokenizers``), named by the file's
resolved path, size, modification time and inode, so a changed file gets a new entry. Entries are
written to a temp file and renamed (processes racing write the same bytes; the last rename wins);
an entry that fails any check (format, key, array shapes, SHA-256 of the arrays, duplicates) is
ignored, and the caller converts the file again and rewrites it. An unwritable folder only costs
the conversion. The file's added tokens marked special (:func:`marked_special`) are kept the same way, as JSON.

>>> conv = Converted({b"a": 0, b"\\n\\n": 1, b"bc": 2}, r"\\S+", {"<|end|>": 3}, nfc=False)
>>> _from_arrays(*_to_arrays(conv, {"source": "x"}), {"source": "x"}) == conv
True
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import tempfile
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path
from typing import Any

import numpy as np

log = logging.getLogger(__name__)

FORMAT = 2  # raise when the conversion in curation.tokens or this layout changes
ARRAYS = ("lines", "line_ids", "other", "other_ends", "other_ids")


@dataclass(frozen=True)
class Converted:
    """What ``tiktoken.Encoding`` needs: token bytes → id, split regex, added tokens, and whether to NFC first."""

    ranks: dict[bytes, int]
    pattern: str
    special: dict[str, int]
    nfc: bool


def cache_dir() -> Path:
    """``$CURATION_TOKENIZER_CACHE`` or ``~/.cache/curation/tokenizers``."""
    return Path(os.environ.get("CURATION_TOKENIZER_CACHE") or Path.home() / ".cache" / "curation" / "tokenizers")


def source_key(path: Path) -> dict[str, Any]:
    """What names ``path``'s entry; taken before the file is read, so a file changed while it is
    converted leaves an entry that the next process does not match."""
    st = path.stat()
    return {
        "format": FORMAT,
        "source": str(path.resolve()),
        "size": st.st_size,
        "mtime_ns": st.st_mtime_ns,
        "ino": st.st_ino,
    }


def entry_path(key: dict[str, Any]) -> Path:
    name = hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:32]
    return cache_dir() / f"{name}.npz"


def load(key: dict[str, Any]) -> Converted | None:
    """The cached conversion for ``key``, or None when there is none or it fails a check."""
    path = entry_path(key)
    try:
        with np.load(path) as z:  # allow_pickle stays False: an .npz here holds plain arrays only
            arrays, meta = {k: z[k] for k in ARRAYS}, json.loads(z["meta"].tobytes())
        return _from_arrays(arrays, meta, key)
    except FileNotFoundError:
        return None
    except Exception as e:  # anything unreadable or inconsistent is rebuilt, never used
        log.warning("ignoring tokenizer cache entry %s: %s", path, e)
        return None


def store(key: dict[str, Any], conv: Converted) -> None:
    """Write ``conv`` as ``key``'s entry (temp file, then rename); a failure is logged and ignored."""
    path = entry_path(key)
    arrays, meta = _to_arrays(conv, key)
    tmp = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=path.parent, prefix=f".{path.stem}.", suffix=".tmp", delete=False) as f:
            tmp = f.name
            np.savez(f, **arrays, meta=np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8))
        os.replace(tmp, path)
    except OSError as e:
        log.warning("could not write tokenizer cache entry %s: %s", path, e)
        if tmp is not None:
            Path(tmp).unlink(missing_ok=True)


def marked_special(path: Path) -> list[str]:
    """The added tokens of the ``tokenizer.json`` at ``path`` marked ``special``, in id order. Parsing Qwen's
    file costs ~0.3 CPU-s, so the list is kept as a JSON entry beside the conversions, under the same key."""
    key = {**source_key(path), "kind": "special"}
    entry = entry_path(key).with_suffix(".json")
    try:
        cached = json.loads(entry.read_text(encoding="utf-8"))
        if cached["key"] == key and all(isinstance(t, str) for t in cached["special"]):
            return list(cached["special"])
    except (OSError, ValueError, KeyError, TypeError):
        pass
    added = json.loads(path.read_text(encoding="utf-8")).get("added_tokens") or []
    special = [t["content"] for t in sorted(added, key=lambda t: t.get("id", 0)) if t.get("special")]
    tmp = None
    try:
        entry.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile("w", dir=entry.parent, suffix=".tmp", delete=False, encoding="utf-8") as f:
            tmp = f.name
            json.dump({"key": key, "special": special}, f)
        os.replace(tmp, entry)
    except OSError as e:
        log.warning("could not write tokenizer cache entry %s: %s", entry, e)
        if tmp is not None:
            Path(tmp).unlink(missing_ok=True)
    return special


def _digest(arrays: dict[str, np.ndarray]) -> str:
    h = hashlib.sha256()
    for k in ARRAYS:
        h.update(np.ascontiguousarray(arrays[k]).tobytes())
    return h.hexdigest()


def _to_arrays(conv: Converted, key: dict[str, Any]) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """Tokens in id order: those without a newline byte joined by newlines (``bytes.split`` cuts
    them apart in C, ~0.01 CPU-s less than slicing Qwen's 149k), those with one as one byte string
    with end offsets; the ids of each, and the rest as JSON."""
    tokens = sorted(conv.ranks, key=conv.ranks.__getitem__)
    lines = [t for t in tokens if b"\n" not in t]
    other = [t for t in tokens if b"\n" in t]
    arrays = {
        "lines": np.frombuffer(b"\n".join(lines), dtype=np.uint8),
        "line_ids": np.array([conv.ranks[t] for t in lines], dtype=np.int64),
        "other": np.frombuffer(b"".join(other), dtype=np.uint8),
        "other_ends": np.cumsum([len(t) for t in other], dtype=np.int64),
        "other_ids": np.array([conv.ranks[t] for t in other], dtype=np.int64),
    }
    meta = {**key, "pattern": conv.pattern, "special": conv.special, "nfc": conv.nfc, "n_tokens": len(tokens)}
    return arrays, {**meta, "sha256": _digest(arrays)}


def _from_arrays(arrays: dict[str, np.ndarray], meta: dict[str, Any], key: dict[str, Any]) -> Converted:
    """Check an entry against ``key`` and itself, then rebuild the conversion; ValueError when it fails."""
    if any(meta.get(k) != v for k, v in key.items()):
        raise ValueError("entry is for another file or format")
    lines, line_ids, other, ends, other_ids = (arrays[k] for k in ARRAYS)
    if any(a.ndim != 1 or a.dtype != (np.uint8 if k in ("lines", "other") else np.int64) for k, a in arrays.items()):
        raise ValueError("arrays have the wrong type")
    if meta["sha256"] != _digest(arrays):
        raise ValueError("arrays do not match their SHA-256")
    n = meta["n_tokens"]
    if line_ids.size + other_ids.size != n or ends.size != other_ids.size or (ends.size and ends[-1] != other.size):
        raise ValueError("arrays have the wrong length")
    ids = np.sort(np.concatenate([line_ids, other_ids]))  # tiktoken panics on an id used twice
    if (
        (ids.size and ids[0] < 0)
        or (np.diff(ids) <= 0).any()
        or (ends.size and ends[0] <= 0)
        or (np.diff(ends) <= 0).any()
    ):
        raise ValueError("a negative or repeated id, or token offsets out of order")
    parts = lines.tobytes().split(b"\n") if line_ids.size else []
    data, stops = other.tobytes(), ends.tolist()
    ranks = dict(zip(parts, line_ids.tolist(), strict=True))
    ranks.update(zip([data[a:b] for a, b in pairwise([0, *stops])], other_ids.tolist(), strict=True))
    special, pattern, nfc = meta["special"], meta["pattern"], meta["nfc"]
    if len(ranks) != n or not isinstance(pattern, str) or not isinstance(nfc, bool) or not isinstance(special, dict):
        raise ValueError("duplicate tokens or malformed metadata")
    if not all(isinstance(t, str) and type(i) is int for t, i in special.items()):
        raise ValueError("malformed added tokens")
    return Converted(ranks, pattern, special, nfc)
