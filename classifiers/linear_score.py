"""Scoring of :class:`classifiers.linear.HashedLinearModel`: each document's sum of n-gram weights,
per n-gram block, bit for bit what ``np.bincount(doc, weights=w.take(col))`` of
:func:`classifiers.linear_features.counted_blocks` gives, but faster.

``bincount`` adds one weight at a time into its document's running sum, a chain of dependent
additions (about 4 ns per n-gram). The character n-grams are instead laid out as a grid, one
column per document and one row per position, so a document's sum is the same sequence of additions
down its column while the columns are added side by side (``np.add.reduce`` over axis 0 adds whole
rows: vectorised, and in order down each column — numpy sums pairwise only along the contiguous
axis). The hashes are computed on that grid directly (a row shift instead of a character shift),
and the positions past a document's end read the padding weight 0. Adding 0.0 never changes a
sum, so padding cells change nothing; the word n-grams (a few per document) keep ``bincount``.
The weights are read with ``take(mode="clip")``: every index is in range, and clip skips the
bounds check.

>>> from classifiers.linear_features import counted_blocks
>>> w = np.arange(2**10 + 1, dtype=np.float64); w[-1] = 0
>>> texts = ["ab cd", "", "abc"]
>>> fast = [s.tolist() for s, _ in block_sums(texts, w, 2**10, (1, 2), (2, 3), 100)]
>>> slow = [np.bincount(d, weights=w.take(c), minlength=3).tolist() for d, c, _ in counted_blocks(texts, 2**10, (1, 2), (2, 3), 100)]
>>> fast == slow
True
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np

from classifiers.linear_features import (
    _BASE,
    _PAIR,
    _U64,
    _bucket_scaled,
    char_salt,
    folded_chars,
    word_blocks,
)

__all__ = ["block_sums", "column_sums"]


def block_sums(
    texts: Sequence[str], w: np.ndarray, n_features: int, word_ngrams: tuple[int, int], char_ngrams: tuple[int, int], max_chars: int
) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Per n-gram block of :func:`counted_blocks` that can hold an n-gram: each document's sum of
    ``w[col]`` (``w``: float64, ``w[n_features] == 0``) and its number of n-grams.

    Blocks in which no document has an n-gram are left out: they add 0.0 and count 0.
    """
    cp32, lengths, cls = folded_chars(texts, max_chars)
    lo, hi = char_ngrams
    first = max(lo, 2)  # counted_blocks has no character 1-grams
    longest = int(lengths.max()) if len(lengths) else 0
    if hi >= first and longest >= first:
        g = _grid(cp32, lengths)
        flat = g.ravel()
        cols = g.shape[1]
        h = flat[:-cols] * _BASE  # h_2 * GOLDEN without its last term, rolled in place as in counted_blocks
        shortest = int(lengths.min())
        with np.errstate(over="ignore"):
            for k in range(2, min(hi, longest) + 1):
                if k > 2:
                    h = h[:-cols]
                    h *= _BASE
                h += flat[(k - 1) * cols :]
                if k >= first:
                    col = _bucket_scaled(h + char_salt(k), n_features).view(np.int64).reshape(-1, cols)
                    # k-grams that run past a document's end: only in the rows past the shortest's last k-gram
                    tail = max(shortest - k + 1, 0)
                    past = np.arange(tail, len(col))[:, None] > (lengths - k)[None, :]
                    col[tail:, : len(lengths)][past] = n_features  # (a column added by _grid is not summed)
                    yield column_sums(w.take(col, mode="clip"))[: len(lengths)], np.maximum(lengths - (k - 1), 0)
    for d, col, count in word_blocks(cp32, lengths, cls, n_features, word_ngrams):
        yield np.bincount(d, weights=w.take(col, mode="clip"), minlength=len(lengths)), count


def _grid(cp32: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """``cp * GOLDEN`` (``uint64``) of the folded documents (joined by NULs in ``cp32``) as columns:
    ``grid[p, d]`` is character ``p`` of document ``d``, 0 past its end; at least 2 columns (see
    :func:`column_sums`)."""
    rows, cols = int(lengths.max()), max(len(lengths), 2)
    by_doc = np.zeros((cols, rows), dtype=np.uint32)
    at = 0
    for d, n in enumerate(lengths.tolist()):
        by_doc[d, :n] = cp32[at : at + n]
        at += n + 1
    with np.errstate(over="ignore"):
        return np.multiply(by_doc.T, _PAIR, dtype=_U64, order="C")


def column_sums(a: np.ndarray) -> np.ndarray:
    """Sum of each column of a C-ordered 2-D array, added top to bottom one row at a time: the
    order of ``bincount``'s running sums (no pairwise summation, which numpy only does along the
    contiguous axis; with a single column that axis is the one reduced, hence at least 2).

    >>> a = np.ones((20, 2)); a[0] = 1e16  # each 1.0 added to 1e16 alone is lost to rounding
    >>> column_sums(a).tolist(), float(np.add.reduce(a[:, 0]))  # pairwise keeps them
    ([1e+16, 1e+16], 1.0000000000000016e+16)
    """
    if a.ndim != 2 or a.shape[1] < 2 or not a.flags.c_contiguous:
        raise ValueError("column_sums needs a C-ordered array of at least 2 columns")
    return np.add.reduce(a, axis=0)
