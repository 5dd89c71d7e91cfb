"""Row slices: a heavy per-row step spread over more tasks than there are partitions.

A scoring step that reads one source works on that source's partitions only, and a corpus with
few partitions per source leaves workers idle: 3 web partitions on 2 workers take two rounds,
at most 1.5× one process (benchmarks/recipe). :func:`sliced_parts` cuts every partition into
at most :data:`MAX_SLICES` contiguous row ranges of about :data:`SLICE_CHARS` characters of
``text`` each, runs the step on each range as a task of its own, and concatenates the pieces in
row order.

The cut depends on the partition's texts alone, never on the workers, so a run gives the same
output on any cluster (and in one process). For a row-wise step (each output row depends on its
input row only, as every scorer here) the concatenation equals the step over the whole
partition; a partition under ``SLICE_CHARS`` is one slice, exactly as before.

>>> df = pd.DataFrame({"text": ["a" * 10, "b" * 10, "c" * 10, "d" * 10]})
>>> [len(p) for p in split_rows(df, slices=4, slice_chars=15)]
[1, 2, 1, 0]
>>> [len(p) for p in split_rows(df, slices=4, slice_chars=10)]
[1, 1, 1, 1]
>>> [len(p) for p in split_rows(df, slices=4, slice_chars=25)]
[2, 2, 0, 0]
>>> [len(p) for p in split_rows(df, slices=4, slice_chars=1000)]
[4, 0, 0, 0]
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

#: Characters of text per slice: 2M characters score in ~1 s on one core (code_quality, the
#: slowest scorer of the CPU profile), long enough that a task's fixed cost (~ms) is noise.
SLICE_CHARS = 2_000_000
#: Slices per partition at most: enough to balance a handful of partitions per source on a few
#: workers; on a corpus with many partitions per source slicing adds tasks and balances nothing,
#: so it stays small (at 128 MB partitions a slice is 32 MB).
MAX_SLICES = 4


def split_rows(df: pd.DataFrame, weight: str = "text", slices: int | None = None, slice_chars: int | None = None) -> tuple[pd.DataFrame, ...]:
    """``slices`` (default :data:`MAX_SLICES`) contiguous row ranges of ``df`` (the last ones
    empty when the partition needs fewer), cut at near-equal shares of ``weight``'s characters
    (rows otherwise), about ``slice_chars`` (default :data:`SLICE_CHARS`) each."""
    slices = MAX_SLICES if slices is None else slices
    slice_chars = SLICE_CHARS if slice_chars is None else slice_chars
    n = len(df)
    if weight in df.columns:
        sizes = np.fromiter((len(t) if isinstance(t, str) else 0 for t in df[weight]), dtype=np.int64, count=n)
    else:
        sizes = np.ones(n, dtype=np.int64)
    total = int(sizes.sum())
    k = max(1, min(slices, n, math.ceil(total / slice_chars))) if n else 1
    cum = np.concatenate([[0], np.cumsum(sizes)])  # cum[i]: characters before row i
    bounds = [0]
    for j in range(1, k):
        target = total * j / k
        i = int(np.searchsorted(cum, target, side="left"))
        if i > 0 and (i > n or target - cum[i - 1] <= cum[i] - target):
            i -= 1  # the row boundary nearest the share
        bounds.append(min(max(i, bounds[-1]), n))  # monotone: slices never overlap
    bounds.append(n)
    pieces = [df.iloc[bounds[j]:bounds[j + 1]] for j in range(k)]
    return tuple(pieces + [df.iloc[n:n]] * (slices - k))


def call_slice(j: int, fn: Callable[..., pd.DataFrame], number: int, rows: pd.DataFrame, *args: Any) -> pd.DataFrame | None:
    """``fn(number, rows, *args)``; ``None`` for an empty slice after the first (the first always
    runs, so a partition the step has nothing to do in is still seen once, as before)."""
    if j and not len(rows):
        return None
    return fn(number, rows, *args)


def concat_pieces(pieces: list[pd.DataFrame | None]) -> pd.DataFrame:
    """The step's pieces in row order, with a fresh RangeIndex. Empty pieces are left out (an
    empty frame can carry other columns or dtypes than a full one); all empty: the first."""
    pieces = [p for p in pieces if p is not None]
    full = [p for p in pieces if len(p)]
    if not full:
        return pieces[0]
    if len(full) == 1:
        return full[0].reset_index(drop=True)
    return pd.concat(full, ignore_index=True)


def sliced_parts(parts: list[Any], fn: Callable[..., pd.DataFrame], *args: Any, weight: str = "text") -> list[Any]:
    """One ``dask.delayed`` frame per partition: ``fn(number, rows, *args)`` over the partition's
    row slices, concatenated (``parts``: a dataframe's ``to_delayed()``)."""
    from dask import delayed

    out = []
    for number, part in enumerate(parts):
        pieces = delayed(split_rows, nout=MAX_SLICES)(part, weight, MAX_SLICES, SLICE_CHARS)
        out.append(delayed(concat_pieces)([delayed(call_slice)(j, fn, number, pieces[j], *args) for j in range(MAX_SLICES)]))
    return out
