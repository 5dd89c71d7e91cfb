"""Featurisation of :mod:`classifiers.linear`: hashed word and character n-grams of a batch of texts.

A text is lower-cased and whitespace-folded (``" ".join(text.lower().split())``, at most
``max_chars`` characters); its character n-grams and its word n-grams (words = runs of
letters/digits) are hashed into ``n_features`` buckets with a few numpy calls over the code
points of the whole batch (polynomial hashes from prefix sums modulo 2**64), no Python loop
per n-gram.

>>> doc, col = hashed_ngrams(["a b c"], 2**10, word_ngrams=(1, 1), char_ngrams=(3, 3))
>>> doc.tolist(), int(col.max()) < 2**10
([0, 0, 0, 0, 0, 0], True)
"""

from __future__ import annotations

import functools
from collections.abc import Iterator, Sequence

import numpy as np

from curation.hashing import BASE, GOLDEN, codepoints
from curation.hashing import alnum_table as _word_table
from curation.hashing import powers as _powers

_U64 = np.uint64
_BASE = _U64(BASE)
_PAIR = _U64(GOLDEN)


def _codepoints(texts: Sequence[str], max_chars: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Code points (``uint32``) of the folded texts joined by a NUL separator, each position's
    document, and each folded text's length.

    ``" ".join(text[: 2 * max_chars].lower().split())[:max_chars]`` of each text (NUL read as a
    space), with the inner whitespace runs collapsed on the code points of the whole batch.
    """
    return _folded(texts, max_chars)[:3]


def _folded(texts: Sequence[str], max_chars: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """:func:`_codepoints` and each position's class (``uint8``: :data:`_SPACE`, :data:`_WORD` or 0),
    read from one table lookup that both folds the whitespace and finds the words."""
    cp, lengths, cls = folded_chars(texts, max_chars)
    doc = np.repeat(np.arange(len(lengths), dtype=np.int64), lengths + 1)[: len(cp)]
    return cp, doc, lengths, cls


def folded_chars(texts: Sequence[str], max_chars: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`_folded` without each position's document (the scorer does not need it)."""
    if not len(texts):
        empty = np.zeros(0, dtype=np.int64)
        return np.zeros(0, dtype=np.uint32), empty, np.zeros(0, dtype=np.uint8)
    # NUL separates documents in the joined buffer, so it may not occur inside one
    cp = codepoints([str(t)[: max_chars * 2].replace("\x00", " ").lower().strip() for t in texts], "\x00")
    cls = _classes().take(cp)  # take: the same lookup, about twice as fast as indexing with uint32
    keep = cls != _SPACE
    keep[1:] |= keep[:-1].copy()  # non-space characters and the first space of each run
    cp, cls = cp[keep], cls[keep]
    cp[np.flatnonzero(cls == _SPACE)] = 32  # the runs' kept spaces read as " " (most already are)
    seps = np.flatnonzero(cp == 0)
    starts = np.concatenate([[0], seps + 1])
    lengths = np.concatenate([seps, [len(cp)]]) - starts
    long = np.flatnonzero(lengths > max_chars)
    if len(long):
        parts, at = [], 0
        for d in long.tolist():
            parts.append((at, starts[d] + max_chars))
            at = starts[d] + lengths[d]
        parts.append((at, len(cp)))
        cp = np.concatenate([cp[a:b] for a, b in parts])
        cls = np.concatenate([cls[a:b] for a, b in parts])
        lengths = np.minimum(lengths, max_chars)
    return cp, lengths, cls


#: classes of :func:`_classes`: whitespace (``str.isspace``) and word characters (:func:`_word_flags`)
_SPACE, _WORD = np.uint8(1), np.uint8(2)


@functools.lru_cache(maxsize=1)
def _classes() -> np.ndarray:
    """``class[code point]`` over all of Unicode: :data:`_SPACE` for whitespace, :data:`_WORD` for
    the other word characters, 0 for the rest (NUL, the document separator, included)."""
    space, word = _space_flags(), _word_flags()
    table = np.zeros(0x110000, dtype=np.uint8)
    table[word & ~space] = _WORD
    table[space] = _SPACE
    return table


@functools.lru_cache(maxsize=1)
def _space_flags() -> np.ndarray:
    """``str.isspace`` (what ``str.split()`` splits on) over all of Unicode; no code point above
    the BMP is whitespace."""
    table = np.zeros(0x110000, dtype=bool)
    table[:0x10000] = np.fromiter(map(str.isspace, map(chr, range(0x10000))), dtype=bool, count=0x10000)
    return table


@functools.lru_cache(maxsize=1)
def _word_flags() -> np.ndarray:
    """``is_word[code point]`` over all of Unicode: :func:`curation.hashing.alnum_table` on the BMP,
    every code point above it a word character, NUL (the document separator) not."""
    table = np.ones(0x110000, dtype=bool)
    table[:0x10000] = _word_table()
    table[0] = False
    return table


def _bucket_inplace(h: np.ndarray, n_features: int) -> np.ndarray:
    """:func:`curation.hashing.bucket` of ``h``, computed in ``h``'s own buffer."""
    h *= _PAIR
    return _bucket_scaled(h, n_features)


def _bucket_scaled(h: np.ndarray, n_features: int) -> np.ndarray:
    """:func:`_bucket_inplace` of ``x`` given ``h = x * GOLDEN`` (mod 2**64), in ``h``'s buffer."""
    bits = n_features.bit_length() - 1
    if n_features == 1 << bits:
        h >>= _U64(64 - bits)
        return h
    h >>= _U64(32)
    h %= _U64(n_features)
    return h


def _touching(seps: np.ndarray, k: int, size: int) -> np.ndarray:
    """Start positions ``i < size`` of the k-grams ``[i, i + k)`` that contain a separator."""
    idx = (seps[:, None] - np.arange(k, dtype=np.int64)[None, :]).ravel()
    return idx[(idx >= 0) & (idx < size)]


def hashed_ngrams(
    texts: Sequence[str],
    n_features: int,
    *,
    word_ngrams: tuple[int, int] = (1, 2),
    char_ngrams: tuple[int, int] = (3, 5),
    max_chars: int = 20000,
) -> tuple[np.ndarray, np.ndarray]:
    """Feature index of every n-gram occurrence of a batch, and its document.

    N-grams that would cross a document boundary get index ``n_features`` (a padding
    feature whose weight is always 0 and which is not counted).

    >>> doc, col = hashed_ngrams(["a b", "a b"], 2**16, word_ngrams=(1, 1), char_ngrams=(3, 3))
    >>> sorted(col[(doc == 0) & (col < 2**16)].tolist()) == sorted(col[doc == 1].tolist())
    True
    """
    blocks = list(ngram_blocks(texts, n_features, word_ngrams=word_ngrams, char_ngrams=char_ngrams, max_chars=max_chars))
    if not blocks:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    return np.concatenate([b[0] for b in blocks]), np.concatenate([b[1] for b in blocks])


def ngram_blocks(
    texts: Sequence[str],
    n_features: int,
    *,
    word_ngrams: tuple[int, int] = (1, 2),
    char_ngrams: tuple[int, int] = (3, 5),
    max_chars: int = 20000,
) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """:func:`hashed_ngrams` one n-gram order at a time (saves concatenating large arrays)."""
    for doc, col, _ in counted_blocks(texts, n_features, word_ngrams, char_ngrams, max_chars):
        yield doc, col


def counted_blocks(
    texts: Sequence[str], n_features: int, word_ngrams: tuple[int, int], char_ngrams: tuple[int, int], max_chars: int
) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """:func:`ngram_blocks` with, per block, how many of each document's n-grams are not padding
    (read from the folded lengths and word counts, not from the block)."""
    cp32, doc, lengths, cls = _folded(texts, max_chars)
    yield from _char_blocks(cp32, doc, lengths, n_features, char_ngrams)
    yield from word_blocks(cp32, lengths, cls, n_features, word_ngrams)


def _char_blocks(
    cp32: np.ndarray, doc: np.ndarray, lengths: np.ndarray, n_features: int, char_ngrams: tuple[int, int]
) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """The character n-gram blocks of :func:`counted_blocks`, from :func:`_folded`'s arrays."""
    n = len(cp32)
    pad = n_features
    seps = np.cumsum(lengths + 1)[:-1] - 1  # the NUL after each document but the last
    with np.errstate(over="ignore"):
        # Character n-grams: rolling h_k = h_{k-1} * BASE + c, never across documents, kept
        # multiplied by the bucket's GOLDEN factor (h_k * GOLDEN rolls the same way from c * GOLDEN)
        lo, hi = char_ngrams
        if hi >= 2 and n >= 2:
            cg = np.multiply(cp32, _PAIR, dtype=_U64)
            h = cg[:-1] * _BASE  # h_2 * GOLDEN, without its last term; later orders roll in this buffer
            last = min(hi, n)
            for k in range(2, last + 1):
                if k > 2:
                    h = h[:-1]
                    h *= _BASE
                h += cg[k - 1 :]
                if k >= lo:
                    col = _bucket_scaled(np.add(h, char_salt(k), out=h) if k == last else h + char_salt(k), n_features)
                    col = col.view(np.int64)
                    col[_touching(seps, k, len(col))] = pad
                    yield doc[: len(col)], col, np.maximum(lengths - (k - 1), 0)


def char_salt(k: int) -> np.uint64:
    """What is added to a character k-gram's hash (times GOLDEN) before bucketing: the same k-gram
    of another order lands elsewhere."""
    return _U64(k * 0x51ED27 * GOLDEN % 2**64)


def word_blocks(
    cp32: np.ndarray, lengths: np.ndarray, cls: np.ndarray, n_features: int, word_ngrams: tuple[int, int]
) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """The word n-gram blocks of :func:`counted_blocks`, from :func:`folded_chars`' arrays (a word's
    document is found from the lengths: no array of every position's document)."""
    n = len(cp32)
    pad = n_features
    with np.errstate(over="ignore"):
        # Words: runs of word characters; hash of [a, b) from prefix sums of c_j * BASE**-j.
        wlo, whi = word_ngrams
        if whi >= 1 and n:
            padded = np.zeros(n + 2, dtype=bool)
            np.equal(cls, _WORD, out=padded[1:-1])
            # nonzero of a bool array is several times faster than of the int8 np.diff
            edges = np.flatnonzero(padded[1:] != padded[:-1])
            starts, ends = edges[0::2], edges[1::2]  # the runs' starts and ends alternate
            if len(starts):
                pw, inv = _powers(n + 1)
                prefix = np.zeros(n + 1, dtype=_U64)
                np.multiply(cp32, inv[:n], out=prefix[1:])
                np.cumsum(prefix[1:], out=prefix[1:])
                # take: the same gathers as indexing, faster
                wh = (prefix.take(ends) - prefix.take(starts)) * pw.take(starts)
                # the documents whose ends (past their separator) are at or before each start
                wdoc = np.searchsorted(np.cumsum(lengths + 1), starts, side="right")
                n_words = np.bincount(wdoc, minlength=len(lengths))
                if wlo <= 1:
                    yield wdoc, _bucket_inplace(wh + _U64(0xA5A5), n_features).view(np.int64), n_words
                g = wh
                for k in range(2, whi + 1):
                    if len(g) < 2:
                        break
                    # an n-gram is inside one document iff its first and last words are
                    same = wdoc[k - 1 :] == wdoc[: len(wdoc) - k + 1]
                    g = (g[:-1] ^ (g[:-1] >> _U64(29))) * _PAIR + wh[k - 1 :]
                    if k >= wlo:
                        col = _bucket_inplace(g + _U64(k), n_features).view(np.int64)
                        col[~same] = pad
                        yield wdoc[: len(col)], col, np.maximum(n_words - (k - 1), 0)
