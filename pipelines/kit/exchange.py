"""A hash exchange through files: the rows ``frame.shuffle(on=...)`` would give each output
partition, in ``2n`` tasks instead of Dask's ``n² + 2n``.

Dask's task shuffle of ``n`` partitions into ``n`` is one split task per input, one ``getitem``
task per (input, output) pair and one concatenation per output: 143 tasks for 11 partitions,
~60 % of a whole 70 MB recipe's tasks over its four shuffles (ids, URLs, exact hashes, MinHash
bands and clusters, SemDeDup clusters), each one a scheduler transition, a message to a worker
and, for half of them, a transfer between workers (benchmarks/recipe). Here each input
partition writes one Arrow IPC file holding one record batch per output partition
(:meth:`Artifact.write_routed`) and each output partition reads its batch of every file
(:meth:`Artifact.read_routed`): one task per input, one per output, and the rows move through
the local disk instead of the workers' event loops.

The rows an output partition gets, and their order, are Dask's: the destination of a row is
Dask's own partitioning index (numeric key columns hashed as float64, as
``AssignPartitioningIndex`` does), and an output partition's rows come in input-partition order,
each input's rows in their order, as Dask's concatenation of its stable splits. The index is not
kept (no caller reads it); object columns come back as object, ``None`` where missing, as they
went in.

>>> import tempfile; from pathlib import Path; folder = Path(tempfile.mkdtemp())
>>> parts = [pd.DataFrame({"k": ["a", "b", "c"], "v": [1, 2, 3]}), pd.DataFrame({"k": ["c", "a"], "v": [4, 5]})]
>>> for number, part in enumerate(parts):
...     _ = route_part(number, part, ["k"], 2, Artifact(folder))
>>> out = [read_exchanged(n, Artifact(folder), parts[0].iloc[:0]) for n in range(2)]
>>> sorted(sum((o["v"].tolist() for o in out), []))
[1, 2, 3, 4, 5]
>>> all(o["k"].nunique() == len(set(o["k"])) and not set(o["k"]) & set(p["k"]) for o in out for p in out if p is not o)
True
"""

from __future__ import annotations

import dask.dataframe as dd
import numpy as np
import pandas as pd
from dask.dataframe.dask_expr._shuffle import _is_numeric_cast_type
from dask.dataframe.shuffle import partitioning_index

from pipelines.kit.artifact import Artifact


def destinations(df: pd.DataFrame, on: list[str], npartitions: int) -> np.ndarray:
    """The output partition of each row of ``df``: Dask's shuffle index for key columns ``on``."""
    keys = df[on]
    cast = {c: np.float64 for c, dtype in keys.dtypes.items() if _is_numeric_cast_type(dtype)}
    if cast:
        keys = keys.astype(cast, errors="ignore")
    return np.asarray(partitioning_index(keys, npartitions), dtype=np.int64)


def route_part(number: int, df: pd.DataFrame, on: list[str], npartitions: int, folder: Artifact) -> pd.Series:
    """Write input partition ``number``'s rows as one batch per output partition; return how many."""
    return pd.Series([folder.write_routed(df.reset_index(drop=True), number, destinations(df, on, npartitions), npartitions)],
                     dtype="int64")


def read_after_routing(routes: dd.Series, npartitions: int, folder: Artifact, meta: pd.DataFrame) -> dd.DataFrame:
    """The exchanged partitions as a frame whose graph holds the routing (``routes``: the
    :func:`route_part` tasks, not computed yet): each read waits for one task that waits for
    every route, so the compute that uses the frame routes and reads without a barrier between."""
    import uuid

    from dask import delayed

    token = uuid.uuid4().hex
    done = delayed(routed)(routes.to_delayed(), dask_key_name=f"routed-{token}")
    reads = [delayed(read_exchanged)(number, folder, meta, done, dask_key_name=(f"read_exchanged-{token}", number))
             for number in range(npartitions)]
    return dd.from_delayed(reads, meta=meta, verify_meta=False)


def routed(counts: list[pd.Series]) -> int:
    """The rows every input partition routed: a task that waits for all of them, so that the
    tasks reading the exchange can follow them in the same graph."""
    return int(sum(int(c.sum()) for c in counts))


def read_exchanged(number: int, folder: Artifact, meta: pd.DataFrame, after: object = None) -> pd.DataFrame:
    """Every row routed to output partition ``number`` (an empty ``meta`` if none); ``after``: a
    task this one waits for (:func:`routed`), unused."""
    df = folder.read_routed(number, objects=True)
    return meta.iloc[:0].reset_index(drop=True) if df is None else df
