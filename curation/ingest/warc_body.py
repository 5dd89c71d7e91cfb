"""A crawled page's HTTP body decoded: ``Transfer-Encoding: chunked``, then its ``Content-Encoding``
(gzip, deflate, brotli) with a size limit.

FastWARC reads records undecoded (``auto_decode="none"``): its decoding raises on one bad body, and
the whole file's iteration ends there (a chunked gzip body, a body labelled chunked that is not, a
chunk cut short), and it decodes a body whole, so a 2.7 KB gzip bomb grew to 600 MB in memory. Here
each record's body is decoded on its own. A chunked body goes through FastWARC's ``ChunkedReader``;
where that fails, :func:`dechunk` says why: a body that does not open with a chunk header is taken as
it is (a crawler that de-chunked the body and kept the header), one cut inside a chunk is
``truncated_input``, one whose chunks are not followed by a chunk header is ``undecodable``.
A coding listed before ``chunked`` in ``Transfer-Encoding`` (``gzip, chunked``) is decoded after it,
as a content coding is (one no decoder here knows leaves the body as it is). A content-encoded body
is decoded to at most ``limit + 1`` bytes (``too_large`` past ``limit``); a gzip or zlib stream that ends early is ``truncated_input``; a body
labelled gzip or deflate that is neither (raw deflate, or plain bytes) is read as what it is.

>>> import gzip, zlib
>>> decode_content(gzip.compress(b"<p>hi</p>"), "gzip", 100)
(b'<p>hi</p>', None)
>>> decode_content(b"<p>plain</p>", "gzip", 100)
(b'<p>plain</p>', None)
>>> decode_content(gzip.compress(b"a" * 1000), "gzip", 100)[1][0].value
'too_large'
>>> dechunk(b"5\\r\\nhello\\r\\n0\\r\\n\\r\\n"), dechunk(b"<p>de-chunked</p>")
((b'hello', None), (b'<p>de-chunked</p>', None))
>>> z = gzip.compress(b"<p>hi</p>")
>>> decode_transfer(b"%x\\r\\n" % len(z) + z + b"\\r\\n0\\r\\n\\r\\n", "gzip, chunked", 100)
(b'<p>hi</p>', None)
>>> dechunk(b"a\\r\\nhello")[1][0].value
'truncated_input'
"""

from __future__ import annotations

import io
import re
import zlib

from curation.schema import DropReason

Error = tuple[DropReason, str]
_GZIP, _ZLIB, _RAW = 31, 15, -15  # zlib window bits: gzip header, zlib header, raw deflate
_CODINGS = {"gzip", "x-gzip", "deflate", "br"}  # the codings decode_content decodes
_CHUNK_HEAD = re.compile(rb"([0-9A-Fa-f]{1,16})[ \t]*(?:;[^\r\n]*)?\r?\n")  # a size, extensions, the line end


def dechunk(raw: bytes) -> tuple[bytes | None, Error | None]:
    """``(body, None)`` of a body sent ``Transfer-Encoding: chunked``, or ``(None, (reason, detail))``."""
    from fastwarc.stream_io import ChunkedReader

    try:
        return ChunkedReader(io.BytesIO(raw)).read(), None  # in C; the loop below runs only where it fails
    except OSError as exc:
        said = str(exc)[:80]
    if _CHUNK_HEAD.match(raw) is None:
        return raw, None  # no chunk header at all: de-chunked by the crawler, the header kept
    out, pos = [], 0
    while (m := _CHUNK_HEAD.match(raw, pos)) is not None:
        size, start = int(m.group(1), 16), m.end()
        if size == 0:
            return b"".join(out), None
        if len(raw) - start < size:
            return None, (DropReason.TRUNCATED_INPUT, f"chunked body ends early: the chunk at byte {pos} says {size} bytes, "
                          f"{len(raw) - start} follow")
        out.append(raw[start:start + size])
        pos = start + size + (2 if raw.startswith(b"\r\n", start + size) else raw.startswith(b"\n", start + size))
    if pos >= len(raw):  # ends after a whole chunk, without the last (empty) one, as FastWARC reads it too
        return b"".join(out), None
    if len(raw) - pos <= 18 and (m := _CHUNK_HEAD.match(raw[pos:] + b"\n")) is not None:  # it ends in a chunk header
        if int(m.group(1), 16) == 0:  # the last chunk's, cut in its line end
            return b"".join(out), None
        return None, (DropReason.TRUNCATED_INPUT, f"chunked body ends early, inside the chunk header at byte {pos}")
    return None, (DropReason.UNDECODABLE, f"chunked body: no chunk header at byte {pos} ({raw[pos:pos + 20]!r}; FastWARC: {said})")


