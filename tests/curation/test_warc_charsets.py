"""Charset labels read as browsers read them, and a UTF-8 payload under a single-byte label read
as UTF-8: no C1 control characters, no lost Japanese pages, no mojibake in the training text."""

from __future__ import annotations

import json
from pathlib import Path

from curation.ingest.warc import crawl_frame, decode_html, iter_warc
from tests.curation.test_warc_damaged import write


def rec(tag: str, body: bytes, content_type: bytes) -> bytes:
    http = b"HTTP/1.1 200 OK\r\nContent-Type: " + content_type + b"\r\n\r\n" + body
    return (f"WARC/1.1\r\nWARC-Type: response\r\nWARC-Record-ID: <urn:uuid:00000000-0000-0000-0000-{int(tag):012d}>\r\n"
            f"WARC-Target-URI: http://c.example/{tag}\r\nContent-Type: application/http; msgtype=response\r\n"
            f"Content-Length: {len(http)}\r\n\r\n").encode() + http + b"\r\n\r\n"


def html(body: str) -> str:
    return f"<html><body><article><p>{body}</p></article></body></html>"


def read(tmp_path: Path, pages: list[tuple[bytes, str]]) -> list[dict]:
    """Each ``(payload, Content-Type charset parameter)`` as a record, read back."""
    recs = [rec(str(i), body, content_type=f"text/html{cs}".encode()) for i, (body, cs) in enumerate(pages)]
    return list(iter_warc(write(tmp_path / "c.warc.gz", recs), 1 << 20))


def test_latin1_labels_read_windows_1252(tmp_path: Path) -> None:
    text = "\u201cIt\u2019s a caf\u00e9 \u2013 na\u00efve\u201d"
    for label in ("; charset=ISO-8859-1", "; charset=latin1", "; charset=us-ascii"):
        row = read(tmp_path, [(html(text).encode("cp1252"), label)])[0]
        assert text in row["html"] and row["charset"] == "windows-1252", label
        assert not any("\x80" <= ch <= "\x9f" for ch in row["html"])


def test_cjk_labels_read_their_vendor_supersets() -> None:
    cases = [("Shift_JIS", "cp932", "①㈱～の会社", "shift_jis"), ("gb2312", "gb18030", "中文页面，镕", "gbk"),
             ("big5", "big5hkscs", "香港字𨋢", "big5"), ("euc-kr", "cp949", "한국어 똠방각하", "euc-kr")]
    for label, codec, text, name in cases:
        payload = html(text).encode(codec)
        assert decode_html(payload, label) == (html(text), name), label
        assert decode_html(f'<meta charset="{label}">'.encode() + payload, None)[1] == name, label


def test_a_quoted_label_is_stored_without_its_quotes(tmp_path: Path) -> None:
    rows = read(tmp_path, [(html("plain words here").encode(), '; CHARSET="UTF-8"')])
    assert rows[0]["charset"] == "utf-8"
    assert json.loads(crawl_frame(iter(rows), None)["meta"].iloc[0])["crawl"]["charset"] == "utf-8"


def test_a_utf8_page_labelled_latin1_reads_utf8_and_says_so(tmp_path: Path) -> None:
    ja, ru = html("子どもの頃の話"), html("53-летняя женщина")
    rows = read(tmp_path, [(ja.encode(), "; charset=ISO-8859-1"), (ru.encode(), "; charset=windows-1252")])
    assert [(r["html"], r["charset"]) for r in rows] == [(ja, "utf-8"), (ru, "utf-8")]


def test_single_byte_and_cjk_pages_that_are_not_utf8_keep_their_charset(tmp_path: Path) -> None:
    ru, zh, ascii_page = html("53-летняя женщина"), html("中文页面的正文内容"), html("only ascii")
    rows = read(tmp_path, [(ru.encode("cp1251"), "; charset=windows-1251"), (zh.encode("gbk"), "; charset=gbk"),
                           (ascii_page.encode(), "; charset=iso-8859-1")])
    assert [(r["html"], r["charset"]) for r in rows] == [(ru, "windows-1251"), (zh, "gbk"), (ascii_page, "windows-1252")]
