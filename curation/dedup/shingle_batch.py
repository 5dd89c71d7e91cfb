"""The ``fast`` shingle hashes of a batch of documents, vectorised with numpy.

The documents' code points are joined into one array; tokens are spans of word characters
(``script``: and every character of an unspaced script); each token is hashed from prefix sums
(:func:`curation.hashing.span_hash`), and n consecutive tokens of one document are combined into
a shingle hash. The values equal the scalar reference of :mod:`curation.dedup.shingles`:

>>> from curation.dedup.shingles import word_shingle_hash32
>>> word_shingle_hash32("hello world a") == int(shingle_hashes(["Hello, World!  A"], ShingleSpec("word", 3))[0][0] >> 32)
True
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

import numpy as np

from curation.dedup.shingles import COMBINE, UNSPACED_RANGES, ShingleSpec, normalize
from curation.hashing import U64, codepoints, fmix64, range_table, span_hash, word_table

#: A batch holds about this many code points (keeps the work arrays in cache).
BATCH_CHARS = 1 << 20


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
    hashes = np.concatenate(parts) if parts else np.zeros(0, dtype=U64)
    return hashes, offsets


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
    cp = codepoints(normed, " ")
    is_word = np.zeros(len(cp) + 2, dtype=bool)
    np.take(word_table(), cp, out=is_word[1:-1], mode="clip")
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
    tok = span_hash(cp, starts, ends)
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
        full = np.zeros(m, dtype=U64)
        for j in range(n):
            full = (full ^ tok[j : j + m]) * U64(COMBINE)
        keep = tok_doc[:m] == tok_doc[n - 1 : n - 1 + m] if m else np.zeros(0, dtype=bool)
        full_doc = tok_doc[:m][keep]
        full = fmix64(full[keep])
        # Documents with fewer than n tokens: one shingle of all their tokens (empty: hash of "").
        short = np.flatnonzero(ntok < n)
        part = np.zeros(len(short), dtype=U64)
        for j in range(n - 1):
            has = ntok[short] > j
            pos = np.where(has, first[short] + j, 0)
            picked = tok[pos] if len(tok) else np.zeros(len(short), dtype=U64)
            part = np.where(has, (part ^ picked) * U64(COMBINE), part)
        part = fmix64(part)
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
    full = span_hash(cp, win_start, win_start + n)
    full_doc = np.repeat(np.arange(n_docs), count)
    short = np.flatnonzero(flen < n)
    part = span_hash(cp, dstart[short], dend[short])
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


@functools.lru_cache(maxsize=1)
def _unspaced_table() -> np.ndarray:
    """``is_unspaced[code point]`` for :data:`UNSPACED_RANGES`."""
    return range_table(UNSPACED_RANGES)
