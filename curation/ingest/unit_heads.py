"""Where gzip members (zstd frames) start past a damaged stretch, a member whose header is damaged included.

A reader that meets a damaged stretch of a multi-member file (bgzip, ``cat a.gz b.gz``, one member
per WARC record) goes on at the next member. A member is looked for at every place where its
magic (``1f 8b 08``, ``28 b5 2f fd``) is written with at most one byte wrong; it is taken as it is
when its first bytes pass the reader's check (``accept``: they decompress, or start a WARC record),
else as a member with a **damaged header** when they pass it with the header restored (the magic,
and gzip's flags, and bgzip's extra field length, as ``gzip``, Python and bgzip write them): such a member is skipped, as a member
of its own, since the flags and checks of a damaged header cannot be trusted. Files are read in
1 MiB blocks and each candidate's first 64 KiB: memory does not follow the file's size.

>>> import gzip
>>> m = gzip.compress(b"x" * 1000, mtime=0)
>>> restored(b"\\x1e" + m[1:], "gzip")[0] == m, bool(near_heads(b"ab" + m, "gzip"))
(True, True)
"""

from __future__ import annotations

import io
import re
import zlib
from collections.abc import Callable
from pathlib import Path

from curation.ingest.streams import UNIT_HEADS

PROBE = 1 << 16  # compressed bytes of a candidate its check reads
_SCAN = 1 << 20  # bytes read at a time
_FLAGS = (0, 4, 8)  # gzip's FLG as Python / pigz -n, bgzip (FEXTRA) and gzip (FNAME) write it
#: a unit's magic with at most one byte wrong (a lookahead: overlapping candidates are all found)
_NEAR = {kind: re.compile(b"(?=" + b"|".join(re.escape(head[:i]) + b"." + re.escape(head[i + 1:]) for i in range(len(head)))
                          + b")", re.S) for kind, head in UNIT_HEADS.items()}


def near_heads(block: bytes, kind: str) -> list[int]:
    """Offsets in ``block`` where the unit's magic is written with at most one byte wrong."""
    return [m.start() for m in _NEAR[kind].finditer(block)]


def restored(data: bytes, kind: str) -> list[bytes]:
    """``data`` (bytes that start a member or frame) with its header restored: the magic (and gzip's
    method), then each usual gzip flag byte; the bytes as they are are not among them."""
    head = UNIT_HEADS[kind]
    fixed = head + data[len(head):]
    out = [fixed] if fixed != data else []
    if kind == "gzip":
        out += [fixed[:3] + bytes([f]) + fixed[4:] for f in _FLAGS if len(fixed) > 3 and f != fixed[3]]
        if fixed[12:14] == b"BC" and fixed[3:4] + fixed[10:12] != b"\x04\x06\x00":  # bgzip's extra field, 6 bytes
            out.append(fixed[:3] + b"\x04" + fixed[4:10] + b"\x06\x00" + fixed[12:])
    return out


def decodes(data: bytes, kind: str) -> bool:
    """Whether the member (frame) ``data`` starts with decompresses its first bytes without an error
    (a gzip member: and gives a byte or ends, which one whose header claims more bytes than follow does not)."""
    import zstandard

    try:
        if kind == "gzip":
            dec = zlib.decompressobj(31)
            return bool(dec.decompress(data, 1 << 18)) or dec.eof
        else:
            zstandard.ZstdDecompressor().stream_reader(io.BytesIO(data)).read(1 << 18)
    except (zlib.error, zstandard.ZstdError):
        return False
    return True


def _at(path: Path, offset: int) -> bytes:
    with open(path, "rb") as fh:
        fh.seek(offset)
        return fh.read(PROBE)


def damaged_head(path: Path, kind: str, offset: int, accept: Callable[[bytes], bool]) -> bool:
    """Whether a member (frame) whose header is damaged starts at ``offset``: the bytes there pass
    ``accept`` once their header is restored."""
    data = _at(path, offset)
    return bool(near_heads(data[: len(UNIT_HEADS[kind])], kind)) and any(accept(d) for d in restored(data, kind))


def head_kind(path: Path) -> str | None:
    """``gzip`` or ``zstd`` for a file whose first member (frame) has a damaged header; None for any other file."""
    with open(path, "rb") as fh:
        head = fh.read(4)
    near = [k for k, h in UNIT_HEADS.items() if near_heads(head[: len(h)], k)]  # a text file's first bytes never are
    return next((k for k in near if damaged_head(path, k, 0, lambda d, k=k: decodes(d, k))), None)


def next_start(path: Path, kind: str, after: int, accept: Callable[[bytes], bool]) -> tuple[int, bool] | None:
    """``(offset, sound)`` of the first member (frame) after byte ``after``: sound when its bytes pass
    ``accept``, not sound when they pass it only with the header restored (:func:`restored`); None
    when no member is left in the file."""
    head = UNIT_HEADS[kind]
    with open(path, "rb") as fh:
        pos = after + 1
        while True:
            fh.seek(pos)
            block = fh.read(_SCAN + len(head) - 1)
            if len(block) < len(head):
                return None
            for at in near_heads(block, kind):
                if at >= _SCAN:
                    break
                data = _at(path, pos + at)
                if data.startswith(head) and accept(data):
                    return pos + at, True
                if any(accept(d) for d in restored(data, kind)):
                    return pos + at, False
            pos += _SCAN
