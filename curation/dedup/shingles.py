"""Text normalisation, shingles and their hashes for MinHash, vectorised over many documents.

Normalisation: NFKC, lower-case, every run of characters that are not letters or digits
(punctuation, symbols, whitespace, ``_``) folded to one space. Tokens are the words between
those spaces. Shingles are word n-grams (``word:5``) or character n-grams of the folded text
(``char:5``) or script-aware word n-grams (``script:5``: as ``word``, but every character of a
script written without spaces between words — Han, kana, Hangul, Thai, Lao, Khmer, Myanmar — is a
token of its own, so Chinese gets character 5-grams and English word 5-grams, within one document
too); a document with fewer tokens (characters) than n has one shingle of what it has. A document
without a token (no letter or digit: punctuation, symbols, emoji) has none of its own (the
reference shingles it as ``""``); the stage leaves it out (:func:`has_words`).

>>> shingles("Hello, World!  A b", ShingleSpec("word", 3))
['hello world a', 'world a b']
>>> shingles("ab", ShingleSpec("char", 5))
['ab']
>>> shingles("用 Redis 做缓存", ShingleSpec("script", 3))
['用 redis 做', 'redis 做 缓', '做 缓 存']

Two shingle hashes exist. ``fast`` (the default) is computed with numpy over a whole batch of
documents (:mod:`curation.dedup.shingle_batch`): a polynomial hash of each token's code points
(mod 2^64) mixed with the MurmurHash3 finaliser (the kernel in :mod:`curation.hashing`),
combined over the n tokens of a shingle; :func:`word_shingle_hash32` and
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

from curation.hashing import MASK64, U64, fmix64_int, token_hash64
from curation.text import drop_format

#: Multiplier that combines token hashes into a word-shingle hash.
COMBINE = 0xFF51AFD7ED558CCD

_FOLD = re.compile(r"[\W_]+")
_WORD_CHAR = re.compile(r"[^\W_]")
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
    """NFKC and lower-case, format characters dropped (the fold of punctuation and spaces comes with tokenisation).

    >>> normalize("ＡＢＣ ﬁne")
    'abc fine'
    """
    if text.isascii():
        return text.lower()
    text = drop_format(text)  # a soft hyphen inside a word made it two words
    if not unicodedata.is_normalized("NFKC", text):
        text = unicodedata.normalize("NFKC", text)
    return text.lower()


def tokens(text: str) -> list[str]:
    """The words of a normalised document.

    >>> tokens("It's 3.5 km—far_away")
    ['it', 's', '3', '5', 'km', 'far', 'away']
    """
    return _FOLD.sub(" ", normalize(text)).split()


def has_words(text: str) -> bool:
    """Whether a document has a token (a letter or digit once normalised) under every shingle spec.

    >>> has_words("!!! 😀 → ★"), has_words("™"), has_words("a")
    (False, True, True)
    """
    if text.isascii():  # lower-casing keeps ASCII words
        return _WORD_CHAR.search(text) is not None
    # a word character that stays one once normalised decides without normalising the whole text
    if any(_stays_word(m.group()) for m in _WORD_CHAR.finditer(text)):
        return True
    return _WORD_CHAR.search(normalize(text)) is not None  # e.g. "™" becomes "tm"


@functools.lru_cache(maxsize=1 << 14)
def _stays_word(char: str) -> bool:
    """Whether a word character is still one after :func:`normalize` (a few presentation forms are not)."""
    return _WORD_CHAR.search(normalize(char)) is not None


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


def word_shingle_hash64(shingle: str | bytes) -> int:
    """64-bit ``fast`` hash of a word shingle (tokens separated by one space)."""
    if isinstance(shingle, bytes):
        shingle = shingle.decode("utf-8")
    h = 0
    for tok in shingle.split(" ") if shingle else []:
        h = ((h ^ token_hash64(tok)) * COMBINE) & MASK64
    return fmix64_int(h)


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


def sha1_hashes(texts: Sequence[str], spec: ShingleSpec) -> tuple[np.ndarray, np.ndarray]:
    """datasketch's default 32-bit SHA-1 hash of every shingle string (CSR layout, uint64)."""
    import hashlib

    values: list[int] = []
    offsets = np.zeros(len(texts) + 1, dtype=np.int64)
    for i, text in enumerate(texts):
        sh = shingles(text, spec)
        values.extend(int.from_bytes(hashlib.sha1(s.encode("utf-8")).digest()[:4], "little") for s in sh)
        offsets[i + 1] = offsets[i] + len(sh)
    return np.asarray(values, dtype=U64), offsets
