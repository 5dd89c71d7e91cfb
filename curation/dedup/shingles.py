"""Text normalisation, shingles and their hashes for MinHash, vectorised over many documents.

Normalisation: NFKC, lower-case, every run of characters that are not letters or digits
(punctuation, symbols, whitespace, ``_``) folded to one space. Tokens are the words between
those spaces. Shingles are word n-grams (``word:5``) or character n-grams of the folded text
(``char:5``) or script-aware word n-grams (``script:5``: as ``word``, but every character of a
script written without spaces between words — Han, kana, Hangul, Thai, Lao, Khmer, Myanmar — is a
token of its own, so Chinese gets character 5-grams and English word 5-grams, within one document
too); a document with fewer tokens (characters) than n has one shingle of what it has,
so no document is ever skipped (an empty one has the single shingle ``""``).

>>> shingles("Hello, World!  A b", ShingleSpec("word", 3))
['hello world a', 'world a b']
>>> shingles("ab", ShingleSpec("char", 5))
['ab']
>>> shingles("用 Redis 做缓存", ShingleSpec("script", 3))
['用 redis 做', 'redis 做 缓', '做 缓 存']
>>> word_shingle_hash32("hello world a") == int(shingle_hashes(["Hello, World!  A"], ShingleSpec("word", 3))[0][0] >> 32)
True

Two shingle hashes exist. ``fast`` (the default) is computed with numpy over a whole batch of
documents: a polynomial hash of each token's code points (mod 2^64) mixed with the MurmurHash3
finaliser, combined over the n tokens of a shingle; :func:`word_shingle_hash32` and
:func:`char_shingle_hash32` compute the same 32-bit value for one shingle string, so datasketch
can reproduce a signature with ``MinHash(num_perm, seed, hashfunc=word_shingle_hash32)``.
``sha1`` is datasketch's default hash (first 4 bytes of SHA-1 of the UTF-8 shingle, little
endian); it needs one Python call per shingle and is kept for exact compatibility with a plain
``datasketch.MinHash(num_perm, seed)`` fed with ``shingle.encode()``.
"""

from __future__ import annotations

import dataclasses
import functools
import re
import unicodedata
from collections.abc import Sequence

import numpy as np

_U64 = np.uint64
_MASK64 = (1 << 64) - 1
#: Base of the polynomial token hash (odd, so it is invertible mod 2^64).
_POLY = 0x100000001B3
_POLY_INV = pow(_POLY, -1, 1 << 64)
#: Added per character of length, so tokens that differ only in trailing NULs differ.
_GOLDEN = 0x9E3779B97F4A7C15
#: Multiplier that combines token hashes into a word-shingle hash.
_COMBINE = 0xFF51AFD7ED558CCD
_FMIX64 = (33, 0xFF51AFD7ED558CCD, 33, 0xC4CEB9FE1A85EC53, 33)
#: A batch holds about this many code points (keeps the work arrays in cache).
BATCH_CHARS = 1 << 20

_FOLD = re.compile(r"[\W_]+")
_NON_WORD = re.compile(r"[\W_]")
KINDS = ("word", "char", "script")
#: Code-point ranges of scripts written without spaces between words (one token per character
#: in ``script`` shingles): Thai, Lao, Myanmar, Hangul Jamo, Khmer, CJK punctuation to Katakana,
#: Hangul compatibility Jamo to CJK Unified Ideographs, Hangul syllables, CJK compatibility
#: ideographs, half-width Katakana, CJK Extension B and later.
UNSPACED_RANGES = (
    (0x0E00, 0x0EFF), (0x1000, 0x109F), (0x1100, 0x11FF), (0x1780, 0x17FF), (0x3000, 0x30FF),
    (0x3130, 0x9FFF), (0xAC00, 0xD7AF), (0xF900, 0xFAFF), (0xFF66, 0xFF9F), (0x20000, 0x3FFFF),
)
_UNSPACED = re.compile("([" + "".join(f"{chr(a)}-{chr(b)}" for a, b in UNSPACED_RANGES) + "])")


