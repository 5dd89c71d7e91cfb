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
