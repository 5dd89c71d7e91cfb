"""What names a judge in its annotation cache key: the model's content, not its folder's name, and
the server an HTTP judge asks.

Fine-tuning writes folders named ``final`` or ``checkpoint-1000`` and files named ``model.gguf``;
a key made of the name alone gave a second model the first one's cached answers. The fingerprint
reads a little of each file — small files (configs, tokenizers) whole, large ones (weights) as
their size and 16 slices of 64 KiB spread over the file — so it costs about 1 MiB per weights
file, never a pass over gigabytes, and it depends on content only: two machines with the same
model agree on it (a modification time would differ between copies).

>>> import tempfile, pathlib
>>> a, b = pathlib.Path(tempfile.mkdtemp()), pathlib.Path(tempfile.mkdtemp())
>>> _ = (a / "config.json").write_text("{}"), (b / "config.json").write_text('{"layers": 2}')
>>> model_fingerprint(a) == model_fingerprint(b), len(model_fingerprint(a))
(False, 12)
>>> server_of("https://user:secret@api.example.com:443/v1/")
'https://api.example.com:443/v1'
"""

from __future__ import annotations

import functools
import hashlib
import urllib.parse
from pathlib import Path

#: Files up to this size are hashed whole; larger ones by :data:`SLICES` slices of :data:`SLICE` bytes.
SMALL_FILE = 1 << 20
SLICE = 64 << 10
SLICES = 16


def model_fingerprint(path: str | Path) -> str:
    """12 hex digits naming the content of a model file or folder (see the module docstring)."""
    p = Path(path).expanduser().resolve()
    files = [p] if p.is_file() else sorted(f for f in p.rglob("*") if f.is_file() and not _hidden(f, p))
    digest = hashlib.blake2b(digest_size=6)
    for f in files:
        stat = f.stat()
        digest.update(f"{f.relative_to(p) if f != p else f.name}\0{stat.st_size}\0".encode())
        digest.update(_file_digest(str(f), stat.st_size, stat.st_mtime_ns))
    return digest.hexdigest()


def server_of(base_url: str) -> str:
    """``base_url`` as it goes into a cache key and a log: no user name or password, no trailing slash."""
    parts = urllib.parse.urlsplit(base_url.strip())
    host = parts.hostname or ""
    netloc = f"[{host}]" if ":" in host else host
    if parts.port is not None:
        netloc += f":{parts.port}"
    return urllib.parse.urlunsplit((parts.scheme, netloc, parts.path, parts.query, "")).rstrip("/")


def _hidden(f: Path, root: Path) -> bool:
    """Files under a dot-folder (``.cache/``, ``.git/``) or dot-files: not part of the model."""
    return any(part.startswith(".") for part in f.relative_to(root).parts)


@functools.lru_cache(maxsize=256)
def _file_digest(path: str, size: int, mtime_ns: int) -> bytes:
    """Digest of a file's content, whole when small, else sampled; cached per (path, size, mtime)."""
    h = hashlib.blake2b(digest_size=16)
    with open(path, "rb") as fh:
        if size <= SMALL_FILE:
            h.update(fh.read())
        else:
            for k in range(SLICES):
                fh.seek((size - SLICE) * k // (SLICES - 1))
                h.update(fh.read(SLICE))
    return h.digest()

