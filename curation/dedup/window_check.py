"""SemDeDup's similarity pass with a pair check: the window check, and the text check of a language.

An embedder sees a page's first ``max_seq_length`` tokens. Two pages cut by that window can open
with the same long boilerplate (a cookie banner, a menu) and share nothing else; their vectors are
then near-identical. With the window check, a pair above its cosine bar where at least one page was
cut counts only when the two **whole** texts overlap (estimated Jaccard of their word sketches,
:func:`curation.dedup.vectors.word_sketches`). Rows of a text-check language have every pair above
the bar checked (their character-bigram sketches), cut or not. A failing pair is left out of the
maximum, as in :func:`curation.dedup.semantic.max_similarity_to_earlier`, whose pass this is with a
check decided per pair instead of per row.

>>> v = np.array([[1, 0], [1, 0], [1, 0]], dtype=np.float32)
>>> sk = np.array([[1, 1], [2, 2], [1, 1]], dtype=np.uint32)     # rows 0 and 2 share their text
>>> cut = np.array([True, False, False])
>>> s, j = checked_max_similarity(v, bars=np.full(3, 0.9), sketches=sk, min_jaccard=np.full(3, 0.5),
...                               always=np.zeros(3, bool), cut=cut)
>>> s.tolist(), j.tolist()  # row 1 fails against the cut row 0, row 2 passes against it
([-1.0, -1.0, 1.0], [-1, -1, 0])
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from curation.dedup.semantic import MAX_BLOCK_ELEMENTS, PAIRS_PER_CHECK, grouped_pass
from curation.dedup.vectors import sketch_jaccard


def is_cut(n_tokens: np.ndarray, max_seq_length: int) -> np.ndarray:
    """Whether the embedder's window cut each page: its token count (``n_tokens``, counted at ingest)
    beyond ``max_seq_length``; unknown counts are taken as cut (the check is then the safe side).

    The count is the ingest tokenizer's (Qwen BPE by default), not the embedder's WordPiece: of the
    1,664 real web pages of ``benchmarks/semdedup`` that the window cuts, this flags 1,659, and 19
    that fit (benchmarks/semdedup/RESULTS.md §6). Cheap: no second tokenizer pass.

    >>> is_cut(np.array([10, 300, np.nan]), 256).tolist()
    [False, True, True]
    """
    n = np.asarray(n_tokens, dtype=np.float64)
    return ~(n <= max_seq_length)


def checked_max_similarity(
    vectors: np.ndarray, *, bars: np.ndarray, sketches: np.ndarray, min_jaccard: np.ndarray, always: np.ndarray,
    cut: np.ndarray, block_rows: int = 1024, max_elements: int = MAX_BLOCK_ELEMENTS,
) -> tuple[np.ndarray, np.ndarray]:
    """For row ``i`` of unit ``vectors``: max cosine to an earlier row ``j`` and that row, leaving out
    the pairs above ``bars[i]`` (NaN: never checked) that need the check and fail it.

    A pair needs the check when ``always[i]`` (a text-check language) or ``cut[i]`` or ``cut[j]``;
    it fails when the estimated Jaccard of ``sketches[i]`` and ``sketches[j]`` is below
    ``min_jaccard[i]``. Blocked as :func:`curation.dedup.semantic.max_similarity_to_earlier`.
    """
    x = np.ascontiguousarray(vectors, dtype=np.float32)
    n = len(x)
    best = np.full(n, -1.0, dtype=np.float32)
    nearest = np.full(n, -1, dtype=np.int64)
    rows = int(max(1, min(block_rows, max_elements // max(n, 1))))
    bar = np.nan_to_num(np.asarray(bars, dtype=np.float64), nan=np.inf)
    for a in range(1, n, rows):  # row 0 has no earlier member
        b = min(n, a + rows)
        s = x[a:b] @ x[:b].T
        later = np.arange(b)[None, :] >= (a + np.arange(b - a))[:, None]
        s[later] = -np.inf
        rr, cc = np.nonzero(s > bar[a:b, None])
        need = always[a + rr] | cut[a + rr] | cut[cc]
        rr, cc = rr[need], cc[need]
        for c in range(0, len(rr), PAIRS_PER_CHECK):  # bounded memory however many pairs pass the bar
            r, col = rr[c : c + PAIRS_PER_CHECK], cc[c : c + PAIRS_PER_CHECK]
            fails = sketch_jaccard(sketches[a + r], sketches[col]) < min_jaccard[a + r]
            s[r[fails], col[fails]] = -np.inf
        j = np.argmax(s, axis=1)
        best[a:b] = np.maximum(s[np.arange(b - a), j], -1.0)
        nearest[a:b] = np.where(np.isfinite(s[np.arange(b - a), j]), j, -1)
    return best, nearest


def checked_similarity_pass(members: pd.DataFrame, vectors: np.ndarray, *, bars: np.ndarray, sketches: np.ndarray,
                            min_jaccard: np.ndarray, always: np.ndarray, cut: np.ndarray, block_rows: int = 1024) -> pd.DataFrame:
    """:func:`curation.dedup.semantic.similarity_pass` with :func:`checked_max_similarity` in each
    (source, cluster) group; every array is row-aligned with ``members``."""

    def group_max(pos: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return checked_max_similarity(vectors[pos], bars=bars[pos], sketches=sketches[pos], min_jaccard=min_jaccard[pos],
                                      always=always[pos], cut=cut[pos], block_rows=block_rows)

    return grouped_pass(members, len(vectors), group_max)
