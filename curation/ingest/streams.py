"""Byte streams of input files: decompression that reports a cut instead of losing what came before it.

``gzip.open`` raises on a cut stream, and a buffered read that meets the cut loses everything it
had decompressed in that read (a file cut at 50 % gave 0 of its 87 complete lines). A
:class:`Decompressed` stream (gzip, any number of members, or zstd, any number of frames) instead
returns every byte that decompresses and then ends; ``error`` says where and why it ended early,
and ``members`` lists where each gzip member (Common Crawl writes one per WARC record) starts.
:class:`Window` is a seekable byte range of a file (a partition of a WARC file for FastWARC).

>>> import gzip, random, tempfile, pathlib
>>> p = pathlib.Path(tempfile.mkdtemp()) / "a.gz"
>>> _ = p.write_bytes(gzip.compress(random.Random(0).randbytes(10_000))[:-20])
>>> with open_input(p) as fh:
...     n = len(fh.read())
>>> n > 9900, stream_error(fh)[:22]
(True, 'compressed stream cut:')
"""

from __future__ import annotations

import io
import zlib
from pathlib import Path
from typing import Any

BOM = b"\xef\xbb\xbf"  #: the UTF-8 byte order mark some Windows tools open a text file with
MAGIC = {b"\x1f\x8b": "gzip", b"\x28\xb5\x2f\xfd": "zstd"}
#: the bytes a gzip member (deflate, the only method gzip writes) or a zstd frame starts with
UNIT_HEADS = {"gzip": b"\x1f\x8b\x08", "zstd": b"\x28\xb5\x2f\xfd"}
_READ = 1 << 16


def magic_kind(head: bytes) -> str | None:
    """``gzip``, ``zstd`` or None from a file's first 4 bytes: a zstd file may open with a skippable
    frame (``5? 2a 4d 18``: pzstd, seekable-zstd writers), which a reader skips.

    >>> magic_kind(bytes([0x1F, 0x8B, 8, 0])), magic_kind(bytes([0x5A, 0x2A, 0x4D, 0x18])), magic_kind(b"{}")
    ('gzip', 'zstd', None)
    """
    return next((c for m, c in MAGIC.items() if head.startswith(m)), None) or ("zstd" if _skippable(head) else None)


def _skippable(head: bytes) -> bool:
    """A zstd skippable frame's magic number, 0x184D2A50 to 0x184D2A5F (little-endian)."""
    return len(head) >= 4 and head[0] & 0xF0 == 0x50 and head[1:4] == b"\x2a\x4d\x18"


def compression(path: Path) -> str | None:
    """``gzip``, ``zstd`` or None, from the file's first bytes (never its name), a first member (frame)
    whose header is damaged included (:func:`~curation.ingest.unit_heads.head_kind`)."""
    with open(path, "rb") as fh:
        head = fh.read(4)
    if (kind := magic_kind(head)) is not None:
        return kind
    from curation.ingest.unit_heads import head_kind  # it reads this module's magic numbers

    return head_kind(path)


def open_input(path: Path, start: tuple[int, int] | None = None, padding: bool = True) -> io.BufferedReader:
    """The file's bytes, decompressed by their magic number (gzip, zstd) whatever its name; ``start``:
    the (compressed, decompressed) offset of a member (frame) to begin at, ``padding``: whether zero
    bytes between two members are skipped (:class:`Decompressed`)."""
    kind = compression(path)
    if kind is None:
        return open(path, "rb")
    return io.BufferedReader(Decompressed(path, kind, start or (0, 0), padding), buffer_size=_READ)


def stream_error(fh: Any) -> str | None:
    """Why the decompressed stream ``fh`` (from :func:`open_input`) ended early; None if it did not."""
    return getattr(getattr(fh, "raw", None), "error", None)