@dataclasses.dataclass(frozen=True)
class ShingleSpec:
    """How a document becomes shingles: ``word``, ``char`` or ``script`` n-grams of size ``n``.

    >>> ShingleSpec.parse("char:7")
    ShingleSpec(kind='char', n=7)
    """

    kind: str = "word"
    n: int = 5

    @classmethod
    def parse(cls, text: str) -> ShingleSpec:
        kind, _, n = str(text).partition(":")
        if kind not in KINDS or not n.isdigit() or int(n) < 1:
            raise ValueError(f"shingle spec {text!r} must look like script:5, word:5 or char:5 (kind in {KINDS}, n >= 1)")
        return cls(kind, int(n))

    def __str__(self) -> str:
        return f"{self.kind}:{self.n}"

    @property
    def salt(self) -> int:
        """Mixed into band hashes so signatures of different shingle specs never share a bucket."""
        return (KINDS.index(self.kind) + 1) * 1_000_003 + self.n


def normalize(text: str) -> str:
    """NFKC and lower-case (the fold of punctuation and spaces comes with tokenisation).

    >>> normalize("ＡＢＣ ﬁne")
    'abc fine'
    """
    if text.isascii():
        return text.lower()
    if not unicodedata.is_normalized("NFKC", text):
        text = unicodedata.normalize("NFKC", text)
    return text.lower()


def tokens(text: str) -> list[str]:
    """The words of a normalised document.

    >>> tokens("It's 3.5 km—far_away")
    ['it', 's', '3', '5', 'km', 'far', 'away']
    """
    return _FOLD.sub(" ", normalize(text)).split()


def script_tokens(text: str) -> list[str]:
    """:func:`tokens`, with every character of an unspaced script (Han, kana, Hangul, Thai…) a token.

    >>> script_tokens("MySQL 索引，B+树")
    ['mysql', '索', '引', 'b', '树']
    """
    return _UNSPACED.sub(r" \1 ", _FOLD.sub(" ", normalize(text))).split()


def shingles(text: str, spec: ShingleSpec) -> list[str]:
    """The shingle strings of one document (reference implementation; slow, exact)."""
    toks = script_tokens(text) if spec.kind == "script" else tokens(text)
    if spec.kind in ("word", "script"):
        if len(toks) < spec.n:
            return [" ".join(toks)]
        return [" ".join(toks[i : i + spec.n]) for i in range(len(toks) - spec.n + 1)]
    folded = " ".join(toks)
    if len(folded) < spec.n:
        return [folded]
    return [folded[i : i + spec.n] for i in range(len(folded) - spec.n + 1)]


def token_hash64(text: str) -> int:
    """64-bit hash of a string's code points (the per-token hash of the ``fast`` scheme).

    >>> token_hash64("abc") == token_hash64("abc") != token_hash64("abd")
    True
    """
    h, p = 0, 1
    for ch in text:
        h = (h + ord(ch) * p) & _MASK64
        p = (p * _POLY) & _MASK64
    return _fmix64_int((h + len(text) * _GOLDEN) & _MASK64)


def word_shingle_hash64(shingle: str | bytes) -> int:
    """64-bit ``fast`` hash of a word shingle (tokens separated by one space)."""
    if isinstance(shingle, bytes):
        shingle = shingle.decode("utf-8")
    h = 0
    for tok in shingle.split(" ") if shingle else []:
        h = ((h ^ token_hash64(tok)) * _COMBINE) & _MASK64
    return _fmix64_int(h)


def word_shingle_hash32(shingle: str | bytes) -> int:
    """32-bit ``fast`` hash of a word shingle: a datasketch ``hashfunc``.

    >>> from datasketch import MinHash
    >>> m = MinHash(num_perm=16, hashfunc=word_shingle_hash32)
    >>> m.update("hello world")
    """
    return word_shingle_hash64(shingle) >> 32


def char_shingle_hash32(shingle: str | bytes) -> int:
    """32-bit ``fast`` hash of a character shingle: a datasketch ``hashfunc``."""
    if isinstance(shingle, bytes):
        shingle = shingle.decode("utf-8")
    return token_hash64(shingle) >> 32


