"""Gopher repetition signals (Rae et al. 2021, table A1), vectorised over word ids.

Duplicate n-gram fractions follow the paper's definition: the share of word characters that
lie inside any word n-gram occurring more than once (first occurrences included), not
datatrove's count of later occurrences only.

>>> r = repetition_signals("a b\\na b\\nc d")
>>> r["dup_line_frac"], round(r["dup_line_char_frac"], 3)
(0.3333333333333333, 0.273)
"""

from __future__ import annotations

import re
from typing import NamedTuple

import numpy as np
import pandas as pd

_PARA = re.compile(r"\n\s*\n")
_U64 = np.uint64
_BASE = _U64(0x9E3779B97F4A7C15)


class WordIndex(NamedTuple):
    """The words of a text as ids: ``ids[i]`` numbers word ``i`` by first appearance of its string,
    ``distinct[k]`` is the string of id ``k``, ``counts[k]`` its occurrences, ``lens[i]`` the
    characters of word ``i``, ``distinct_lens[k]`` those of ``distinct[k]``."""

    ids: np.ndarray
    distinct: list[str]
    counts: np.ndarray
    lens: np.ndarray
    distinct_lens: np.ndarray


def index_words(words: list[str]) -> WordIndex:
    """:class:`WordIndex` of ``words`` (ids in first-appearance order).

    >>> index_words(["a", "bb", "a"]).ids.tolist()
    [0, 1, 0]
    """
    if not words:
        empty = np.zeros(0, dtype=np.int64)
        return WordIndex(empty, [], empty, empty, empty)
    codes, uniques = pd.factorize(np.array(words, dtype=object))
    ids = codes.astype(np.int64, copy=False)
    distinct = uniques.tolist()
    distinct_lens = np.fromiter(map(len, distinct), dtype=np.int64, count=len(distinct))
    return WordIndex(ids, distinct, np.bincount(ids, minlength=len(distinct)), distinct_lens[ids], distinct_lens)


def _duplicates(items: list[str]) -> tuple[int, int]:
    """(number of items equal to an earlier item, their characters)."""
    distinct = set(items)
    return len(items) - len(distinct), sum(map(len, items)) - sum(map(len, distinct))


def dup_line_frac(text: str) -> float:
    """The share of non-blank lines that repeat an earlier line (Gopher), as in :func:`repetition_signals`.

    >>> dup_line_frac("a b\\na b\\nc d")
    0.3333333333333333
    """
    lines = list(filter(str.strip, (text or "").split("\n")))
    return _duplicates(lines)[0] / max(len(lines), 1)


def _ngram_hashes(ids: np.ndarray, max_n: int) -> list[np.ndarray]:
    """hashes[n] = uint64 hash of the word n-gram starting at each position (index 0, 1 unused)."""
    words = ids.astype(_U64)
    out: list[np.ndarray] = [np.zeros(0, dtype=_U64), words]
    h = words
    with np.errstate(over="ignore"):
        for n in range(2, max_n + 1):
            if len(ids) < n:
                out.append(np.zeros(0, dtype=_U64))
                continue
            h = h[:-1] * _BASE
            h += words[n - 1 :]
            h += _U64(n)
            out.append(h)
    return out


def _top_share(h: np.ndarray, n: int, csum: np.ndarray, total: int) -> float:
    """Characters in the most frequent n-gram (ties: the smallest hash; its first occurrence), over ``total``."""
    sh = np.sort(h)
    new = np.empty(len(sh) + 1, dtype=bool)  # a run of equal hashes starts here (and one past the end)
    new[0] = new[-1] = True
    np.not_equal(sh[1:], sh[:-1], out=new[1:-1])
    starts = new.nonzero()[0]
    counts = starts[1:] - starts[:-1]
    top = int(counts.argmax())
    if counts[top] <= 1:
        return 0.0
    start = int((h == sh[starts[top]]).argmax())
    ngram_chars = csum[start + n] - csum[start] + (n - 1)
    return min(float(counts[top] * ngram_chars) / total, 1.0)


def _dup_share(h: np.ndarray, n: int, csum: np.ndarray, word_chars: int) -> float:
    """Share of word characters inside n-grams whose hash occurs more than once (``csum``: the
    prefix sums of the word lengths, from 0)."""
    order = h.argsort()
    sh = h[order]
    pos = (sh[1:] == sh[:-1]).nonzero()[0]  # sorted hashes equal to the next one
    if not len(pos):
        return 0.0
    dup = np.zeros(len(h), dtype=bool)
    dup[order[pos]] = True
    dup[order[pos + 1]] = True
    starts = dup.nonzero()[0]
    # the words of the n-grams starting at ``starts``: from each start up to the next start or n words on
    ends = np.minimum(starts + n, np.append(starts[1:], len(h) + n))
    return float(int((csum[ends] - csum[starts]).sum())) / word_chars


def repetition_signals(text: str, words: list[str] | WordIndex | None = None,
                       raw_lines: list[str] | None = None) -> dict[str, float]:
    """Duplicate line/paragraph fractions and top / duplicate word n-gram character fractions.

    ``words``: the words of ``text`` (default: whitespace-separated), or their :func:`index_words`;
    ``raw_lines``: ``text.split("\\n")``, where the caller has it.
    """
    text = text or ""
    total = max(len(text), 1)
    lines = list(filter(str.strip, text.split("\n") if raw_lines is None else raw_lines))
    paras = list(filter(str.strip, _PARA.split(text)))
    out: dict[str, float] = {}
    n_dup, c_dup = _duplicates(lines)
    out["dup_line_frac"] = n_dup / max(len(lines), 1)
    out["dup_line_char_frac"] = c_dup / total
    n_dup, c_dup = _duplicates(paras)
    out["dup_para_frac"] = n_dup / max(len(paras), 1)
    out["dup_para_char_frac"] = c_dup / total

    index = words if isinstance(words, WordIndex) else index_words(text.split() if words is None else words)
    lens = index.lens
    word_chars = max(int(lens.sum()), 1)
    hashes = _ngram_hashes(index.ids, 10)
    csum = np.concatenate([[0], np.cumsum(lens)])
    for n in (2, 3, 4):
        h = hashes[n]
        out[f"top_{n}gram_char_frac"] = _top_share(h, n, csum, total) if len(h) else 0.0
    for n in range(5, 11):
        h = hashes[n]
        out[f"dup_{n}gram_char_frac"] = _dup_share(h, n, csum, word_chars) if len(h) else 0.0
    return out
