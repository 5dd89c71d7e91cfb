"""A cache on disk of byte-level BPE vocabularies converted for ``tiktoken`` (``curation.tokens``).

Converting Qwen's 10.6 MB ``tokenizer.json`` (JSON parse, byte alphabet → bytes) costs every process
~0.2 CPU-s; the result is kept as one ``.npz`` (numpy arrays and JSON, nothing pickled) under
``$CURATION_TOKENIZER_CACHE`` (default ``~/.cache/curation/tokenizers``), named by the file's
resolved path, size, modification time and inode, so a changed file gets a new entry. Entries are
written to a temp file and renamed (processes racing write the same bytes; the last rename wins);
an entry that fails any check (format, key, array shapes, SHA-256 of the arrays, duplicates) is
ignored, and the caller converts the file again and rewrites it. An unwritable folder only costs
the conversion.

>>> conv = Converted({b"a": 0, b"bc": 1}, r"\\S+", {"<|end|>": 2}, nfc=False)
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

FORMAT = 1  # raise when the conversion in curation.tokens or this layout changes


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
            arrays = z["token_bytes"], z["token_ends"], z["token_ids"], json.loads(z["meta"].tobytes())
        return _from_arrays(*arrays, key)
    except FileNotFoundError:
        return None
    except Exception as e:  # anything unreadable or inconsistent is rebuilt, never used
        log.warning("ignoring tokenizer cache entry %s: %s", path, e)
        return None


def store(key: dict[str, Any], conv: Converted) -> None:
    """Write ``conv`` as ``key``'s entry (temp file, then rename); a failure is logged and ignored."""
    path = entry_path(key)
    blob, ends, ids, meta = _to_arrays(conv, key)
    tmp = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=path.parent, prefix=f".{path.stem}.", suffix=".tmp", delete=False) as f:
            tmp = f.name
            np.savez(
                f,
                token_bytes=blob,
                token_ends=ends,
                token_ids=ids,
                meta=np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8),
            )
        os.replace(tmp, path)
    except OSError as e:
        log.warning("could not write tokenizer cache entry %s: %s", path, e)
        if tmp is not None:
            Path(tmp).unlink(missing_ok=True)


def _digest(blob: np.ndarray, ends: np.ndarray, ids: np.ndarray) -> str:
    h = hashlib.sha256()
    for a in (blob, ends, ids):
        h.update(np.ascontiguousarray(a).tobytes())
    return h.hexdigest()


def _to_arrays(conv: Converted, key: dict[str, Any]) -> tuple[np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
    """Tokens in id order as one byte string with end offsets, their ids, and the rest as JSON."""
    tokens = sorted(conv.ranks, key=conv.ranks.__getitem__)
    blob = np.frombuffer(b"".join(tokens), dtype=np.uint8)
    ends = np.cumsum([len(t) for t in tokens], dtype=np.int64)
    ids = np.array([conv.ranks[t] for t in tokens], dtype=np.int64)
    meta = {
        **key,
        "pattern": conv.pattern,
        "special": conv.special,
        "nfc": conv.nfc,
        "n_tokens": len(tokens),
        "sha256": _digest(blob, ends, ids),
    }
    return blob, ends, ids, meta


def _from_arrays(
    blob: np.ndarray, ends: np.ndarray, ids: np.ndarray, meta: dict[str, Any], key: dict[str, Any]
) -> Converted:
    """Check an entry against ``key`` and itself, then rebuild the conversion; ValueError when it fails."""
    if any(meta.get(k) != v for k, v in key.items()):
        raise ValueError("entry is for another file or format")
    n = meta["n_tokens"]
    if (
        blob.dtype != np.uint8
        or ends.dtype != np.int64
        or ids.dtype != np.int64
        or ends.shape != (n,)
        or ids.shape != (n,)
    ):
        raise ValueError("arrays have the wrong type or length")
    if meta["sha256"] != _digest(blob, ends, ids):
        raise ValueError("arrays do not match their SHA-256")
    if n and (
        ends[0] <= 0 or ends[-1] != blob.size or (np.diff(ends) <= 0).any() or ids[0] < 0 or (np.diff(ids) <= 0).any()
    ):
        raise ValueError("token offsets or ids out of order")
    data, stops = blob.tobytes(), ends.tolist()
    ranks = dict(zip([data[a:b] for a, b in pairwise([0, *stops])], ids.tolist(), strict=True))
    special, pattern, nfc = meta["special"], meta["pattern"], meta["nfc"]
    if len(ranks) != n or not isinstance(pattern, str) or not isinstance(nfc, bool) or not isinstance(special, dict):
        raise ValueError("duplicate tokens or malformed metadata")
    if not all(isinstance(t, str) and type(i) is int for t, i in special.items()):
        raise ValueError("malformed added tokens")
    return Converted(ranks, pattern, special, nfc)
