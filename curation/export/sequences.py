"""What a trainer's sample holds, from one shard: documents with their end-of-document token,
best-fit bins as whole sequences, the rows of a shuffled phase, random truncation.

Every document reaches the trainer as its token ids followed by one end-of-document id (EOD),
the ``n_tokens + 1`` positions the mixture's packing reserved for it; a text that quotes the EOD
token's text is encoded as that text (``curation.tokens.EOD_TEXT``), never as the EOD id. A best-fit bin (a sequence
of a mid-training phase) is the concatenation of its spans (``packing/…/part-*.parquet``: rows'
token ranges); the spans of one sequence never exceed its length.

>>> tokens = with_eod([np.array([1, 2, 3]), np.array([4])], eod=0)
>>> spans = pd.DataFrame({"sequence": [0, 0, 1], "position": [0, 4, 0], "row": [0, 1, 0], "doc_id": ["a", "b", "a"],
...                       "copy": [0, 0, 1], "offset": [0, 0, 0], "length": [4, 2, 4]})
>>> [(b.tolist(), n) for b, n, _ in packed_bins(tokens, spans, seq_length=6)]
[([1, 2, 3, 0, 4, 0], [4, 2]), ([1, 2, 3, 0], [4])]
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np
import pandas as pd

from curation.mixture.groups import stable_hash


class TokenCountError(ValueError):
    """A document's token ids do not match the ``n_tokens`` its shard records (the counts a plan
    and a packing were made with): the tokenizer differs from the run's."""


class EodInDocumentError(TokenCountError):
    """A document's own ids hold the end-of-document id: Megatron (``--reset-attention-mask
    --reset-position-ids --eod-mask-loss``) would cut it into several documents. The text of the
    default ``--eod-token`` is encoded as text (``curation.tokens.EOD_TEXT``); another token's text
    can be matched as that token, in the counts the run planned with too (``curate export`` exits 4)."""


def with_eod(ids: Sequence[np.ndarray | None], eod: int, doc_ids: Sequence[str] | None = None, where: str = "",
             pad: int | None = None) -> list[np.ndarray | None]:
    """Each document's ids followed by the end-of-document id (``None``, a row left untokenized, stays):
    exactly one EOD per document, at its end (:class:`EodInDocumentError` when its ids hold one, or the
    ``pad`` id Megatron masks and maps to 0, naming the document by its ``doc_ids`` and the shard by
    ``where``, its phase and path).

    >>> with_eod([np.array([5, 0, 6])], eod=0, doc_ids=["web-7"], where="phase p1, shard shards/p1/web/high/part-00000.parquet")
    Traceback (most recent call last):
    ...
    curation.export.sequences.EodInDocumentError: phase p1, shard shards/p1/web/high/part-00000.parquet: document web-7 (row 0) holds the end-of-document id 0 at token 1 of 3: its text holds the EOD token's text; export with --eod-token <|endoftext|> (its text is encoded as text)
    """
    present = [np.asarray(x, dtype=np.int64) for x in ids if x is not None]
    joined = np.concatenate(present) if present else np.zeros(0, dtype=np.int64)
    if not (joined == eod).any() and (pad is None or not (joined == pad).any()):  # one pass over the shard's ids
        lengths = np.fromiter((len(x) for x in present), dtype=np.int64, count=len(present))
        cut = np.split(np.insert(joined, np.cumsum(lengths), np.int64(eod)), np.cumsum(lengths + 1)[:-1])
        parts = iter(cut)
        return [None if x is None else next(parts) for x in ids]
    out: list[np.ndarray | None] = []  # which document holds the id, and where
    for row, x in enumerate(ids):
        if x is None:
            out.append(None)
            continue
        x = np.asarray(x, dtype=np.int64)
        inside = np.flatnonzero(x == eod)
        doc = f"document {doc_ids[row]} (row {row})" if doc_ids is not None else f"row {row}"
        if len(inside):
            from curation.tokens import EOD_TEXT

            raise EodInDocumentError(f"{where + ': ' if where else ''}{doc} holds the end-of-document id {eod} at token {int(inside[0])} "
                                     f"of {len(x)}: its text holds the EOD token's text; export with --eod-token {EOD_TEXT} (its "
                                     "text is encoded as text)")
        if pad is not None and len(inside := np.flatnonzero(x == pad)):
            raise EodInDocumentError(f"{where + ': ' if where else ''}{doc} holds the pad id {pad} at token {int(inside[0])} of {len(x)}: "
                                     "its text holds the pad token's text, which megatron-core would mask and feed as id 0; export "
                                     "with another --pad-token (a special token no document holds)")
        out.append(np.append(x, np.int64(eod)))
    return out


