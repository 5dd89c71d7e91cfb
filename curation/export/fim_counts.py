"""The tokens of a FIM'd document's own text, from the ids the export computed for its FIM'd text.

A FIM'd text is its own text cut at two points, the pieces rearranged between three sentinels
(:mod:`curation.mixture.fim`); its ids hold each piece's ids between the sentinels' (added tokens,
matched whole). The own text's count is the pieces' counts plus what joining them again changes,
which only the text around each cut can: the split regex of a byte-level BPE (Qwen's, GPT-4's)
never puts in one piece a newline and the visible character after it, a letter or digit and the
white space after it, or other visible ASCII and the space or tab after it (:func:`_boundary`), and
its merges stay within a piece, so the text between two such places is tokenized alike wherever it
stands. Only that text around each cut is tokenized again, whole and as its parts. That gives
:func:`curation.tokens.count_tokens` of the own text exactly, at a fraction of counting it
(``export.json``'s ``fim_tokens``); a document this cannot answer for (no tiktoken encoder, another
split regex, the EOD's text, text NFC would change, a text long enough to be counted in pieces,
sentinel ids where the text has none) is counted whole.

>>> from curation.mixture.fim import FimSentinels, fim_format
>>> s = FimSentinels()
>>> own = "import os\\nx = 1\\ndef f():\\n    return x\\n"
>>> fimd = fim_format(own[:12], own[12:30], own[30:], "psm", s)
>>> from curation.tokens import count_tokens, encode
>>> int(own_counts([fimd], ["psm"], encode([fimd], "qwen"), s, "qwen")[0]) == int(count_tokens([own], "qwen")[0])
True
"""

from __future__ import annotations

import string
import unicodedata
from collections.abc import Sequence
from itertools import accumulate, pairwise
from typing import Any

import numpy as np

from curation.mixture.fim import FimSentinels, fim_inverse, fim_parts
from curation.tokens import EOD_TEXT, MAX_CHARS_PER_CALL, _fast_kwargs, count_tokens, load_fast_counter

#: The split regexes :func:`_boundary` is true of (Qwen's; GPT-4's cl100k).
SPLIT_AT_LINES = frozenset(
    {
        r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+",
        r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+",
    }
)
_VISIBLE = frozenset(chr(c) for c in range(0x21, 0x7F))
_ALNUM = frozenset(string.ascii_letters + string.digits)
_SPACE = frozenset(" \t\n\r\x0b\x0c")


def own_counts(
    texts: Sequence[str], modes: Sequence[str], ids: Sequence[np.ndarray], s: FimSentinels, tok: str
) -> np.ndarray:
    """Tokens of each FIM'd text's own text (``modes``: psm | spm), ``ids`` its FIM'd text's ids
    (:func:`curation.tokens.encode`): :func:`~curation.tokens.count_tokens` of :func:`~curation.mixture.fim.fim_inverse`."""
    fast = _encoder(tok, s)
    out = np.zeros(len(texts), dtype=np.int64)
    whole: list[int] = []
    for i, (text, mode, x) in enumerate(zip(texts, modes, ids, strict=True)):
        n = None if fast is None else _from_pieces(text, mode, np.asarray(x), s, *fast)
        if n is None:
            whole.append(i)
        else:
            out[i] = n
    if whole:
        out[whole] = count_tokens([fim_inverse(texts[i], modes[i], s) for i in whole], tok)
    return out


def _encoder(tok: str, s: FimSentinels) -> tuple[Any, bool, tuple[int, int, int]] | None:
    """(tiktoken encoding, NFC, the sentinels' ids) where the runs hold, else None."""
    fast = load_fast_counter(tok)
    if fast is None:
        return None
    enc, nfc = fast
    ids = [enc._special_tokens.get(x) for x in (s.prefix, s.suffix, s.middle)]
    if enc._pat_str not in SPLIT_AT_LINES or None in ids or any(c.isspace() for t in enc.special_tokens_set for c in t):
        return None
    return enc, nfc, (ids[0], ids[1], ids[2])


def _from_pieces(
    text: str, mode: str, x: np.ndarray, s: FimSentinels, enc: Any, nfc: bool, sid: tuple[int, int, int]
) -> int | None:
    """The own text's tokens from the pieces' ids in ``x``, or None where the runs cannot answer."""
    if len(text) > MAX_CHARS_PER_CALL or EOD_TEXT in text:
        return None
    prefix, middle, suffix = fim_parts(text, mode, s)
    own = prefix + middle + suffix
    if EOD_TEXT in own:  # formed where two pieces meet: the whole text is encoded with that token's text as text
        return None
    if (
        nfc
        and not text.isascii()
        and not (unicodedata.is_normalized("NFC", text) and unicodedata.is_normalized("NFC", own))
    ):
        return None
    at = np.flatnonzero((x == sid[0]) | (x == sid[1]) | (x == sid[2]))
    if x[at].tolist() != list(sid):  # the prefix, suffix and middle sentinels, once each, in that order (both modes)
        return None
    p, su, m = at.tolist()
    if mode == "psm" and p == 0:
        pieces, counts = [prefix, middle, suffix], [su - 1, len(x) - m - 1, m - su - 1]
    elif mode == "spm" and (p, su) == (0, 1):
        pieces, counts = [prefix + middle, suffix], [len(x) - m - 1, m - 2]
    else:
        return None
    return sum(counts) + _joins(pieces, enc)


def _joins(pieces: list[str], enc: Any) -> int:
    """What joining ``pieces`` changes in their count: each run of the joined text that holds a cut
    strictly inside, tokenized whole less its parts."""
    own = "".join(pieces)
    cuts = list(accumulate(len(p) for p in pieces[:-1]))
    change, done = 0, -1
    for c in cuts:
        if c <= done or _boundary(own, c):
            continue
        lo, hi = c - 1, c + 1
        while not _boundary(own, lo):
            lo -= 1
        while not _boundary(own, hi):
            hi += 1
        bounds = [lo, *(x for x in cuts if lo < x < hi), hi]
        change += _count(enc, own[lo:hi]) - sum(_count(enc, own[a:b]) for a, b in pairwise(bounds))
        done = hi
    return change


def _boundary(text: str, q: int) -> bool:
    """Whether every split of every text holding ``text[q - 1:q + 1]`` starts a piece at its second
    character (the ends of ``text`` too): a newline then a visible ASCII character, a letter or digit then
    white space, other visible ASCII then a space or tab (only newlines follow punctuation in one piece)."""
    if q <= 0 or q >= len(text):
        return True
    a, b = text[q - 1], text[q]
    if a == "\n":
        return b in _VISIBLE
    if a in _ALNUM:
        return b in _SPACE
    return a in _VISIBLE and b in " \t"


def _count(enc: Any, text: str) -> int:
    return len(enc.encode(text, **_fast_kwargs(enc, text))) if text else 0
