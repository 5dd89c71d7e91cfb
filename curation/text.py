"""Text normalisation and hashing shared by the dedup stages.

>>> normalize_exact("  Hello\\u00a0 World \\n")
'Hello World'
>>> text_hash("a") == text_hash("a")
True
"""

from __future__ import annotations

import functools
import hashlib
import re
import sys
import unicodedata

import numpy as np


def normalize_exact(text: str) -> str:
    """NFKC, invisible format characters dropped, then every whitespace run folded to one space,
    then stripped (exact dedup key).

    ``str.split`` and ``re``'s ``\\s`` know the same 29 whitespace characters, so splitting and
    joining gives what ``re.sub(r"\\s+", " ", text).strip()`` gives, in half the time.

    >>> normalize_exact("co\u00adop\u200beration") == normalize_exact("cooperation")
    True
    """
    return " ".join(unicodedata.normalize("NFKC", drop_format(text)).split())


def drop_format(text: str) -> str:
    """``text`` without Unicode format characters (category Cf: soft hyphen, zero-width space and
    joiners, byte order mark, direction marks): invisible, so two copies that differ only by them
    are one text to a reader and to the dedup keys (they got through every dedup stage)."""
    if text.isascii():
        return text
    pattern = _format_pattern()
    return pattern.sub("", text) if pattern.search(text) else text  # a search is 4x cheaper than str.translate


def altered_chars(text: str) -> int:
    """How many characters of ``text`` NFKC replaces on their own or :func:`drop_format` drops: full-width
    Latin letters and digits, ligatures, zero-width spaces, soft hyphens (and CJK's full-width
    punctuation, which every copy of a Chinese text shares); a letter and a combining accent NFKC
    composes are not counted. Of two exact copies, the one with fewer is the text as its author typed it.

    >>> altered_chars("plain"), altered_chars("ｆｕｌｌ"), altered_chars("zero\u200bwidth"), altered_chars("你好，世界")
    (0, 4, 1, 1)
    """
    if text.isascii():
        return 0
    points = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    table = _altered_table()
    low = points < len(table)
    altered = int(np.count_nonzero(table[points[low]]))
    if not low.all():  # above the table only Cf tags (U+E0001, U+E0020–E007F) change
        altered += sum(1 for cp in points[~low].tolist() if unicodedata.category(chr(cp)) == "Cf")
    return altered


@functools.cache
def _altered_table() -> np.ndarray:
    """For each code point below U+30000, whether NFKC maps it to something else or it is Cf (5,029 of
    them in all; above that only Cf tags, counted one by one): 0.03 CPU-s once a process."""
    table = np.zeros(0x30000, dtype=bool)
    for cp in (*range(0x80, 0xD800), *range(0xE000, 0x30000)):
        ch = chr(cp)
        if unicodedata.category(ch) == "Cf" or unicodedata.normalize("NFKC", ch) != ch:
            table[cp] = True
    return table


@functools.cache
def _format_pattern() -> re.Pattern[str]:
    """Every Cf code point as a character class of ranges (163 points, 21 ranges)."""
    ranges: list[list[int]] = []
    for cp in (c for c in range(sys.maxunicode + 1) if unicodedata.category(chr(c)) == "Cf"):
        if ranges and ranges[-1][1] == cp - 1:
            ranges[-1][1] = cp
        else:
            ranges.append([cp, cp])
    return re.compile("[" + "".join(re.escape(chr(a)) + (f"-{re.escape(chr(b))}" if b > a else "") for a, b in ranges) + "]")


def text_hash(text: str) -> str:
    """128-bit BLAKE2b of the UTF-8 text, hex."""
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


def content_id(text: str, location: str = "") -> str:
    """A document id from its content (and, to keep exact copies distinct, its location).

    >>> len(content_id("hello", "a.jsonl:1"))
    24
    """
    h = hashlib.blake2b(digest_size=12)
    h.update(text.encode("utf-8", "surrogatepass"))
    h.update(b"\0")
    h.update(location.encode("utf-8", "surrogatepass"))
    return h.hexdigest()
