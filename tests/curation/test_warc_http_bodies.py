"""Each record's HTTP body is decoded on its own: a body labelled ``Transfer-Encoding: chunked`` that
is not chunked, or whose chunks are cut or broken, is one row, and the records after it are read.
A response record without an HTTP header block is ``undecodable`` (malformed HTTP message). A row's
``offset`` is the start of the gzip member that holds its record, however many records a member holds.

Records are written with warcio around real pages (``web/web_docs.parquet`` of the shared data, where
present; the synthetic page of ``test_warc_damaged`` where it is not).
"""

from __future__ import annotations

import functools
import gzip
import io
import os
import zlib
from pathlib import Path

import pytest

from curation.ingest.warc import iter_warc
from tests.curation.test_warc_damaged import page

SHARED = Path(os.environ.get("CURATION_SHARED_DATA", Path(__file__).resolve().parents[3] / "shared" / "data"))
WEB = SHARED / "web" / "web_docs.parquet"


@functools.cache
def real_pages() -> tuple[bytes, ...]:
    """Six real pages of 20-60 KB (UTF-8), or synthetic ones where the shared data is absent."""
    if not WEB.exists():
        return tuple(b"\n\n".join([page(f"p{i}")] * 20) for i in range(6))  # ~35 KB each
    import pandas as pd

    df = pd.read_parquet(WEB, columns=["source", "html"])
    html = df.loc[(df["source"] == "wcxb") & df["html"].str.len().between(20_000, 60_000), "html"]
    return tuple(h.encode() for h in html.head(6))


def chunk(body: bytes, size: int = 4000) -> bytes:
    return b"".join(b"%x\r\n" % len(body[i:i + size]) + body[i:i + size] + b"\r\n" for i in range(0, len(body), size)) + b"0\r\n\r\n"


def response(w, url: str, body: bytes, headers: bytes = b"Content-Type: text/html; charset=utf-8\r\n") -> None:
    """One response record, its HTTP block written as given."""
    http = b"HTTP/1.1 200 OK\r\n" + headers + b"\r\n" + body
    w.write_record(w.create_warc_record(url, "response", payload=io.BytesIO(http), length=len(http),
                                        warc_content_type="application/http; msgtype=response"))


def warc(path: Path, records: list[tuple], gz: bool = True) -> Path:
    """``records``: (url, body, headers[, status]) each; one gzip member per record (warcio's way)."""
    from warcio.warcwriter import WARCWriter

    with open(path, "wb") as fh:
        w = WARCWriter(fh, gzip=gz)
        for r in records:
            response(w, *r)
    return path


TE = b"Content-Type: text/html; charset=utf-8\r\nTransfer-Encoding: chunked\r\n"


def outcome(rows: list[dict]) -> list:
    return [r["error"][0].value if "error" in r else "html" for r in rows]


@pytest.mark.parametrize("gz", [True, False])
def test_a_body_labelled_chunked_that_is_not_is_read_as_it_is_and_the_file_read_on(tmp_path: Path, gz: bool) -> None:
    """A crawler that de-chunked the body and kept the header: FastWARC's transfer decoding ended the file there."""
    p = real_pages()
    f = warc(tmp_path / ("b.warc.gz" if gz else "b.warc"), [("http://m.example/1", p[0]), ("http://m.example/2", p[1], TE),
                                                             ("http://m.example/3", p[2]), ("http://m.example/4", p[3], TE)], gz)
    rows = list(iter_warc(f, 10_000_000))
    assert outcome(rows) == ["html"] * 4 and [r["line"] for r in rows] == [1, 2, 3, 4]
    assert rows[1]["html"] == p[1].decode() and rows[3]["html"] == p[3].decode()


def test_chunked_bodies_cut_or_broken_are_one_row_each(tmp_path: Path) -> None:
    p = real_pages()
    whole = chunk(p[1])
    at = len(b"fa0\r\n") + 4000 + 2  # where the second chunk header starts
    broken = chunk(p[3])[:at] + b"not a chunk header\r\n" + chunk(p[3])[at:]
    f = warc(tmp_path / "c.warc.gz", [("http://m.example/1", p[0]), ("http://m.example/cut", whole[:-3000], TE),
                                      ("http://m.example/ok", whole, TE), ("http://m.example/broken", broken, TE),
                                      ("http://m.example/5", p[4])])
    rows = list(iter_warc(f, 10_000_000))
    assert outcome(rows) == ["html", "truncated_input", "html", "undecodable", "html"]
    assert "chunked body ends early" in rows[1]["error"][1] and f"no chunk header at byte {at}" in rows[3]["error"][1]
    assert rows[2]["html"] == p[1].decode()  # a sound chunked body decodes as FastWARC decodes it


