"""The polynomial hashing kernel shared by MinHash shingles and the hashed n-gram classifier.

Strings become arrays of code points (:func:`codepoints`); the hash of a span ``cp[s:e]`` is a
polynomial in the odd base :data:`BASE` modulo 2**64, read from prefix sums (:func:`span_poly`),
so every token or n-gram of a whole batch is hashed with a few numpy calls and no Python loop.
:func:`fmix64` (MurmurHash3's finaliser) spreads the bits; :func:`bucket` maps a hash to one of
``n`` features.

>>> cp = codepoints(["abc", "abd"], " ")
>>> h = span_hash(cp, np.array([0, 4]), np.array([3, 7]))
>>> int(h[0]) == token_hash64("abc") != token_hash64("abd") == int(h[1])
True
>>> int(span_poly(cp, np.array([0]), np.array([2]))[0]) == ord("a") + ord("b") * BASE
True
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence

import numpy as np

U64 = np.uint64
MASK64 = (1 << 64) - 1
#: Base of the polynomial hash (odd, so it is invertible modulo 2**64).
BASE = 0x100000001B3
BASE_INV = pow(BASE, -1, 1 << 64)
#: The golden-ratio constant: added per character of a span's length (so spans that differ
#: only in trailing NULs differ) and the multiplier of :func:`bucket`.
GOLDEN = 0x9E3779B97F4A7C15
FMIX64 = (33, 0xFF51AFD7ED558CCD, 33, 0xC4CEB9FE1A85EC53, 33)
#: Smallest power table built (2**21 entries of each kind, 32 MB): one per process, reused.
MIN_POWERS = 1 << 21

_NON_WORD_RUN = re.compile(r"[\W_]+")


def codepoints(texts: Sequence[str], sep: str) -> np.ndarray:
    """The code points (``uint32``) of ``texts`` joined by ``sep``.

    >>> codepoints(["a", "é"], " ").tolist()
    [97, 32, 233]
    """
    return np.frombuffer(sep.join(texts).encode("utf-32-le", "surrogatepass"), dtype=np.uint32)


def segment_sums(values: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Sums of ``values`` over consecutive segments of ``lengths`` (e.g. flags of the code points of
    texts joined with no separator, summed per text).

    >>> segment_sums(np.array([1, 0, 1, 1]), np.array([3, 0, 1])).tolist()
    [2, 0, 1]
    """
    prefix = np.concatenate([[0], np.cumsum(values, dtype=np.int64)])
    return np.diff(prefix[np.concatenate([[0], np.cumsum(lengths, dtype=np.int64)])])


def powers(size: int) -> tuple[np.ndarray, np.ndarray]:
    """``(BASE**i, BASE**-i)`` modulo 2**64 for every i < at least ``size`` (cached tables).

    >>> pw, inv = powers(3)
    >>> int(pw[2]) == BASE * BASE % 2**64 and int(pw[5]) * int(inv[5]) % 2**64 == 1
    True
    """
    return _power_table(max(MIN_POWERS, 1 << int(size).bit_length()))


@functools.lru_cache(maxsize=2)
def _power_table(n: int) -> tuple[np.ndarray, np.ndarray]:
    return _doubled_powers(BASE, n), _doubled_powers(BASE_INV, n)


def _doubled_powers(base: int, n: int) -> np.ndarray:
    """``base**i`` modulo 2**64 for ``i < n``, by doubling: entries ``[k, 2k)`` are entries
    ``[0, k)`` times ``base**k`` (one vectorised multiply per doubling, no sequential scan).

    >>> _doubled_powers(3, 5).tolist()
    [1, 3, 9, 27, 81]
    """
    out = np.empty(n, dtype=U64)
    out[:1] = 1
    k = 1
    with np.errstate(over="ignore"):
        while k < n:
            m = min(k, n - k)
            np.multiply(out[:m], U64(pow(base, k, 1 << 64)), out=out[k : k + m])
            k += m
    return out


def span_poly(cp: np.ndarray, starts: np.ndarray, ends: np.ndarray, *, descending: bool = False) -> np.ndarray:
    """``sum(cp[j] * BASE**(j - s))`` over ``j`` in ``[s, e)`` for every span, modulo 2**64.

    With ``descending``, the powers run the other way: ``BASE**(s - j)``.

    >>> cp = codepoints(["ab"], "")
    >>> int(span_poly(cp, np.array([0]), np.array([2]), descending=True)[0]) == (ord("a") + ord("b") * BASE_INV) % 2**64
    True
    """
    n = len(cp)
    pw, inv = powers(n + 1)
    up, down = (inv, pw) if descending else (pw, inv)
    with np.errstate(over="ignore"):
        prefix = np.zeros(n + 1, dtype=U64)
        np.multiply(cp, up[:n], out=prefix[1:], casting="unsafe")
        np.cumsum(prefix[1:], out=prefix[1:])
        return (prefix[ends] - prefix[starts]) * down[starts]