def shard_ids(texts: Sequence[str], n_tokens: Sequence[int], doc_ids: Sequence[str], tok: str, where: str,
              rows: Sequence[int] | None = None) -> list[np.ndarray | None]:
    """The ids of a shard's rows (only ``rows`` when given; the others are ``None``), each checked
    against the ``n_tokens`` its shard records. A best-fit phase's spans name the rows its
    sequences use: a row the plan shows 0 times is never tokenized."""
    from curation.tokens import encode

    idx = range(len(texts)) if rows is None else sorted({int(r) for r in rows})
    ids = encode([texts[i] for i in idx], tok)
    check_counts(ids, [n_tokens[i] for i in idx], [doc_ids[i] for i in idx], where)
    out: list[np.ndarray | None] = [None] * len(texts)
    for i, x in zip(idx, ids, strict=True):
        out[i] = x
    return out


def check_counts(ids: Sequence[np.ndarray], n_tokens: Sequence[int], doc_ids: Sequence[str], where: str) -> None:
    """Raise :class:`TokenCountError` at the first document whose ids differ from its ``n_tokens``."""
    for x, n, d in zip(ids, n_tokens, doc_ids, strict=True):
        if len(x) != int(n):
            raise TokenCountError(
                f"{where}: document {d} has {len(x)} tokens with this tokenizer, its shard records {int(n)}; "
                "export with the tokenizer the run counted with (its manifests name it), or re-run the recipe with this version of curate"
            )


def packed_bins(tokens: Sequence[np.ndarray], spans: pd.DataFrame, seq_length: int) -> Iterator[tuple[np.ndarray, list[int], list[str]]]:
    """(ids, document lengths, document ids) of every sequence in ``spans``, in sequence order.

    ``tokens`` are the shard's rows with their EOD (:func:`with_eod`); a span takes
    ``tokens[row][offset:offset + length]``, so a document longer than the sequence arrives in
    chunks, each a document of its sequence.
    """
    ordered = spans.sort_values(["sequence", "position"], kind="stable")
    seq = ordered["sequence"].to_numpy()
    rows, offs, lens = ordered["row"].to_numpy(), ordered["offset"].to_numpy(), ordered["length"].to_numpy()
    ids = ordered["doc_id"].astype(object).to_numpy()
    bounds = np.flatnonzero(np.diff(seq)) + 1
    for part in np.split(np.arange(len(seq)), bounds) if len(seq) else []:
        pieces = []
        for i in part:
            doc = tokens[int(rows[i])]
            end = int(offs[i]) + int(lens[i])
            if end > len(doc):
                raise TokenCountError(f"span of {ids[i]} ends at token {end}, the document has {len(doc)} with its EOD")
            pieces.append(doc[int(offs[i]):end])
        out = np.concatenate(pieces)
        if len(out) > seq_length:
            raise ValueError(f"sequence {int(seq[part[0]])} holds {len(out)} tokens, more than {seq_length}")
        yield out, [int(lens[i]) for i in part], [str(ids[i]) for i in part]


def padded(ids: np.ndarray, seq_length: int, pad: int, eod: int) -> np.ndarray:
    """``ids`` (a bin: its documents, each with its EOD) padded to exactly ``seq_length`` (one Megatron
    sample): ``pad`` ids, then one ``eod`` as the last, whose input position ``--eod-mask-loss`` masks
    (its label is the next sample's first token). A bin one short of ``seq_length`` takes the EOD alone.

    >>> padded(np.array([5, 6, 0]), 7, pad=9, eod=0).tolist()
    [5, 6, 0, 9, 9, 9, 0]
    """
    if len(ids) >= seq_length:
        return ids
    fill = np.full(seq_length - len(ids), pad, dtype=np.int64)
    fill[-1] = eod
    return np.concatenate([np.asarray(ids, dtype=np.int64), fill])


def row_keys(seed: int, phase: str, doc_ids: Sequence[str], copies: Sequence[int]) -> np.ndarray:
    """The seeded order of a phase's rows: a hash of (seed, phase, document, copy), so the order does
    not depend on how shards were written or on the number of workers."""
    return stable_hash([f"{seed}|{phase}|row|{d}|{c}" for d, c in zip(doc_ids, copies, strict=True)])


def repeated(copies: np.ndarray, first_copy: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(row index, copy number) of every time the plan shows a row: row ``i`` ``copies[i]`` times.

    >>> [x.tolist() for x in repeated(np.array([2, 0, 1]))]
    [[0, 0, 2], [0, 1, 0]]
    """
    copies = np.asarray(copies, dtype=np.int64)
    rows = np.repeat(np.arange(len(copies)), copies)
    nth = np.arange(len(rows)) - np.repeat(np.cumsum(copies) - copies, copies)
    base = np.zeros(len(copies), dtype=np.int64) if first_copy is None else np.asarray(first_copy, dtype=np.int64)
    return rows, base[rows] + nth


def random_window(ids: np.ndarray, seq_length: int, key: int) -> tuple[np.ndarray, int]:
    """``ids`` cut to ``seq_length`` at an offset drawn from ``key`` when longer (GLM-4.5's random
    truncation of pre-training documents); (window, offset).

    >>> random_window(np.arange(10), 4, key=9)
    (array([2, 3, 4, 5]), 2)
    """
    if len(ids) <= seq_length:
        return ids, 0
    start = int(key % (len(ids) - seq_length + 1))
    return ids[start:start + seq_length], start