class Decompressed(io.RawIOBase):
    """A gzip or zstd file's decompressed bytes; a cut or corrupt stream ends (``error`` set) instead of raising."""

    def __init__(self, path: Path, kind: str, start: tuple[int, int] = (0, 0), padding: bool = True) -> None:
        """``start``: the (compressed, decompressed) offset of the member to begin at (a reader that
        goes on past a damaged stretch); offsets are counted from the file's start either way.
        ``padding``: zero bytes between two members are skipped, as after the last; False: they stop
        the stream as bytes that are not this kind's (``padded_to``: the member after them), for a
        planning pass whose reader does not read past them (FastWARC)."""
        self.padding = padding
        self.padded_to: int | None = None  # the member after the zero bytes that stopped the stream (padding False)
        self._raw = open(path, "rb")  # noqa: SIM115 -- closed by close()
        self._raw.seek(start[0])
        self.kind = kind
        self._dec: Any = None
        self._input = b""  # compressed bytes read and not yet decompressed
        self._read = start[0]  # compressed bytes read from the file
        self._out = memoryview(b"")  # decompressed bytes not yet returned
        self.pos = 0  # decompressed bytes returned
        self.error: str | None = None
        self.members: list[tuple[int, int]] = []  # (compressed, decompressed) offset of each member / frame start
        self._made = start[1]  # decompressed bytes produced
        self._junk = 0  # the compressed byte where bytes that are not this kind's begin (once ``error`` says so)
        self.corrupt = False  # the error is data that failed to decompress or its check (not a cut, not junk after a member)

    @property
    def unit(self) -> str:
        """What one piece of this kind's stream is called: gzip's member, zstd's frame."""
        return "member" if self.kind == "gzip" else "frame"

    @property
    def made(self) -> int:
        """Decompressed bytes produced so far (some may still be buffered by a reader)."""
        return self._made

    @property
    def junk_at(self) -> int | None:
        """The compressed byte where data that is not this kind's began, if the stream stopped there."""
        return self._junk if (self.error or "").startswith(f"not {self.kind} data") else None

    def readable(self) -> bool:
        return True

    def close(self) -> None:
        self._raw.close()
        super().close()

    def readinto(self, buf: Any) -> int:
        while not self._out:
            if not self._fill():
                return 0
        n = min(len(buf), len(self._out))
        buf[:n] = self._out[:n]
        self._out = self._out[n:]
        self.pos += n
        return n

    def _more(self) -> bool:
        chunk = self._raw.read(_READ)
        self._read += len(chunk)
        self._input += chunk
        return bool(chunk)

    def _next_member(self) -> bool:
        """Start the next member / frame, past gzip's zero padding and zstd's skippable frames; False at
        the end of the stream, or (``error`` set) at bytes that are not this kind's."""
        while True:
            padded = self._read - len(self._input)  # where zero padding (or the bytes after a member) starts
            while not self._input.lstrip(b"\x00"):
                self._input = b""
                if not self._more():
                    return False
            self._input = self._input.lstrip(b"\x00")
            while len(self._input) < 8 and self._more():
                pass
            start = self._read - len(self._input)
            if not (self.kind == "zstd" and _skippable(self._input)):
                break
            need = 8 + int.from_bytes(self._input[4:8], "little")  # magic, size, payload: never decompressed
            while need > len(self._input):
                need -= len(self._input)
                self._input = b""
                if not self._more():
                    self.error = (f"compressed stream cut: the zstd skippable frame at compressed byte {start} ends at byte "
                                  f"{self._read} before its end (after {self._made} decompressed bytes)")
                    return False
            self._input = self._input[need:]
        zeros = not self.padding and start > padded and magic_kind(self._input[:4]) == self.kind
        if magic_kind(self._input[:4]) != self.kind or _skippable(self._input) or zeros:
            # zero bytes are padding only before a member: before other bytes they start the damaged stretch
            # (a member whose first byte is 0x00 among them), which is said from the first of them
            self._junk, self.padded_to = padded, start if zeros else None
            self.error = f"not {self.kind} data at compressed byte {self._junk} (after {self._made} decompressed bytes)"
            return False
        self.members.append((start, self._made))
        if self.kind == "gzip":
            self._dec = zlib.decompressobj(31)
        else:
            import zstandard

            self._dec = zstandard.ZstdDecompressor().decompressobj()
        return True

    def _fill(self) -> bool:
        """Decompress some more into ``_out``; False at the end of the stream (clean or not)."""
        if self.error is not None:
            return False
        if self._dec is None and not self._next_member():
            return False
        if not self._input and not self._more():
            start = self.members[-1][0]
            self.error = (f"compressed stream cut: the {self.kind} {self.unit} at compressed byte {start} ends at byte "
                          f"{self._read} before its end (after {self._made} decompressed bytes)")
            return False
        try:
            out = self._dec.decompress(self._input, _READ) if self.kind == "gzip" else self._dec.decompress(self._input)
        except Exception as exc:  # zlib.error / ZstdError: corrupt data (a cut stream never raises)
            self.error = f"corrupt {self.kind} data after {self._made} decompressed bytes ({exc})"
            self.corrupt = True
            return False
        if self._dec.eof:
            self._input = self._dec.unused_data
            self._dec = None
        else:
            self._input = self._dec.unconsumed_tail if self.kind == "gzip" else b""
        self._made += len(out)
        self._out = memoryview(out)
        return True


class Window(io.RawIOBase):
    """Bytes ``[start, end)`` of a file as a seekable stream whose offset 0 is ``start``."""

    def __init__(self, path: Path, start: int, end: int) -> None:
        self._f = open(path, "rb")  # noqa: SIM115 -- closed by close()
        self._start, self._end = start, end
        self._f.seek(start)

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._f.tell() - self._start

    def seek(self, offset: int, whence: int = 0) -> int:
        base = {0: self._start, 1: self._f.tell(), 2: self._end}[whence]
        self._f.seek(min(max(base + offset, self._start), self._end))
        return self.tell()

    def readinto(self, buf: Any) -> int:
        n = min(len(buf), self._end - self._f.tell())
        if n <= 0:
            return 0
        data = self._f.read(n)
        buf[: len(data)] = data
        return len(data)

    def close(self) -> None:
        self._f.close()
        super().close()