def decode_transfer(raw: bytes, encoding: str, limit: int) -> tuple[bytes | None, Error | None]:
    """``(body, None)`` of a body sent with a ``Transfer-Encoding``: ``chunked`` (:func:`dechunk`), then each
    coding listed before it (``gzip, chunked``) from the last, as :func:`decode_content` decodes them."""
    codings = [c.strip().lower() for c in encoding.split(",")]
    data, err = dechunk(raw) if "chunked" in codings else (raw, None)
    rest = [c for c in codings if c not in ("chunked", "identity", "")]
    if err is not None or not set(rest) <= _CODINGS:  # a coding no decoder knows: the body as it is (the tests after decide)
        return (None, err) if err is not None else (data, None)
    return decode_content(data, ", ".join(rest), limit, "Transfer-Encoding")


def decode_content(raw: bytes, encoding: str | None, limit: int, header: str = "Content-Encoding") -> tuple[bytes | None, Error | None]:
    """``(body, None)`` decoded from each listed coding in turn, or ``(None, (reason, detail))``."""
    codings = [c.strip().lower() for c in (encoding or "").split(",")]
    data = raw
    for coding in reversed([c for c in codings if c and c != "identity"]):
        if coding in ("gzip", "x-gzip", "deflate"):
            out, err = _inflate(data, limit, coding)
        elif coding == "br":
            out, err = _brotli(data, limit)
        else:
            return None, (DropReason.UNDECODABLE, f"{header} {coding!r} is not supported")
        if err is not None:
            return None, err
        data = out if out is not None else data
    return data, None


def _too_large(n: int, limit: int, coding: str) -> Error:
    return DropReason.TOO_LARGE, f"{coding} body decodes to over {limit} bytes (max_html_bytes), {n} bytes encoded"


def _inflate(data: bytes, limit: int, coding: str) -> tuple[bytes | None, Error | None]:
    """A gzip or zlib stream by its header (authoritative), else raw deflate if it ends cleanly, else ``data``."""
    if data[:2] == b"\x1f\x8b":
        wbits = _GZIP
    elif len(data) >= 2 and data[0] & 0x0F == 8 and ((data[0] << 8) | data[1]) % 31 == 0:
        wbits = _ZLIB
    else:
        wbits = _RAW
    d = zlib.decompressobj(wbits)
    try:
        out = d.decompress(data, limit + 1)
    except zlib.error as exc:
        if wbits == _RAW:
            return None, None  # not deflate at all: a mislabelled plain body, decoded as it is
        return None, (DropReason.UNDECODABLE, f"{coding} body does not decompress ({exc})")
    if len(out) > limit:
        return None, _too_large(len(data), limit, coding)
    if not d.eof:
        if wbits == _RAW:
            return None, None
        return None, (DropReason.TRUNCATED_INPUT, f"{coding} body ends early: {len(data)} bytes decode to {len(out)} and the stream is not finished")
    return out, None


def _brotli(data: bytes, limit: int) -> tuple[bytes | None, Error | None]:
    import brotli

    d = brotli.Decompressor()
    try:
        out = d.process(data, output_buffer_limit=limit + 1)
    except brotli.error as exc:
        return None, (DropReason.UNDECODABLE, f"br body does not decompress ({exc})")
    if len(out) > limit or not d.can_accept_more_data():
        return None, _too_large(len(data), limit, "br")
    if not d.is_finished():
        return None, (DropReason.TRUNCATED_INPUT, f"br body ends early: {len(data)} bytes decode to {len(out)}")
    return out, None
