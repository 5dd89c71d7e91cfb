"""One artifact type for sub-step output: Parquet files per input partition, or grouped by one.

Two layouts, both keyed by the input partition number so that a stage's output keeps its input's
partitioning whatever the number of workers:

- **per partition** (``write_part`` / ``read_part``): ``part-NNNNN.parquet``, one file per input
  partition (signatures, scores, embeddings).
- **by partition** (``write_by_part`` / ``read_group``): rows computed anywhere (after a shuffle)
  are written under ``pNNNNN/from-MMMMM.parquet``, grouped by the partition ``NNNNN`` they belong
  to (column ``_part``) and named by the task ``MMMMM`` that wrote them; ``read_group(n)`` gives
  partition ``n`` every row meant for it (removals, cluster labels).

- **routed** (``write_routed`` / ``read_routed``): an exchange between two graphs. Input partition
  ``MMMMM`` writes one Arrow IPC file ``routed-MMMMM.arrow`` holding one record batch per output
  partition (empty where it sends none, lz4-compressed); ``read_routed(n)`` memory-maps every file
  and takes batch ``n`` of each, in input order. Many output partitions cost one file per input
  partition, not one per pair (the mixture's shard exchange: benchmarks/recipe).

Every file is written atomically (temp file, then rename), so a retried task overwrites cleanly.

>>> import tempfile; a = Artifact(Path(tempfile.mkdtemp()))
>>> a.write_part(3, pd.DataFrame({"x": [1, 2]})).name
'part-00003.parquet'
>>> a.read_part(3)["x"].tolist(), a.read_part(4) is None
([1, 2], True)
>>> a.write_by_part(pd.DataFrame({"_part": [0, 2, 2], "y": [1, 2, 3]}), source=7)
3
>>> a.read_group(2)["y"].tolist(), a.read_group(1) is None
([2, 3], True)
>>> r = Artifact(Path(tempfile.mkdtemp()))
>>> r.write_routed(pd.DataFrame({"z": [5, 6, 7]}), source=0, dest=np.array([2, 0, 2]), nparts=3)
3
>>> r.write_routed(pd.DataFrame({"z": [8]}), source=1, dest=np.array([2]), nparts=3)
1
>>> r.read_routed(2)["z"].tolist(), r.read_routed(0)["z"].tolist(), r.read_routed(1) is None
([5, 7, 8], [6], True)
"""

from __future__ import annotations

import dataclasses
import os
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from curation.files import atomic_path, part_name, read_parquet

PART_COLUMN = "_part"
#: The figures a sub-step returned, kept beside its artifact so a reused step reports them too.
STEP_STATS = "_STATS.json"


def part_number(partition_info: dict | None) -> int:
    """The partition number Dask passes to a ``map_partitions`` function (0 when it passes none)."""
    return int((partition_info or {}).get("number", 0))