def scalar_hashfunc(spec: ShingleSpec):  # noqa: ANN201 - a callable for datasketch
    """The datasketch ``hashfunc`` that matches the ``fast`` hash of ``spec``."""
    return char_shingle_hash32 if spec.kind == "char" else word_shingle_hash32


def shingle_hashes(texts: Sequence[str], spec: ShingleSpec) -> tuple[np.ndarray, np.ndarray]:
    """64-bit ``fast`` hashes of every shingle of every document, in CSR layout.

    Returns ``(hashes, offsets)``: the shingles of document ``i`` are
    ``hashes[offsets[i]:offsets[i + 1]]`` (at least one per document).

    >>> h, off = shingle_hashes(["a b c d", ""], ShingleSpec("word", 2))
    >>> off.tolist()
    [0, 3, 4]
    """
    parts: list[np.ndarray] = []
    counts: list[np.ndarray] = []
    for start, stop in text_batches(texts):
        h, c = _batch_hashes([normalize(t) for t in texts[start:stop]], spec)
        parts.append(h)
        counts.append(c)
    offsets = np.zeros(len(texts) + 1, dtype=np.int64)
    if counts:
        np.cumsum(np.concatenate(counts), out=offsets[1:])
    hashes = np.concatenate(parts) if parts else np.zeros(0, dtype=_U64)
    return hashes, offsets


def sha1_hashes(texts: Sequence[str], spec: ShingleSpec) -> tuple[np.ndarray, np.ndarray]:
    """datasketch's default 32-bit SHA-1 hash of every shingle string (CSR layout, uint64)."""
    import hashlib

    values: list[int] = []
    offsets = np.zeros(len(texts) + 1, dtype=np.int64)
    for i, text in enumerate(texts):
        sh = shingles(text, spec)
        values.extend(int.from_bytes(hashlib.sha1(s.encode("utf-8")).digest()[:4], "little") for s in sh)
        offsets[i + 1] = offsets[i] + len(sh)
    return np.asarray(values, dtype=_U64), offsets


def text_batches(texts: Sequence[str]) -> list[tuple[int, int]]:
    """``(start, stop)`` ranges of documents holding about :data:`BATCH_CHARS` characters each."""
    out, start, size = [], 0, 0
    for i, t in enumerate(texts):
        size += len(t) + 1
        if size >= BATCH_CHARS:
            out.append((start, i + 1))
            start, size = i + 1, 0
    if start < len(texts):
        out.append((start, len(texts)))
    return out


