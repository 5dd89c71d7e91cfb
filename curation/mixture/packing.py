"""Best-fit packing of documents into fixed-length sequences (Ding et al. 2024, "Fewer Truncations").

Documents longer than the context are split into context-sized chunks (only those); chunks are
sorted longest first and each goes into the fullest sequence where it still fits (best-fit
decreasing), else into a new sequence. The fullest fitting sequence is found in O(log L) with a
segment tree over remaining capacities, so packing N chunks costs O(N log N) for the sort plus
O(N log L) for the placement.

>>> p = best_fit_pack([5, 3, 4, 2, 6], seq_length=10)
>>> p.n_sequences, round(p.fill_rate, 2)
(2, 1.0)
>>> sorted(p.spans.groupby("sequence")["length"].sum().tolist())
[10, 10]
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd

SPAN_COLUMNS = ("sequence", "position", "doc", "offset", "length")


@dataclasses.dataclass(frozen=True)
class Packing:
    """The result: one row per chunk placed (``spans``) and the sequence count."""

    spans: pd.DataFrame  #: sequence, position (token offset in the sequence), doc (input index), offset, length
    n_sequences: int
    seq_length: int

    @property
    def tokens(self) -> int:
        return int(self.spans["length"].sum()) if len(self.spans) else 0

    @property
    def fill_rate(self) -> float:
        """Tokens placed / (sequences × sequence length); 1.0 for an empty input."""
        cap = self.n_sequences * self.seq_length
        return self.tokens / cap if cap else 1.0


class _CapacityTree:
    """Counts of open sequences per remaining capacity, with "smallest capacity ≥ s" queries."""

    def __init__(self, max_capacity: int) -> None:
        size = 1
        while size < max_capacity + 1:
            size *= 2
        self.size = size
        self.tree = [0] * (2 * size)

    def add(self, capacity: int, delta: int) -> None:
        i = capacity + self.size
        tree = self.tree
        while i:
            tree[i] += delta
            i >>= 1

    def first_at_least(self, s: int) -> int:
        """The smallest capacity ≥ ``s`` held by an open sequence, or -1."""
        tree, size = self.tree, self.size
        i = s + size
        if tree[i]:
            return s
        while i > 1:
            if not i & 1 and tree[i + 1]:
                i += 1
                break
            i >>= 1
        else:
            return -1
        while i < size:
            i = 2 * i if tree[2 * i] else 2 * i + 1
        return i - size


def split_chunks(lengths: np.ndarray, seq_length: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(doc index, offset, length) of the chunks: documents longer than the context are cut.

    >>> [a.tolist() for a in split_chunks(np.array([3, 7]), 4)]
    [[0, 1, 1], [0, 0, 4], [3, 4, 3]]
    """
    lengths = np.asarray(lengths, dtype=np.int64)
    if (lengths < 0).any():
        raise ValueError("document lengths must be ≥ 0")
    n_chunks = np.maximum(1, -(-lengths // seq_length))
    doc = np.repeat(np.arange(len(lengths), dtype=np.int64), n_chunks)
    starts = np.cumsum(n_chunks) - n_chunks
    k = np.arange(len(doc), dtype=np.int64) - np.repeat(starts, n_chunks)
    offset = k * seq_length
    length = np.minimum(seq_length, lengths[doc] - offset)
    keep = length > 0
    return doc[keep], offset[keep], length[keep]


def best_fit_pack(lengths: list[int] | np.ndarray, seq_length: int) -> Packing:
    """Pack documents of ``lengths`` tokens into sequences of ``seq_length`` (best-fit decreasing)."""
    if seq_length < 1:
        raise ValueError("seq_length must be ≥ 1")
    doc, offset, length = split_chunks(np.asarray(lengths, dtype=np.int64), seq_length)
    # Longest first; ties in input order (lexsort's last key is the primary one).
    order = np.lexsort((offset, doc, -length))
    tree = _CapacityTree(seq_length)
    open_bins: dict[int, list[int]] = {}
    fill: list[int] = []
    seq = np.empty(len(order), dtype=np.int64)
    pos = np.empty(len(order), dtype=np.int64)
    lengths_sorted = length[order].tolist()
    for rank, size in enumerate(lengths_sorted):
        cap = tree.first_at_least(size)
        if cap < 0:
            b = len(fill)
            fill.append(0)
        else:
            stack = open_bins[cap]
            b = stack.pop()
            tree.add(cap, -1)
        seq[rank] = b
        pos[rank] = fill[b]
        fill[b] += size
        left = seq_length - fill[b]
        if left > 0:
            open_bins.setdefault(left, []).append(b)
            tree.add(left, 1)
    spans = pd.DataFrame(
        {
            "sequence": seq,
            "position": pos,
            "doc": doc[order],
            "offset": offset[order],
            "length": length[order],
        }
    ).sort_values(["sequence", "position"], kind="stable").reset_index(drop=True)
    return Packing(spans, len(fill), seq_length)


def check_packing(p: Packing, lengths: list[int] | np.ndarray) -> None:
    """Raise AssertionError unless every token of every document is placed exactly once, within bounds."""
    spans = p.spans
    lengths = np.asarray(lengths, dtype=np.int64)
    if len(spans):
        end = spans["position"] + spans["length"]
        assert (end <= p.seq_length).all(), "a chunk runs past the end of its sequence"
        for _, g in spans.groupby("sequence"):
            starts = g["position"].to_numpy()
            ends = (g["position"] + g["length"]).to_numpy()
            assert (starts[1:] >= ends[:-1]).all(), "chunks overlap in a sequence"
    covered = spans.groupby("doc")["length"].sum() if len(spans) else pd.Series(dtype="int64")
    for i, n in enumerate(lengths):
        assert int(covered.get(i, 0)) == int(n), f"document {i}: {covered.get(i, 0)} tokens placed of {n}"
