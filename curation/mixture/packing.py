"""Best-fit packing of documents into fixed-length sequences (Ding et al. 2024, "Fewer Truncations").

Documents longer than the context are split into context-sized chunks (only those); chunks are
sorted longest first and each goes into the fullest sequence where it still fits (best-fit
decreasing), else into a new sequence. A long document's chunks are laid out as one run of
consecutive sequences: each full chunk fills its sequence, and its last chunk opens the next one
(position 0), so the token after a full chunk in sequence order is the document's own next token
(a trainer that reads one token past a sequence, as Megatron's ``GPTDataset`` does, labels the
chunk's last position with it). The fullest fitting sequence is found in O(log L) with a
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


def best_fit_pack(lengths: list[int] | np.ndarray, seq_length: int, chain_chunks: bool = True) -> Packing:
    """Pack documents of ``lengths`` tokens into sequences of ``seq_length`` (best-fit decreasing).

    With ``chain_chunks`` (the rule the mixture packs with) the last chunk of a document longer than
    the sequence opens a sequence of its own, placed right after the full chunks so that best fit
    fills it with the shorter ones, and the sequences are
    numbered so that each long document's chunks are consecutive, its last chunk at position 0 of
    its sequence; other sequences keep their best-fit order. Without it, its last chunk goes where
    best fit puts it (:func:`chunk_continuations` counts the full chunks then followed by another
    document's token).

    >>> p = best_fit_pack([3, 9, 2], seq_length=4)
    >>> p.spans[["sequence", "position", "doc", "offset", "length"]].values.tolist()
    [[0, 0, 1, 0, 4], [1, 0, 1, 4, 4], [2, 0, 1, 8, 1], [2, 1, 0, 0, 3], [3, 0, 2, 0, 2]]
    >>> chunk_continuations(p, [3, 9, 2]), chunk_continuations(best_fit_pack([3, 9, 2], 4, chain_chunks=False), [3, 9, 2])
    ((2, 0), (2, 1))
    """
    if seq_length < 1:
        raise ValueError("seq_length must be ≥ 1")
    doc, offset, length = split_chunks(np.asarray(lengths, dtype=np.int64), seq_length)
    # the last chunk of a long document (offset > 0, shorter than a sequence) opens a sequence; these
    # are placed right after the full chunks, so that best fit fills their sequences with the others
    opens = (offset > 0) & (length < seq_length) if chain_chunks else np.zeros(len(doc), dtype=bool)
    # Longest first; ties in input order (lexsort's last key is the primary one).
    order = np.lexsort((offset, doc, -length, ~opens & (length < seq_length)))
    tree = _CapacityTree(seq_length)
    open_bins: dict[int, list[int]] = {}
    fill: list[int] = []
    seq = np.empty(len(order), dtype=np.int64)
    pos = np.empty(len(order), dtype=np.int64)
    lengths_sorted = length[order].tolist()
    tail = opens[order].tolist()
    for rank, size in enumerate(lengths_sorted):
        cap = -1 if tail[rank] else tree.first_at_least(size)
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
    if chain_chunks and len(order):
        seq = _chained_numbers(seq, doc[order], offset[order], pos, len(fill))
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


def _chained_numbers(seq: np.ndarray, doc: np.ndarray, offset: np.ndarray, pos: np.ndarray, n_seq: int) -> np.ndarray:
    """Sequence numbers that put each long document's chunks in consecutive sequences: a sequence
    opened by a chunk of a document cut in several sorts at (that document's first sequence, the
    chunk's offset), any other at (its own number, 0)."""
    first = pos == 0  # the chunk that opened each sequence
    lead_doc = np.empty(n_seq, dtype=np.int64)
    lead_off = np.empty(n_seq, dtype=np.int64)
    lead_doc[seq[first]], lead_off[seq[first]] = doc[first], offset[first]
    start = np.full(int(doc.max()) + 1, n_seq, dtype=np.int64)
    np.minimum.at(start, doc[offset == 0], seq[offset == 0])  # each document's first chunk's sequence
    cut = np.zeros(len(start), dtype=bool)
    cut[doc[offset > 0]] = True  # documents in several chunks
    chained = cut[lead_doc]
    key_seq = np.where(chained, start[lead_doc], np.arange(n_seq))
    key_off = np.where(chained, lead_off, 0)
    rank = np.empty(n_seq, dtype=np.int64)
    rank[np.lexsort((key_off, key_seq))] = np.arange(n_seq)
    return rank[seq]


def chunk_continuations(p: Packing, lengths: list[int] | np.ndarray) -> tuple[int, int]:
    """(full chunks that do not end their document, those of them whose next token in sequence
    order is not their document's next token): the labels a reader of one token past each sequence
    takes from another document."""
    lengths = np.asarray(lengths, dtype=np.int64)
    s = p.spans
    if not len(s):
        return 0, 0
    ends = (s["offset"] + s["length"]).to_numpy()
    full = ((s["length"] == p.seq_length).to_numpy()) & (ends < lengths[s["doc"].to_numpy()])
    at = {(int(q), 0): (int(d), int(o)) for q, pp, d, o in zip(s["sequence"], s["position"], s["doc"], s["offset"], strict=True) if pp == 0}
    wrong = sum(at.get((int(q) + 1, 0)) != (int(d), int(e))
                for q, d, e in zip(s["sequence"][full], s["doc"][full], ends[full], strict=True))
    return int(full.sum()), int(wrong)


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
