"""Which words hold a letter (``[^\\W\\d_]``), for a whole list of words at once.

Each code point's answer is the one :mod:`re` gives, asked once per process the first time the
code point is met, then read for every character of the joined words with numpy.

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