@dataclasses.dataclass(frozen=True)
class Artifact:
    """A folder of Parquet files keyed by input partition (see the module docstring)."""

    path: Path

    def __post_init__(self) -> None:
        object.__setattr__(self, "path", Path(self.path))

    def figures(self) -> dict:
        """The figures the sub-step that wrote this artifact returned (``{}`` for none)."""
        import json

        path = self.path / STEP_STATS
        return json.loads(path.read_text()) if path.exists() else {}

    # -- per partition -------------------------------------------------------------------
    def part_path(self, number: int) -> Path:
        return self.path / part_name(number)

    def write_part(self, number: int, df: pd.DataFrame) -> Path:
        from pipelines.io import write_frame

        path = self.part_path(number)
        write_frame(df.reset_index(drop=True), path)
        return path

    def read_part(self, number: int, columns: list[str] | None = None) -> pd.DataFrame | None:
        path = self.part_path(number)
        return read_parquet(path, columns).to_pandas() if path.exists() else None

    def parts(self) -> list[Path]:
        return sorted(self.path.glob("part-*.parquet"))

    def read_all(self, columns: list[str] | None = None) -> pd.DataFrame:
        """Every per-partition file, in partition order, as one frame."""
        files = self.parts()
        if not files:
            return pd.DataFrame(columns=columns or [])
        return pd.concat([read_parquet(f, columns).to_pandas() for f in files], ignore_index=True)

    # -- by partition --------------------------------------------------------------------
    def write_by_part(self, df: pd.DataFrame, source: int, part_column: str | np.ndarray = PART_COLUMN) -> int:
        """Write ``df``'s rows under the partition each belongs to; return how many rows.

        ``part_column`` names the column that holds each row's partition, or is an array of the
        partitions itself (when the files should not carry that column)."""
        from pipelines.io import write_frame

        for part, group in df.groupby(part_column, sort=True):
            write_frame(group.reset_index(drop=True), self.path / f"p{int(part):05d}" / f"from-{int(source):05d}.parquet")
        return len(df)

    def read_group(self, number: int, columns: list[str] | None = None) -> pd.DataFrame | None:
        """Every row written for partition ``number``, in writer order; ``None`` if there are none."""
        files = sorted((self.path / f"p{int(number):05d}").glob("from-*.parquet"))
        if not files:
            return None
        return pd.concat([read_parquet(f, columns).to_pandas() for f in files], ignore_index=True)

    # -- routed ---------------------------------------------------------------------------
    def write_routed(self, df: pd.DataFrame | pa.Table, source: int, dest: np.ndarray, nparts: int) -> int:
        """Write ``df``'s rows (a pandas or Arrow table) as batch ``dest[i]`` of this input partition's
        file; return how many rows."""
        dest = np.asarray(dest, dtype=np.int64)
        if len(dest) and (dest.min() < 0 or dest.max() >= nparts):
            raise ValueError(f"routed rows must go to partitions 0..{nparts - 1}")
        order = np.argsort(dest, kind="stable")
        if isinstance(df, pa.Table):
            table = df.take(pa.array(order))
        else:
            table = pa.Table.from_pandas(df.iloc[order].reset_index(drop=True), preserve_index=False)
        bounds = np.searchsorted(dest[order], np.arange(nparts + 1))
        self.path.mkdir(parents=True, exist_ok=True)
        options = pa.ipc.IpcWriteOptions(compression="lz4")  # transient: fast, as Spark compresses its shuffle
        with (atomic_path(self.path / f"routed-{int(source):05d}.arrow") as tmp,
              pa.OSFile(str(tmp), "wb") as sink, pa.ipc.new_file(sink, table.schema, options=options) as writer):
            for n in range(nparts):
                piece = table.slice(int(bounds[n]), int(bounds[n + 1] - bounds[n]))
                writer.write_batch(piece.combine_chunks().to_batches()[0] if piece.num_rows else
                                   pa.RecordBatch.from_pylist([], schema=table.schema))
        return len(df)

    def read_routed_table(self, number: int) -> pa.Table | None:
        """Every row routed to partition ``number`` as one Arrow table, in input-partition order; ``None`` if none."""
        tables = []
        for f in sorted(self.path.glob("routed-*.arrow")):
            with pa.OSFile(str(f), "rb") as source:  # read into memory: the table outlives the file handle
                batch = pa.ipc.open_file(source).get_batch(int(number))
                if batch.num_rows:
                    tables.append(pa.Table.from_batches([batch]))
        return pa.concat_tables(tables) if tables else None

    def read_routed(self, number: int, objects: bool = False) -> pd.DataFrame | None:
        """Every row routed to partition ``number``, in input-partition order; ``None`` if there are none.

        With ``objects``, columns written from object dtype come back as object (``None`` where
        missing) rather than as pandas' ``str``."""
        batches = []
        for f in sorted(self.path.glob("routed-*.arrow")):
            with pa.memory_map(str(f)) as source:
                batch = pa.ipc.open_file(source).get_batch(int(number))
                if batch.num_rows:
                    table = pa.Table.from_batches([batch])
                    batches.append(_with_objects(table) if objects else table.to_pandas())
        return pd.concat(batches, ignore_index=True) if batches else None


def _with_objects(table: pa.Table) -> pd.DataFrame:
    df = table.to_pandas()
    for col in (table.schema.pandas_metadata or {}).get("columns", []):
        name = col.get("name")
        if col.get("numpy_type") == "object" and name in df.columns and df[name].dtype != object:
            values = df[name]
            df[name] = values.astype(object).where(values.notna().to_numpy(), None)
    return df


def link_tree(src: Path, dst: Path) -> None:
    """Hard-link (or copy, across file systems) every file of ``src`` into ``dst``."""
    shutil.rmtree(dst, ignore_errors=True)
    for root, _dirs, files in os.walk(src):
        rel = Path(root).relative_to(src)
        (dst / rel).mkdir(parents=True, exist_ok=True)
        for f in files:
            if f == STEP_STATS:
                continue
            try:
                os.link(Path(root) / f, dst / rel / f)
            except OSError:
                shutil.copy2(Path(root) / f, dst / rel / f)


def merge_figures(into: dict[str, Any], figures: dict[str, Any]) -> None:
    """Merge a sub-step's figures into a stage's ``extra`` stats, nested dicts key by key."""
    for key, value in figures.items():
        if isinstance(value, dict) and isinstance(into.get(key), dict):
            merge_figures(into[key], value)
        else:
            into[key] = value
