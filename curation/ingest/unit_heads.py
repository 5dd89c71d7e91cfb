"""Where gzip members (zstd frames) start past a damaged stretch, a member whose header is damaged included.

A reader that meets a damaged stretch of a multi-member file (bgzip, ``cat a.gz b.gz``, one member
per WARC record) goes on at the next member. A member is looked for at every place where its
magic (``1f 8b 08``, ``28 b5 2f fd``) is written with at most one byte wrong; it is taken as it is
when its first bytes pass the reader's check (``accept``: they decompress, or start a WARC record),
else as a member with a **damaged header** when they pass it with the header restored (the magic,
and gzip's flags, and bgzip's extra field length, as ``gzip``, Python and bgzip write them): such a member is skipped, as a member
of its own, since the flags and checks of a damaged header cannot be trusted. The bytes inside a
member's deflate data hold such a near magic by chance: a restored header is taken only where its
other fields are what writers write (:func:`plausible`), and the search for the member after a
damaged one starts at its end where it decodes whole, its CRC checked, with its header restored
(:func:`member_end`): no member starts inside one. Files are read in 1 MiB blocks and each
candidate's first 64 KiB: memory does not follow the file's size.

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
_XFL = (0, 2, 4)  # gzip's XFL: deflate's level said (2 slowest, 4 fastest) or not
_OS = (*range(20), 255)  # gzip's OS byte: RFC 1952's 0..13, zlib's later codes up to 19 (macOS), 255 unknown
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
        out = [d for d in out if plausible(d)]
    return out


def plausible(head: bytes) -> bool:
    """Whether a (restored) gzip header's other fields are what writers write: XFL 0, 2 or 4, an OS
    byte gzip or zlib write, and with FEXTRA an extra field made of whole subfields (``SI1 SI2 LEN``
    and LEN bytes each, as bgzip's ``BC`` is). Random bytes inside deflate data pass about one time
    in 1,500 (with FEXTRA, far fewer): a near magic there is not taken for a damaged member.

    >>> import gzip
    >>> plausible(gzip.compress(b"x", mtime=0)), plausible(bytes.fromhex("1f8b08040000000000ff0600424302001b00"))
    (True, True)
    >>> plausible(bytes.fromhex("1f8b0800000000000ae1")), plausible(bytes.fromhex("1f8b08040000000000ff0700424302001b00"))
    (False, False)
    """
    if len(head) < 10 or head[8] not in _XFL or head[9] not in _OS:
        return False
    if not head[3] & 4:
        return True
    at, end = 12, 12 + int.from_bytes(head[10:12], "little")
    while at + 4 <= min(end, len(head)):
        at += 4 + int.from_bytes(head[at + 2 : at + 4], "little")
    return at == end <= len(head)


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


def member_end(path: Path, offset: int) -> int | None:
    """Where the gzip member at ``offset``, whose header is damaged, ends when it decodes whole (its CRC
    and length checked) with its header restored; None where no restored header decodes it whole.
    Decompressed 1 MiB at a time, the output dropped (bounded memory).

    >>> import gzip, tempfile
    >>> f = Path(tempfile.mkdtemp()) / "m.gz"
    >>> m = gzip.compress(b"x" * 1000, mtime=0)
    >>> _ = f.write_bytes(b"\\x1e" + m[1:] + m)
    >>> member_end(f, 0) == len(m), member_end(f, len(m))
    (True, None)
    """
    data = _at(path, offset)
    for fixed in restored(data, "gzip") if near_heads(data[:3], "gzip") else []:
        dec = zlib.decompressobj(31)
        with open(path, "rb") as fh:
            fh.seek(offset + len(fixed))
            while fixed:
                try:
                    dec.decompress(fixed, _SCAN)
                except zlib.error:
                    break
                if dec.eof:
                    return fh.tell() - len(dec.unused_data)
                fixed = dec.unconsumed_tail or fh.read(_SCAN)
    return None


def next_start(path: Path, kind: str, after: int, accept: Callable[[bytes], bool]) -> tuple[int, bool] | None:
    """``(offset, sound)`` of the first member (frame) after byte ``after``: sound when its bytes pass
    ``accept``, not sound when they pass it only with the header restored (:func:`restored`); None
    when no member is left in the file. A gzip member at ``after`` that decodes whole with its header
    restored is passed over to its end (:func:`member_end`): a near magic inside its data starts none."""
    head = UNIT_HEADS[kind]
    if kind == "gzip" and (end := member_end(path, after)) is not None:
        after = end - 1
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