def _batch_hashes(normed: list[str], spec: ShingleSpec) -> tuple[np.ndarray, np.ndarray]:
    """Shingle hashes of a batch of normalised documents and the count per document."""
    lens = np.fromiter((len(t) for t in normed), dtype=np.int64, count=len(normed))
    # One separator between documents: a non-word character, so no token spans two documents.
    cp = np.frombuffer(" ".join(normed).encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    is_word = np.zeros(len(cp) + 2, dtype=bool)
    np.take(_word_table(), cp, out=is_word[1:-1], mode="clip")
    if spec.kind == "script":
        starts, ends = _script_spans(cp, is_word)
    else:
        edges = np.flatnonzero(is_word[1:] != is_word[:-1])
        starts, ends = edges[0::2], edges[1::2]
    doc_start = np.zeros(len(normed), dtype=np.int64)
    np.cumsum(lens[:-1] + 1, out=doc_start[1:])
    tok_doc = np.searchsorted(doc_start, starts, side="right") - 1
    if spec.kind == "char":
        cp, starts, ends, tok_doc = _fold(cp, starts, ends, tok_doc, len(normed))
        return _char_shingles(cp, tok_doc, starts, ends, len(normed), spec.n)
    tok = _span_hash(cp, starts, ends)
    return _word_shingles(tok, tok_doc, len(normed), spec.n)


def _script_spans(cp: np.ndarray, is_word: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Token spans where runs of word characters end at non-word characters and around every
    character of an unspaced script (``is_word`` is padded with False at both ends)."""
    unspaced = np.zeros(len(cp) + 2, dtype=bool)
    np.take(_unspaced_table(), cp, out=unspaced[1:-1], mode="clip")
    unspaced &= is_word
    # boundary before padded position k+1 (code point k): between is_word[k] and is_word[k+1]
    cut = (is_word[1:] != is_word[:-1]) | unspaced[1:] | unspaced[:-1]
    starts = np.flatnonzero(cut & is_word[1:])
    ends = np.flatnonzero(cut & is_word[:-1])
    return starts, ends


def _word_shingles(tok: np.ndarray, tok_doc: np.ndarray, n_docs: int, n: int) -> tuple[np.ndarray, np.ndarray]:
    ntok = np.bincount(tok_doc, minlength=n_docs)
    first = np.zeros(n_docs, dtype=np.int64)
    np.cumsum(ntok[:-1], out=first[1:])
    with np.errstate(over="ignore"):
        m = max(len(tok) - n + 1, 0)
        full = np.zeros(m, dtype=_U64)
        for j in range(n):
            full = (full ^ tok[j : j + m]) * _U64(_COMBINE)
        keep = tok_doc[:m] == tok_doc[n - 1 : n - 1 + m] if m else np.zeros(0, dtype=bool)
        full_doc = tok_doc[:m][keep]
        full = _fmix64(full[keep])
        # Documents with fewer than n tokens: one shingle of all their tokens (empty: hash of "").
        short = np.flatnonzero(ntok < n)
        part = np.zeros(len(short), dtype=_U64)
        for j in range(n - 1):
            has = ntok[short] > j
            pos = np.where(has, first[short] + j, 0)
            picked = tok[pos] if len(tok) else np.zeros(len(short), dtype=_U64)
            part = np.where(has, (part ^ picked) * _U64(_COMBINE), part)
        part = _fmix64(part)
    return _merge_by_doc(full, full_doc, part, short, n_docs)


def _char_shingles(
    cp: np.ndarray, tok_doc: np.ndarray, starts: np.ndarray, ends: np.ndarray, n_docs: int, n: int
) -> tuple[np.ndarray, np.ndarray]:
    # The folded text of document d is cp[dstart[d]:dend[d]] (empty documents: length 0).
    dstart = np.zeros(n_docs, dtype=np.int64)
    dend = np.zeros(n_docs, dtype=np.int64)
    if len(starts):
        first_tok = np.searchsorted(tok_doc, np.arange(n_docs), side="left")
        last_tok = np.searchsorted(tok_doc, np.arange(n_docs), side="right") - 1
        has = last_tok >= first_tok
        dstart[has] = starts[first_tok[has]]
        dend[has] = ends[last_tok[has]]
    flen = dend - dstart
    count = np.maximum(flen - n + 1, 0)
    win_start = np.repeat(dstart, count) + _ranges(count)
    full = _span_hash(cp, win_start, win_start + n)
    full_doc = np.repeat(np.arange(n_docs), count)
    short = np.flatnonzero(flen < n)
    part = _span_hash(cp, dstart[short], dend[short])
    return _merge_by_doc(full, full_doc, part, short, n_docs)


def _fold(
    cp: np.ndarray, starts: np.ndarray, ends: np.ndarray, tok_doc: np.ndarray, n_docs: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Tokens of each document joined by one space: the code points and the new token spans."""
    lengths = ends - starts
    same_doc_next = np.zeros(len(starts), dtype=bool)
    if len(starts) > 1:
        same_doc_next[:-1] = tok_doc[1:] == tok_doc[:-1]
    # Each token is followed by a space when the next token is in the same document.
    out_len = lengths + same_doc_next
    new_starts = np.zeros(len(starts), dtype=np.int64)
    if len(starts):
        np.cumsum(out_len[:-1], out=new_starts[1:])
    folded = np.full(int(out_len.sum()), 32, dtype=np.uint32)
    inner = _ranges(lengths)
    folded[np.repeat(new_starts, lengths) + inner] = cp[np.repeat(starts, lengths) + inner]
    return folded, new_starts, new_starts + lengths, tok_doc


def _ranges(lengths: np.ndarray) -> np.ndarray:
    """``concatenate([arange(k) for k in lengths])`` without a Python loop."""
    total = int(lengths.sum())
    if total == 0:
        return np.zeros(0, dtype=np.int64)
    offs = np.zeros(len(lengths), dtype=np.int64)
    np.cumsum(lengths[:-1], out=offs[1:])
    return np.arange(total, dtype=np.int64) - np.repeat(offs, lengths)


def _merge_by_doc(
    full: np.ndarray, full_doc: np.ndarray, part: np.ndarray, short: np.ndarray, n_docs: int
) -> tuple[np.ndarray, np.ndarray]:
    docs = np.concatenate([full_doc, short])
    values = np.concatenate([full, part])
    if len(short):
        values = values[np.argsort(docs, kind="stable")]
    return values, np.bincount(docs, minlength=n_docs)


def _span_hash(cp: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """:func:`token_hash64` of ``cp[s:e]`` for every span, from prefix sums (no Python loop)."""
    n = len(cp)
    pw, ipw = _powers(n + 1)
    with np.errstate(over="ignore"):
        prefix = np.zeros(n + 1, dtype=_U64)
        np.multiply(cp, pw[:n], out=prefix[1:], casting="unsafe")
        np.cumsum(prefix[1:], out=prefix[1:])
        poly = (prefix[ends] - prefix[starts]) * ipw[starts]
        return _fmix64(poly + (ends - starts).astype(_U64) * _U64(_GOLDEN))


_POWERS: list[np.ndarray] = []


def _powers(size: int) -> tuple[np.ndarray, np.ndarray]:
    """``(R^i, R^-i)`` for i < size (mod 2^64); one cached pair per process, grown by doubling."""
    if not _POWERS or len(_POWERS[0]) < size:
        size = max(size, 2 * BATCH_CHARS + 2, 2 * len(_POWERS[0]) if _POWERS else 0)
        with np.errstate(over="ignore"):
            pw = np.full(size, _POLY, dtype=_U64)
            pw[0] = 1
            np.cumprod(pw, out=pw)
            ipw = np.full(size, _POLY_INV, dtype=_U64)
            ipw[0] = 1
            np.cumprod(ipw, out=ipw)
        _POWERS[:] = [pw, ipw]
    return _POWERS[0], _POWERS[1]


@functools.lru_cache(maxsize=1)
def _word_table() -> np.ndarray:
    """``is_word[code point]``: exactly the characters that ``[\\W_]`` does not match."""
    codes = np.arange(0x110000, dtype=np.uint32)
    codes[0xD800:0xE000] = 32  # lone surrogates are not characters; treat them as spaces
    chars = codes.astype("<u4").tobytes().decode("utf-32-le")
    folded = np.frombuffer(_NON_WORD.sub("\0", chars).encode("utf-32-le"), dtype=np.uint32)
    return folded != 0


@functools.lru_cache(maxsize=1)
def _unspaced_table() -> np.ndarray:
    """``is_unspaced[code point]`` for :data:`UNSPACED_RANGES`."""
    table = np.zeros(0x110000, dtype=bool)
    for a, b in UNSPACED_RANGES:
        table[a : b + 1] = True
    return table


def _fmix64(h: np.ndarray) -> np.ndarray:
    s1, m1, s2, m2, s3 = _FMIX64
    with np.errstate(over="ignore"):
        h = h ^ (h >> _U64(s1))
        h = h * _U64(m1)
        h = h ^ (h >> _U64(s2))
        h = h * _U64(m2)
        return h ^ (h >> _U64(s3))


def _fmix64_int(h: int) -> int:
    s1, m1, s2, m2, s3 = _FMIX64
    h ^= h >> s1
    h = (h * m1) & _MASK64
    h ^= h >> s2
    h = (h * m2) & _MASK64
    return h ^ (h >> s3)