def span_hash(cp: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """:func:`token_hash64` of ``cp[s:e]`` for every span (the shingle token hash)."""
    with np.errstate(over="ignore"):
        return fmix64(span_poly(cp, starts, ends) + (ends - starts).astype(U64) * U64(GOLDEN))


def token_hash64(text: str) -> int:
    """64-bit hash of one string's code points (:func:`span_hash` for one span, in Python).

    >>> token_hash64("abc") == token_hash64("abc") != token_hash64("abd")
    True
    """
    h, p = 0, 1
    for ch in text:
        h = (h + ord(ch) * p) & MASK64
        p = (p * BASE) & MASK64
    return fmix64_int((h + len(text) * GOLDEN) & MASK64)


def fmix64(h: np.ndarray) -> np.ndarray:
    """MurmurHash3's 64-bit finaliser over an array of ``uint64``."""
    s1, m1, s2, m2, s3 = FMIX64
    with np.errstate(over="ignore"):
        h = h ^ (h >> U64(s1))
        h = h * U64(m1)
        h = h ^ (h >> U64(s2))
        h = h * U64(m2)
        return h ^ (h >> U64(s3))


def fmix64_int(h: int) -> int:
    """:func:`fmix64` of one Python integer.

    >>> fmix64_int(12345) == int(fmix64(np.array([12345], dtype=U64))[0])
    True
    """
    s1, m1, s2, m2, s3 = FMIX64
    h ^= h >> s1
    h = (h * m1) & MASK64
    h ^= h >> s2
    h = (h * m2) & MASK64
    return h ^ (h >> s3)


def bucket(h: np.ndarray, n: int) -> np.ndarray:
    """One of ``n`` buckets per hash (multiplicative hashing: the high bits of ``h * GOLDEN``
    depend on every bit of ``h``).

    >>> b = bucket(np.arange(1000, dtype=U64), 64)
    >>> int(b.max()) < 64 and len(set(b.tolist())) == 64
    True
    """
    with np.errstate(over="ignore"):
        h = h * U64(GOLDEN)
        bits = n.bit_length() - 1
        if n == 1 << bits:  # power of two: the top bits, no division
            return h >> U64(64 - bits)
        return (h >> U64(32)) % U64(n)


@functools.lru_cache(maxsize=1)
def word_table() -> np.ndarray:
    """``is_word[code point]`` over all of Unicode: exactly the characters ``[\\W_]`` does not match
    (the tokens of MinHash shingles).

    >>> t = word_table(); bool(t[ord("a")]), bool(t[ord("_")]), bool(t[ord("東")])
    (True, False, True)
    """
    codes = np.arange(0x110000, dtype=np.uint32)
    codes[0xD800:0xE000] = 32  # lone surrogates are not characters; treat them as spaces
    chars = codes.astype("<u4").tobytes().decode("utf-32-le")
    table = np.ones(0x110000, dtype=bool)
    for run in _NON_WORD_RUN.finditer(chars):  # 734 runs of non-word code points
        table[run.start() : run.end()] = False
    return table


@functools.lru_cache(maxsize=1)
def alnum_table() -> np.ndarray:
    """``is_word[code point]`` over the BMP: letters and digits (``str.isalnum``) and combining
    marks (the words of the hashed n-gram classifier).

    >>> t = alnum_table(); bool(t[ord("a")]), bool(t[ord("_")]), bool(t[0x301])
    (True, False, True)
    """
    table = word_table()[:0x10000].copy()  # regex word characters but "_": exactly str.isalnum
    table[0x0300:0x0370] = True  # combining marks stay inside words
    return table


def range_table(ranges: Sequence[tuple[int, int]]) -> np.ndarray:
    """``inside[code point]`` for inclusive code-point ``ranges`` (e.g. the unspaced scripts).

    >>> range_table([(0x41, 0x43)])[0x40:0x45].tolist()
    [False, True, True, True, False]
    """
    table = np.zeros(0x110000, dtype=bool)
    for a, b in ranges:
        table[a : b + 1] = True
    return table
