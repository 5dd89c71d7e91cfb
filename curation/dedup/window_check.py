"""SemDeDup's window check: which pages the embedder's window cut.

An embedder sees a page's first ``max_seq_length`` tokens. Two pages cut by that window can open
with the same long boilerplate (a cookie banner, a menu) and share nothing else; their vectors are
then near-identical. With the window check, a pair above its cosine bar where at least one page was
cut counts only when the two **whole** texts overlap (estimated Jaccard of their word sketches,
:func:`curation.dedup.vectors.word_sketches`): the ``cut`` and ``always`` arguments of
:func:`curation.dedup.semantic.max_similarity_to_earlier`, which checks such pairs only.

>>> from curation.dedup.semantic import max_similarity_to_earlier
>>> v = np.array([[1, 0], [1, 0], [1, 0]], dtype=np.float32)
>>> sk = np.array([[1, 1], [2, 2], [1, 1]], dtype=np.uint32)     # rows 0 and 2 share their text
>>> s, j = max_similarity_to_earlier(v, bars=np.full(3, 0.9), sketches=sk, min_jaccard=0.5,
...                                  always=np.zeros(3, bool), cut=np.array([True, False, False]))
>>> s.tolist(), j.tolist()  # row 1 fails against the cut row 0, row 2 passes against it
([-1.0, -1.0, 1.0], [-1, -1, 0])
"""

from __future__ import annotations

import numpy as np


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