def test_a_response_without_an_http_header_block_is_a_malformed_http_message(tmp_path: Path) -> None:
    p = real_pages()
    f = warc(tmp_path / "n.warc.gz", [("http://m.example/2", p[1])])
    bare = (b"WARC/1.0\r\nWARC-Type: response\r\nWARC-Record-ID: <urn:uuid:0b8e2f7c-1a1e-4c57-9a43-3d2b1f0c9e11>\r\n"
            b"WARC-Target-URI: http://m.example/bare\r\nWARC-Date: 2024-01-02T03:04:05Z\r\n"
            b"Content-Type: application/http; msgtype=response\r\nContent-Length: %d\r\n\r\n%s\r\n\r\n" % (20_000, p[0][:20_000]))
    # the page alone in the record (warcio refuses to write that); FastWARC reads it as header lines
    f.write_bytes(gzip.compress(bare) + f.read_bytes())
    rows = list(iter_warc(f, 10_000_000))
    assert outcome(rows) == ["undecodable", "html"]
    assert rows[0]["error"][1].startswith("malformed HTTP message: its first line") and rows[0]["url"] == "http://m.example/bare"


def members(data: bytes) -> list[tuple[int, bytes]]:
    """(compressed start, decompressed bytes) of each gzip member."""
    out, pos = [], 0
    while pos < len(data):
        d = zlib.decompressobj(31)
        out.append((pos, d.decompress(data[pos:])))
        pos = len(data) - len(d.unused_data)
    return out


def test_offset_is_the_start_of_the_gzip_member_that_holds_the_record(tmp_path: Path) -> None:
    """One member of many records (``gzip`` of a whole WARC), then members of one record (warcio, Common
    Crawl): FastWARC's ``stream_pos`` is a read position in the first, not the member's start."""
    p = real_pages()
    many = [(f"http://b.example/{i}", p[i % 6]) for i in range(18)]  # a member of over 64 KiB, FastWARC's buffer
    one = gzip.compress(warc(tmp_path / "b.warc", many, gz=False).read_bytes())
    per_record = warc(tmp_path / "a.warc.gz", [(f"http://a.example/{i}", p[i]) for i in range(3)]).read_bytes()
    f = tmp_path / "ba.warc.gz"
    f.write_bytes(one + per_record)
    rows = list(iter_warc(f, 10_000_000))
    assert outcome(rows) == ["html"] * 21
    held = dict(members(f.read_bytes()))
    assert [r["offset"] for r in rows] == [0] * 18 + sorted(held)[1:]
    for r in rows:  # seek to the offset, decompress one member: the record is there
        assert f"WARC-Target-URI: {r['url']}".encode() in held[r["offset"]]


@pytest.mark.parametrize("gz", [True, False])
def test_transfer_codings_before_chunked_are_decoded_in_order(tmp_path: Path, gz: bool) -> None:
    """``Transfer-Encoding: gzip, chunked``: chunks first, then gzip (the order undone is the reverse of the list);
    a coding no decoder knows leaves the body as it is, and a gzip transfer coding cut short is one row."""
    p = real_pages()
    head, z4 = b"Content-Type: text/html; charset=utf-8\r\nTransfer-Encoding: %s\r\n", gzip.compress(p[4])
    f = warc(tmp_path / ("t.warc.gz" if gz else "t.warc"), [
        ("http://t.example/1", chunk(gzip.compress(p[0])), head % b"gzip, chunked"),
        ("http://t.example/2", chunk(zlib.compress(p[1])), head % b"Deflate , Chunked"),
        ("http://t.example/3", gzip.compress(p[2]), head % b"gzip"),
        ("http://t.example/4", chunk(p[3]), head % b"x-unknown, chunked"),
        ("http://t.example/5", chunk(z4[: len(z4) // 2]), head % b"gzip, chunked"),
        ("http://t.example/6", p[5])], gz)
    rows = list(iter_warc(f, 10_000_000))
    assert outcome(rows) == ["html"] * 4 + ["truncated_input", "html"]
    assert [rows[k]["html"] for k in range(4)] == [p[k].decode() for k in range(4)]
