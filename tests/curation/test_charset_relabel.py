"""A page labelled with a Latin default charset (``iso-8859-1``) whose bytes are another script's
(Russian in windows-1251, Chinese in GBK) is read in the charset detection finds, not as accented
Latin mojibake; a real Latin page under that label is read as labelled."""

from __future__ import annotations

import gzip
import json
import os
from pathlib import Path

import pytest

from curation.ingest.charsets import relabel
from curation.ingest.warc import decode_html, iter_warc
from tests.curation.test_warc import write_warc

SHARED = Path(os.environ.get("CURATION_SHARED_DATA", Path(__file__).resolve().parents[3] / "shared" / "data"))
RU = "Сегодня в Москве прошла конференция разработчиков программного обеспечения, и её участники обсудили новые версии. "
ZH = "今天在北京举行了软件开发者大会，与会者讨论了新版本的编译器和数据库的性能问题。"
LATIN = {
    "fr": "L'été dernier, nous sommes allés voir la crème brûlée de Noël à Besançon. Où êtes-vous allés ? ",
    "de": "Über die Straße gehen Müller und Jäger täglich früh zur Bäckerei; „Grüß Gott“, sagen sie. ",
    "es": "El niño español comió piñas y jamón en la montaña; ¿dónde está el baño? ¡Qué día! ",
    "pt": "A população da região não esqueceu a tradição: ações, canções e orações à noite. ",
    "is": "Þjóðin býr á Íslandi og talar íslensku; þau fóru í ferðalag til Akureyrar í sumar. ",
}


def page(text: str, n: int = 10) -> str:
    return f"<html><head><title>t</title></head><body><article><p>{text * n}</p></article></body></html>"


@pytest.mark.parametrize(("text", "encoding", "found"), [(RU, "cp1251", "windows-1251"), (RU, "koi8-r", "koi8-r"),
                                                        (ZH, "gbk", "gb18030")], ids=["windows-1251", "koi8-r", "gbk"])
def test_a_page_of_another_script_under_a_latin_label_is_read_in_its_own_charset(text, encoding, found):
    html = page(text)
    decoded, charset = decode_html(html.encode(encoding), "iso-8859-1")
    assert charset == found and decoded == html


@pytest.mark.parametrize("lang", sorted(LATIN))
def test_a_latin_page_under_a_latin_label_is_read_as_labelled(lang):
    html = page(LATIN[lang], 40)
    assert relabel("windows-1252", html.encode("cp1252")) == "windows-1252"
    assert decode_html(html.encode("cp1252"), "iso-8859-1") == (html, "windows-1252")


def test_a_label_other_than_the_latin_default_is_kept():
    """Only the Latin default is doubted: a page labelled windows-1251 is read so, as browsers do."""
    html = page(RU)
    assert relabel("windows-1251", html.encode("cp1251")) == "windows-1251"
    assert relabel("iso-8859-2", html.encode("cp1251")) == "iso-8859-2"


def test_a_warc_response_labelled_latin1_with_a_russian_body_is_kept_in_cyrillic(tmp_path):
    html = page(RU)
    path = tmp_path / "ru.warc.gz"
    write_warc(path, [{"url": "http://ru.example/news", "body": html.encode("cp1251"),
                       "http": [("Content-Type", "text/html; charset=iso-8859-1")]}])
    [row] = list(iter_warc(path, max_bytes=1 << 20))
    assert "error" not in row and RU in row["html"] and row["charset"] == "windows-1251"


@pytest.mark.skipif(not (SHARED / "web" / "web_docs.parquet").exists(), reason="needs the shared data (CURATION_SHARED_DATA)")
def test_real_latin_pages_stay_and_real_chinese_notes_are_found():
    import pandas as pd

    pages = pd.read_parquet(SHARED / "web" / "web_docs.parquet", columns=["html"])["html"].dropna()
    latin = []
    for h in pages:
        try:
            b = h.encode("cp1252")
        except UnicodeEncodeError:
            continue
        if not b.isascii() and "xinhuanet" not in h[:3000]:  # one page there is GBK mojibake already
            latin.append(b)
    assert len(latin) > 500
    assert [relabel("windows-1252", b) for b in latin].count("windows-1252") == len(latin)
    notes = []
    with gzip.open(SHARED / "zh" / "zh_tech_notes.jsonl.gz", "rt") as fh:
        for line in fh:
            text = json.loads(line).get("text") or ""
            if len(text) > 500:
                notes.append(text)
            if len(notes) == 50:
                break
    found = [decode_html(page(t, 1).encode("gbk", "ignore"), "iso-8859-1")[1] for t in notes]
    assert len(found) >= 30 and found.count("gb18030") >= len(found) - 2, [(f, t[:40]) for f, t in zip(found, notes, strict=True) if f != "gb18030"]
