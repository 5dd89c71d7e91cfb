"""Per-code-point tables of the heuristics: which words hold a letter (``[^\\W\\d_]``), for a
whole list of words at once, and a text's upper-case and digit shares (:func:`char_classes`).

Each code point's answer is the one :mod:`re` (or ``str``'s case methods) gives, asked once per
process the first time the code point is met, then read for every character with numpy.

>>> words_with_alpha(["abc", "123", "_", "函数", "x1", "Ⅻ"]).tolist()
[True, False, False, True, True, True]
"""

from __future__ import annotations

import re

import numpy as np

from curation.hashing import codepoints, segment_sums

_HAS_ALPHA = re.compile(r"[^\W\d_]")


class LetterTable:
    """``[^\\W\\d_]`` matches the code point: filled in as code points are met (classifying all of
    Unicode costs ~0.3 CPU-s, paid again by every worker process, which meets a few thousand)."""

    def __init__(self) -> None:
        self.known = np.zeros(0x110000, dtype=bool)
        self.letter = np.zeros(0x110000, dtype=bool)

    def __call__(self, cp: np.ndarray) -> np.ndarray:
        if not self.known.take(cp).all():
            new = np.unique(cp[~self.known[cp]])
            chars = map(chr, new.tolist())
            self.letter[new] = np.fromiter((_HAS_ALPHA.match(c) is not None for c in chars), dtype=bool, count=len(new))
            self.known[new] = True
        return self.letter.take(cp)


_letters = LetterTable()


def words_with_alpha(words: list[str]) -> np.ndarray:
    """``re.search("[^\\W\\d_]", w) is not None`` for every word ``w``."""
    if not words:
        return np.zeros(0, dtype=bool)
    lengths = np.fromiter(map(len, words), dtype=np.int64, count=len(words))
    return segment_sums(_letters(codepoints(words, "")), lengths) > 0


def nonempty_words_with_alpha(cp: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """:func:`words_with_alpha` of non-empty words, given as their code points joined (``cp``,
    :func:`codepoints` with no separator) and the index in ``cp`` where each word starts.

    >>> nonempty_words_with_alpha(codepoints(["ab", "1", "_x"], ""), np.array([0, 2, 3])).tolist()
    [True, False, True]
    """
    if not len(starts):
        return np.zeros(0, dtype=bool)
    return np.logical_or.reduceat(_letters(cp), starts)


class _AlphaUpper:
    """(str.isalpha, str.isupper) of code points, for texts whose case mapping changes length.

    Filled in as code points are met: the whole Unicode range costs ~0.5 CPU-s to classify, paid
    again by every worker process of a cluster run (benchmarks/recipe), while a process meets a
    few thousand distinct code points. The answers are ``str.isalpha``/``str.isupper`` either way.
    """

    def __init__(self) -> None:
        self.known = np.zeros(0x110000, dtype=bool)
        self.alpha = np.zeros(0x110000, dtype=bool)
        self.upper = np.zeros(0x110000, dtype=bool)

    def __call__(self, cp: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        new = np.unique(cp[~self.known[cp]])
        if len(new):
            chars = "".join(map(chr, new.tolist()))
            self.alpha[new] = np.fromiter(map(str.isalpha, chars), dtype=bool, count=len(new))
            self.upper[new] = np.fromiter(map(str.isupper, chars), dtype=bool, count=len(new))
            self.known[new] = True
        return self.alpha[cp], self.upper[cp]


_alpha_upper = _AlphaUpper()


#: Bits of :class:`_CaseBits`.
_LOWERS, _CASED, _RESIZES, _DIGIT, _KNOWN = 1, 2, 4, 8, 16


class _CaseBits:
    """Per code point ``c``: ``c.lower() != c`` (_LOWERS), ``c.lower() != c.upper()`` (_CASED),
    ``c.lower()`` or ``c.upper()`` is not one character (_RESIZES), an ASCII digit (_DIGIT), and
    _KNOWN once filled in (as code points are met).

    In a text none of whose characters resizes, ``text.lower()`` and ``text.upper()`` are these
    per-character mappings position by position, but for the capital sigma, which lowers to σ or ς
    by context: both differ from Σ, so the bits hold for it too.
    """

    def __init__(self) -> None:
        self.bits = np.zeros(0x110000, dtype=np.uint8)

    def counts(self, cp: np.ndarray) -> list[int]:
        """How many of ``cp`` have each of the 32 bit combinations."""
        n = np.bincount(self.bits.take(cp), minlength=32)
        if n[0]:
            new = np.unique(cp[self.bits[cp] == 0])
            self.bits[new] = [_case_bits(chr(c)) for c in new.tolist()]
            n = np.bincount(self.bits.take(cp), minlength=32)
        return n.tolist()


def _case_bits(c: str) -> int:
    low, up = c.lower(), c.upper()
    return ((low != c) * _LOWERS | (low != up) * _CASED | (len(low) != 1 or len(up) != 1) * _RESIZES
            | ("0" <= c <= "9") * _DIGIT | _KNOWN)


_case_bits_of = _CaseBits()
#: The bit combinations that have each bit.
_WITH = {bit: [k for k in range(32) if k & bit] for bit in (_LOWERS, _CASED, _RESIZES, _DIGIT)}


def char_classes(text: str) -> tuple[float, float]:
    """(upper-case share of cased letters, ASCII-digit share of characters): the characters
    ``text.lower()`` changes over those where it differs from ``text.upper()``, counted from
    per-code-point bits; ``str.isupper`` over ``str.isalpha`` where a character changes length."""
    if not text:
        return 0.0, 0.0
    cp = codepoints([text], "")
    n = _case_bits_of.counts(cp)
    digits = float(sum(map(n.__getitem__, _WITH[_DIGIT]))) / len(cp)
    if any(map(n.__getitem__, _WITH[_RESIZES])):  # a few letters change length when cased
        is_alpha, is_upper = _alpha_upper(cp)
        return int(np.count_nonzero(is_upper)) / max(int(np.count_nonzero(is_alpha)), 1), digits
    upper, cased = sum(map(n.__getitem__, _WITH[_LOWERS])), sum(map(n.__getitem__, _WITH[_CASED]))
    return float(upper) / max(cased, 1), digits
