"""A crawled page's HTTP ``Content-Encoding`` (gzip, deflate, brotli) decoded with a size limit.

FastWARC reads records with transfer decoding only (``auto_decode="transfer"``): its full decoding
stops the whole file's iteration after a gzip body sent chunked, and it decodes a body whole, so a
2.7 KB gzip bomb grew to 600 MB in memory. Here a body is decoded to at most ``limit + 1`` bytes
(``too_large`` past ``limit``); a gzip or zlib stream that ends early is ``truncated_input``; a body
labelled gzip or deflate that is neither (raw deflate, or plain bytes) is read as what it is.

>>> import gzip, zlib
>>> decode_content(gzip.compress(b"<p>hi</p>"), "gzip", 100)
(b'<p>hi</p>', None)
>>> decode_content(b"<p>plain</p>", "gzip", 100)
(b'<p>plain</p>', None)
>>> decode_content(gzip.compress(b"a" * 1000), "gzip", 100)[1][0].value
'too_large'
"""

from __future__ import annotations

import zlib

from curation.schema import DropReason

Error = tuple[DropReason, str]
_GZIP, _ZLIB, _RAW = 31, 15, -15  # zlib window bits: gzip header, zlib header, raw deflate


def decode_content(raw: bytes, encoding: str | None, limit: int) -> tuple[bytes | None, Error | None]:
    """``(body, None)`` decoded from each listed coding in turn, or ``(None, (reason, detail))``."""
    codings = [c.strip().lower() for c in (encoding or "").split(",")]
    data = raw
    for coding in reversed([c for c in codings if c and c != "identity"]):
        if coding in ("gzip", "x-gzip", "deflate"):
            out, err = _inflate(data, limit, coding)
        elif coding == "br":
            out, err = _brotli(data, limit)
        else:
            return None, (DropReason.UNDECODABLE, f"Content-Encoding {coding!r} is not supported")
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
