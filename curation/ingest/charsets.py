"""Charset labels read as browsers read them (WHATWG Encoding Standard), and a UTF-8 payload
recognised under a single-byte label.

A page labelled ``iso-8859-1`` is nearly always windows-1252 (smart quotes, en dash): decoded as
Latin-1 its text keeps C1 control characters. ``shift_jis``, ``gb2312``, ``big5`` and ``euc-kr``
pages use their vendors' supersets (①, ㈱, GBK-only characters), which the strict codecs refuse.
A single-byte label on a payload that is valid UTF-8 with multi-byte sequences is a server default
left unchanged (``charset=ISO-8859-1`` on a UTF-8 page): read as labelled it is mojibake, while a
real windows-1252 text that happens to be valid UTF-8 with non-ASCII bytes is vanishingly rare.

>>> charset_label(' "ISO-8859-1" '), charset_label("GB2312"), charset_label("utf-8"), charset_label("''")
('windows-1252', 'gbk', 'utf-8', None)
>>> charset_label("iso8859-2"), charset_label("cp1250"), charset_label("iso8859_9"), charset_label("utf_8")
('iso-8859-2', 'windows-1250', 'windows-1254', 'utf-8')
>>> codec("windows-1252"), codec("shift_jis"), codec("gbk"), codec("utf-8")
('cp1252', 'cp932', 'gb18030', 'utf-8')
>>> prefer_utf8("cp1252", "Café".encode()), prefer_utf8("cp1252", "Caf\\xe9".encode("cp1252")), prefer_utf8("cp932", "①".encode())
('utf-8', 'cp1252', 'cp932')

The same default on a page of another single-byte script (``charset=ISO-8859-1`` on a Russian page in
windows-1251, or a Chinese one in GBK) reads as Latin letters with accents, word after word
(``Çàãîëîâîê``), which no Latin-script language writes: such a page is read in the charset detection
finds instead (:func:`relabel`), as it would be with no label.

>>> ru = ("<p>" + "Сегодня в Москве прошла конференция разработчиков. " * 3 + "</p>").encode("cp1251")
>>> relabel("windows-1252", ru), relabel("windows-1252", "<p>L'été à Noël, où êtes-vous ?</p>".encode("cp1252"))
('windows-1251', 'windows-1252')
"""

from __future__ import annotations

import codecs
import functools
import re

#: label → WHATWG's encoding name, for the labels whose name differs (WHATWG's label table)
_NAMES = {
    **dict.fromkeys(("iso-8859-1", "iso8859-1", "iso_8859-1", "iso88591", "latin1", "latin-1", "l1", "ascii", "us-ascii",
                     "ansi_x3.4-1968", "cp819", "ibm819", "iso-ir-100", "csisolatin1", "x-cp1252", "cp1252"), "windows-1252"),
    **dict.fromkeys(("iso-8859-9", "iso8859-9", "iso_8859-9", "latin5", "l5", "iso-ir-148", "csisolatin5", "cp1254"), "windows-1254"),
    **dict.fromkeys(("iso-8859-11", "iso8859-11", "tis-620", "dos-874", "cp874"), "windows-874"),
    **dict.fromkeys(("shift-jis", "sjis", "x-sjis", "ms_kanji", "ms932", "cp932", "csshiftjis", "windows-31j"), "shift_jis"),
    **dict.fromkeys(("gb2312", "x-gbk", "cp936", "chinese", "csgb2312", "gb_2312", "gb_2312-80", "iso-ir-58",
                     "csiso58gb231280"), "gbk"),
    **dict.fromkeys(("big5-hkscs", "big5hkscs", "cn-big5", "csbig5", "x-x-big5"), "big5"),
    **dict.fromkeys(("euckr", "ks_c_5601-1987", "ks_c_5601-1989", "ksc5601", "ksc_5601", "korean", "cseuckr", "iso-ir-149",
                     "windows-949", "cp949"), "euc-kr"),
}
_ISO = re.compile(r"iso[-_ ]?8859[-_ ]?(\d{1,2})")
_WINDOWS = re.compile(r"(?:cp|windows[-_]?)(125\d)")
#: WHATWG encoding name → the Python codec that decodes it as browsers do (its vendor superset)
_CODECS = {"windows-1252": "cp1252", "windows-1254": "cp1254", "windows-874": "cp874", "shift_jis": "cp932",
           "gbk": "gb18030", "big5": "big5hkscs", "euc-kr": "cp949"}


def charset_label(label: str | None) -> str | None:
    """The encoding a charset label names: whitespace and quotes dropped, lower case, WHATWG's name
    where it has another; None if empty."""
    cs = (label or "").strip().strip("\"'").strip().lower()
    cs = _NAMES.get(cs, cs)
    if m := _ISO.fullmatch(cs):  # Python's codec names (what detection returns): iso8859_2 → iso-8859-2
        cs = _NAMES.get(f"iso-8859-{m[1]}", f"iso-8859-{m[1]}")
    elif m := _WINDOWS.fullmatch(cs):
        cs = _NAMES.get(f"windows-{m[1]}", f"windows-{m[1]}")
    return {"utf8": "utf-8", "utf_8": "utf-8"}.get(cs, cs) or None


def codec(name: str) -> str:
    """The Python codec that decodes the encoding ``name`` (from :func:`charset_label`) as browsers do."""
    return _CODECS.get(name, name)


@functools.lru_cache(maxsize=256)
def single_byte(cs: str) -> bool:
    """True for a codec that reads every byte as one character (windows-125x, ISO-8859-x, KOI8…)."""
    try:
        return len(bytes(range(256)).decode(cs, "replace")) == 256
    except LookupError:
        return False


def prefer_utf8(cs: str, payload: bytes) -> str:
    """``utf-8`` instead of the single-byte ``cs`` when ``payload`` is valid UTF-8 with multi-byte sequences; else ``cs``."""
    if not single_byte(cs) or payload.isascii():
        return cs
    try:
        codecs.decode(payload, "utf-8")
    except UnicodeDecodeError:
        return cs
    return "utf-8"


#: a run of 3 or more bytes over 0x7F: accented Latin letters (and typographic signs) one after another in
#: windows-1252, which Latin-script words hardly have, and a word of Cyrillic (windows-1251) or Greek letters,
#: or of Chinese characters in GBK
_HIGH_RUN = re.compile(rb"[\x80-\xff]{3,}")
_HIGH = re.compile(rb"[\x80-\xff]")
#: the bytes of such runs a page needs, and the share of its non-ASCII bytes they hold, to be read as mislabelled
MIN_RUN_BYTES, MIN_SHARE = 48, 0.5


def relabel(name: str, payload: bytes) -> str:
    """``name``, or the charset detection finds where ``name`` is windows-1252 (what ``iso-8859-1`` and
    ``latin1`` labels name) and ``payload`` reads as word after word of accented Latin letters: at least
    :data:`MIN_RUN_BYTES` bytes in runs of 3 or more bytes over 0x7F, holding :data:`MIN_SHARE` of its
    non-ASCII bytes, and
    detection names another charset that decodes it (windows-1251, GBK …)."""
    if name != "windows-1252" or payload.isascii():
        return name
    runs = _HIGH_RUN.findall(payload)
    held = sum(map(len, runs))
    if held < MIN_RUN_BYTES or held < MIN_SHARE * len(_HIGH.findall(payload)):
        return name
    from resiliparse.parse.encoding import detect_encoding

    found = charset_label(detect_encoding(payload))
    if not found or found in (name, "utf-8"):
        return name
    try:
        payload.decode(codec(found))
    except (LookupError, UnicodeDecodeError):
        return name
    return found
