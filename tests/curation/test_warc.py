"""WARC/WET reading: every response is a document or a ledger row with its reason; charsets decoded."""

from __future__ import annotations

import gzip
import io
import json
from pathlib import Path

import pytest

from curation.ingest.warc import crawl_frame, decode_html, iter_warc, read_html_file
from curation.schema import DropReason

PAGE = "<html><head><title>t</title></head><body><article><p>{}</p></article></body></html>"


def write_warc(path: Path, records: list[dict], gzip_it: bool = True) -> None:
    """Write ``records`` (kind, url, body, http headers, status, warc headers) with warcio."""
    from warcio.statusandheaders import StatusAndHeaders
    from warcio.warcwriter import WARCWriter

    with open(path, "wb") as fh:
        writer = WARCWriter(fh, gzip=gzip_it)
        for r in records:
            http = StatusAndHeaders(r.get("status", "200 OK"), r.get("http", []), protocol="HTTP/1.1") if r.get("kind", "response") == "response" else None
            rec = writer.create_warc_record(r["url"], r.get("kind", "response"), payload=io.BytesIO(r["body"]), http_headers=http,
                                            warc_headers_dict=r.get("warc", {}), warc_content_type=r.get("ctype"))
            writer.write_record(rec)


@pytest.fixture()
def crawl(tmp_path: Path) -> Path:
    zh = PAGE.format("中文页面的正文内容，足够长。" * 5)
    records = [
        {"url": "https://a.example/1", "body": PAGE.format("hello world " * 30).encode(), "http": [("Content-Type", "text/html; charset=utf-8")]},
        {"url": "https://a.example/1", "kind": "request", "body": b"GET /1 HTTP/1.1\r\n\r\n", "ctype": "application/http; msgtype=request"},
        {"url": "https://a.example/gbk", "body": zh.replace("<head>", '<head><meta charset="gb2312">').encode("gbk"), "http": [("Content-Type", "text/html")]},
        {"url": "https://a.example/latin", "body": PAGE.format("café crème " * 20).encode("latin-1"), "http": [("Content-Type", "text/html; charset=iso-8859-1")]},
        {"url": "https://a.example/missing", "body": b"not here", "http": [("Content-Type", "text/html")], "status": "404 Not Found"},
        {"url": "https://a.example/style.css", "body": b"body { color: red }", "http": [("Content-Type", "text/css")]},
        {"url": "https://a.example/x.png", "body": b"\x89PNG\r\n\x1a\n\x00\x00", "http": [("Content-Type", "image/png")]},
        {"url": "https://a.example/cut", "body": PAGE.format("cut " * 10).encode(), "http": [("Content-Type", "text/html")], "warc": {"WARC-Truncated": "length"}},
        {"url": "https://a.example/big", "body": PAGE.format("x" * 5000).encode(), "http": [("Content-Type", "text/html")]},
    ]
    path = tmp_path / "c.warc.gz"
    write_warc(path, records)
    return path


def test_every_response_is_a_page_or_a_reason(crawl: Path) -> None:
    rows = list(iter_warc(crawl, max_bytes=4000))
    by_url = {r["url"]: r for r in rows}
    assert len(rows) == 8  # the request record is not a document
    assert by_url["https://a.example/1"]["html"].count("hello world") == 30
    assert by_url["https://a.example/gbk"]["charset"] == "gbk" and "中文页面" in by_url["https://a.example/gbk"]["html"]
    assert "café" in by_url["https://a.example/latin"]["html"]
    reasons = {u: r["error"][0] for u, r in by_url.items() if "error" in r}
    assert reasons == {
        "https://a.example/missing": DropReason.HTTP_STATUS, "https://a.example/style.css": DropReason.NOT_HTML,
        "https://a.example/x.png": DropReason.BINARY_CONTENT, "https://a.example/cut": DropReason.TRUNCATED_INPUT,
        "https://a.example/big": DropReason.TOO_LARGE,
    }
    assert by_url["https://a.example/1"]["date"] and by_url["https://a.example/1"]["content_type"] == "text/html"


def test_crawl_frame_keeps_html_apart_and_names_the_record(crawl: Path) -> None:
    df = crawl_frame(iter_warc(crawl, max_bytes=4000), None)
    kept = df[df["drop_reason"].isna()]
    assert set(kept["source"]) == {"web"} and kept["text"].isna().all() and kept["_html"].notna().all()
    assert df["doc_id"].is_unique and all(len(i) == 36 for i in df["doc_id"])  # WARC-Record-ID uuids
    bad = df[df["drop_reason"].notna()]
    assert bad["_html"].isna().all()
    detail = json.loads(bad["drop_detail"].iloc[0])
    assert detail["file"] == str(crawl) and detail["line"] >= 1 and "offset" in detail and detail["url"].startswith("https://")
    assert json.loads(kept["meta"].iloc[0])["crawl"]["status"] == 200


def test_wet_conversion_records_are_text(tmp_path: Path) -> None:
    path = tmp_path / "c.wet.gz"
    write_warc(path, [{"url": "https://b.example/", "kind": "conversion", "body": b"Plain extracted text.\nSecond line.", "ctype": "text/plain"}])
    (row,) = list(iter_warc(path, max_bytes=10_000))
    assert row["text"] == "Plain extracted text.\nSecond line." and "html" not in row


def test_a_truncated_gzip_stream_loses_only_its_tail(crawl: Path, tmp_path: Path) -> None:
    data = crawl.read_bytes()
    cut = tmp_path / "cut.warc.gz"
    cut.write_bytes(data[: len(data) // 2])
    rows = list(iter_warc(cut, max_bytes=4000))
    assert 0 < len(rows) < 8
    assert all("html" in r or "error" in r for r in rows)


def test_decode_prefers_declared_then_meta_then_utf8_then_detection() -> None:
    assert decode_html("ü".encode("latin-1"), "iso-8859-1") == ("ü", "windows-1252")  # the encoding browsers read the label as
    assert decode_html("ü".encode(), "no-such-charset") == ("ü", "utf-8")
    text, cs = decode_html("日本語のテキストです。".encode("shift_jis") * 20, None)
    assert text is not None and "日本語" in text and cs


def test_plain_html_file(tmp_path: Path) -> None:
    page = tmp_path / "p.html"
    page.write_bytes(PAGE.format("hi").encode())
    (row,) = list(read_html_file(page, 10_000))
    assert "hi" in row["html"]
    page.write_bytes(gzip.compress(b"x" * 100))
    (row,) = list(read_html_file(page, 10_000))
    assert row["error"][0] == DropReason.BINARY_CONTENT
