"""Row slices: a heavy per-row step spread over more tasks than there are partitions.

A scoring step that reads one source works on that source's partitions only, and a corpus with
few partitions per source leaves workers idle: 3 web partitions on 2 workers take two rounds,
at most 1.5× one process (benchmarks/recipe). So every stage writes its ``docs/`` parts in row
groups of about :data:`SLICE_CHARS` characters of ``text`` (at most :data:`MAX_SLICES` per
part, :func:`slice_groups`), and :func:`sliced_pieces` runs a step on each row group of a part
as a task of its own that reads that group alone; the task that writes the part concatenates
the pieces in row order (:func:`concat_pieces`; a task apart for the concatenation cost a
scheduler round trip per part for no work).

Each slice task reads its own rows. Handed a partition read by another task, Dask's scheduler
places the slices on the worker that holds it (it chooses among the holders of a task's
dependencies), which measured no gain; slice tasks that read the whole part and cut it spend
the gain on the extra reads. Tasks with no dependency are
queued to whichever worker is free, and a row group is read once.

The cut depends on the texts alone, never on the workers, so a run gives the same output on any
cluster and in one process. For a row-wise step (each output row depends on its input row only,
as every scorer here) the concatenation equals the step over the whole part; a part written
with one row group (a small one, or by an older version) is one task, exactly as before.

>>> df = pd.DataFrame({"text": ["a" * 10, "b" * 10, "c" * 10, "d" * 10]})
>>> slice_bounds(df["text"], 3), slice_bounds(df["text"], 4), slice_bounds(df["text"], 1)
([0, 1, 3, 4], [0, 1, 2, 3, 4], [0, 4])
>>> slice_groups(df["text"], 4, slice_chars=15), slice_groups(df["text"], 4, slice_chars=100), slice_groups(None, 0)
([0, 1, 3, 4], [0, 4], [0, 0])
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Sequence
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

#: Characters of text per slice: 2M characters of code score in ~1 s on one core (code_quality,
#: the slowest scorer of the CPU profile), long enough that a task's fixed cost is small.
SLICE_CHARS = 2_000_000
#: Slices per partition at most: enough to balance a handful of partitions per source on a few
#: workers. On a corpus with many partitions per source slicing balances nothing and adds
#: tasks, so it stays small (a 128 MB partition is 4 row groups of 32 MB).
MAX_SLICES = 4


def slice_groups(texts: pd.Series | None, n: int, slice_chars: int | None = None, max_slices: int | None = None) -> list[int]:
    """Row-group offsets for a part of ``n`` rows: ``ceil(characters / slice_chars)`` groups
    (between 1 and ``max_slices``) of near-equal characters of ``texts``."""
    if texts is None or not n:
        return [0, n]
    return sized_groups(_sizes(texts), slice_chars, max_slices)


def sized_groups(sizes: np.ndarray, slice_chars: int | None = None, max_slices: int | None = None) -> list[int]:
    """:func:`slice_groups` from the characters of each row (``sizes``, at least one row)."""
    slice_chars = SLICE_CHARS if slice_chars is None else slice_chars
    max_slices = MAX_SLICES if max_slices is None else max_slices
    k = max(1, min(max_slices, len(sizes), math.ceil(int(sizes.sum()) / slice_chars)))
    return _bounds(sizes, k)


def arrow_sizes(column: pa.ChunkedArray) -> np.ndarray | None:
    """:func:`slice_groups`' characters per row of a ``text`` column as Arrow (0 where null), or
    ``None`` for a column that is not of strings. A Python string converted to Arrow is valid
    UTF-8, so its code points are ``len`` of the string.

    >>> arrow_sizes(pa.chunked_array([["ab", None, "é"]])).tolist(), arrow_sizes(pa.chunked_array([[1]]))
    ([2, 0, 1], None)
    """
    if not (pa.types.is_string(column.type) or pa.types.is_large_string(column.type)):
        return None
    return np.asarray(pc.fill_null(pc.utf8_length(column), 0).to_numpy(), dtype=np.int64)


def slice_count(path: str) -> int:
    """Slices of the Parquet part ``path``: its row groups (footer only), at most ``MAX_SLICES``."""
    return max(1, min(MAX_SLICES, pq.ParquetFile(path).metadata.num_row_groups))


def slice_bounds(texts: pd.Series, k: int) -> list[int]:
    """``k + 1`` row offsets cutting the rows into ``k`` contiguous slices of near-equal
    characters of ``texts``."""
    return _bounds(_sizes(texts), k)


def _sizes(texts: pd.Series) -> np.ndarray:
    return np.fromiter((len(t) if isinstance(t, str) else 0 for t in texts), dtype=np.int64, count=len(texts))


def _bounds(sizes: np.ndarray, k: int) -> list[int]:
    rows = len(sizes)
    cum = np.concatenate([[0], np.cumsum(sizes)])  # cum[i]: characters before row i
    total = int(cum[-1])
    bounds = [0]
    for j in range(1, k):
        target = total * j / k
        i = int(np.searchsorted(cum, target, side="left"))
        if i > rows or (i > 0 and target - cum[i - 1] <= cum[i] - target):
            i -= 1  # the row boundary nearest the share
        bounds.append(min(max(i, bounds[-1]), rows))  # monotone: slices never overlap
    bounds.append(rows)
    return bounds


def run_slice(path: str, columns: list[str] | None, j: int, k: int, fn: Callable[..., pd.DataFrame], number: int, *args: Any,
              sources: Collection[str] | None = None) -> pd.DataFrame | None:
    """``fn(number, rows, *args)`` on slice ``j`` of ``k`` of the part ``path`` (its share of the
    row groups, read alone); ``None`` for an empty slice after the first (the first always runs,
    so a part the step has nothing to do in is still seen once, as before).

    ``columns``: those ``fn`` reads (the ones the part has; ``None``: all). ``sources``: the sources
    ``fn`` works on; a slice without a row of them is read by its ``source`` column alone, and
    ``fn`` gets none of its rows (same columns), as it would keep none of them."""
    from pipelines.io import read_part

    share = None if k == 1 else (j, k)
    pf = pq.ParquetFile(path) if columns is not None or sources is not None else None
    schema = pf.schema_arrow if pf is not None else None
    if columns is not None:  # in the part's order, as a read of every column gives them
        wanted = set(columns)
        columns = [c for c in schema.names if c in wanted]
    if sources is not None and "source" in schema.names:
        # the check reads the source column alone, as Arrow (one open of the file, no pandas frame)
        g = pf.metadata.num_row_groups
        source = pf.read_row_groups(list(range(j * g // k, (j + 1) * g // k)), columns=["source"]).column(0)
        if not has_source(source, sources):
            if j and not len(source):
                return None
            return fn(number, schema.empty_table().select(columns if columns is not None else schema.names).to_pandas(), *args)
    df = read_part(path, columns, share)
    if j and not len(df):
        return None
    return fn(number, df, *args)


def has_source(column: pa.ChunkedArray, sources: Collection[str]) -> bool:
    """Whether a ``source`` column (as Arrow) holds a row of ``sources`` (``Series.isin(...).any()``).

    >>> has_source(pa.chunked_array([["code", None]]), ["web"]), has_source(pa.chunked_array([["web"]], pa.large_string()), ["web"])
    (False, True)
    """
    if not len(column) or pa.types.is_null(column.type):
        return False
    try:
        return bool(pc.any(pc.is_in(column, value_set=pa.array(sorted(sources), type=pa.string()))).as_py())
    except (pa.ArrowNotImplementedError, pa.ArrowInvalid, pa.ArrowTypeError):  # a column of another type
        return bool(column.to_pandas().isin(list(sources)).any())


def concat_pieces(pieces: list[pd.DataFrame | None]) -> pd.DataFrame:
    """The step's pieces in row order, with a fresh RangeIndex. Empty pieces are left out (an
    empty frame can carry other columns or dtypes than a full one); all empty: the first."""
    present = [p for p in pieces if p is not None]
    full = [p for p in present if len(p)]
    if not full:
        return present[0]
    if len(full) == 1:
        return full[0].reset_index(drop=True)
    return pd.concat(full, ignore_index=True)


def sliced_pieces(files: Sequence[str], columns: list[str] | None, fn: Callable[..., pd.DataFrame], *args: Any,
                  whole: Collection[int] = (), sources: Collection[str] | None = None) -> list[list[Any]]:
    """Per partition file, its ``dask.delayed`` pieces: ``fn(number, rows, *args)`` over each of
    the file's row slices (``columns`` read); :func:`concat_pieces` puts them back in row order.
    The partitions numbered in ``whole`` run as one piece (the step has nothing to do there).
    Each piece's key ends with its partition number, as a dataframe's partitions' keys do, so
    :func:`pipelines.progress.compute_with_progress`'s ``costs`` rank the pieces by partition.
    ``sources``: as :func:`run_slice`'s."""
    import uuid

    from dask import delayed

    token = uuid.uuid4().hex
    scope = sorted(sources) if sources is not None else None
    return [[delayed(run_slice)(path, columns, j, k, fn, number, *args, sources=scope, dask_key_name=(f"run_slice-{token}-{j}", number))
             for j in range(k)]
            for number, path, k in ((n, p, 1 if n in whole else slice_count(p)) for n, p in enumerate(files))]
