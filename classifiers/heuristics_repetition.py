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

import numpy as np

_PARA = re.compile(r"\n\s*\n")
_U64 = np.uint64
_BASE = _U64(0x9E3779B97F4A7C15)


def _duplicates(items: list[str]) -> tuple[int, int]:
    """(number of items equal to an earlier item, their characters)."""
    seen: set[str] = set()
    n = chars = 0
    for it in items:
        if it in seen:
            n += 1
            chars += len(it)
        else:
            seen.add(it)
    return n, chars


def _ngram_hashes(ids: np.ndarray, max_n: int) -> list[np.ndarray]:
    """hashes[n] = uint64 hash of the word n-gram starting at each position (index 0, 1 unused)."""
    out: list[np.ndarray] = [np.zeros(0, dtype=_U64), ids.astype(_U64)]
    h = out[1]
    with np.errstate(over="ignore"):
        for n in range(2, max_n + 1):
            if len(ids) < n:
                out.append(np.zeros(0, dtype=_U64))
                continue
            h = h[:-1] * _BASE + ids[n - 1 :].astype(_U64) + _U64(n)
            out.append(h)
    return out


def repetition_signals(text: str, words: list[str] | None = None) -> dict[str, float]:
    """Duplicate line/paragraph fractions and top / duplicate word n-gram character fractions."""
    text = text or ""
    total = max(len(text), 1)
    lines = [ln for ln in text.split("\n") if ln.strip()]
    paras = [p for p in _PARA.split(text) if p.strip()]
    out: dict[str, float] = {}
    n_dup, c_dup = _duplicates(lines)
    out["dup_line_frac"] = n_dup / max(len(lines), 1)
    out["dup_line_char_frac"] = c_dup / total
    n_dup, c_dup = _duplicates(paras)
    out["dup_para_frac"] = n_dup / max(len(paras), 1)
    out["dup_para_char_frac"] = c_dup / total

    words = text.split() if words is None else words
    vocab: dict[str, int] = {}
    ids = np.fromiter((vocab.setdefault(w, len(vocab)) for w in words), dtype=np.int64, count=len(words))
    lens = np.fromiter((len(w) for w in words), dtype=np.int64, count=len(words))
    word_chars = max(int(lens.sum()), 1)
    hashes = _ngram_hashes(ids, 10)
    csum = np.concatenate([[0], np.cumsum(lens)])
    for n in (2, 3, 4):
        h = hashes[n]
        value = 0.0
        if len(h):
            uniq, first, counts = np.unique(h, return_index=True, return_counts=True)
            top = int(np.argmax(counts))
            if counts[top] > 1:
                start = first[top]
                ngram_chars = csum[start + n] - csum[start] + (n - 1)
                value = min(float(counts[top] * ngram_chars) / total, 1.0)
        out[f"top_{n}gram_char_frac"] = value
    for n in range(5, 11):
        h = hashes[n]
        value = 0.0
        if len(h):
            _, inverse, counts = np.unique(h, return_inverse=True, return_counts=True)
            dup_starts = np.flatnonzero(counts[inverse] > 1)
            if len(dup_starts):
                cover = np.zeros(len(words) + 1, dtype=np.int64)
                np.add.at(cover, dup_starts, 1)
                np.add.at(cover, dup_starts + n, -1)
                covered = np.cumsum(cover[:-1]) > 0
                value = float(lens[covered].sum()) / word_chars
        out[f"dup_{n}gram_char_frac"] = value
    return out
