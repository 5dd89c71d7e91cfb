"""One artifact type for sub-step output: Parquet files per input partition, or grouped by one.

Two layouts, both keyed by the input partition number so that a stage's output keeps its input's
partitioning whatever the number of workers:

- **per partition** (``write_part`` / ``read_part``): ``part-NNNNN.parquet``, one file per input
  partition (signatures, scores, embeddings).
- **by partition** (``write_by_part`` / ``read_group``): rows computed anywhere (after a shuffle)
  are written under ``pNNNNN/from-MMMMM.parquet``, grouped by the partition ``NNNNN`` they belong
  to (column ``_part``) and named by the task ``MMMMM`` that wrote them; ``read_group(n)`` gives
  partition ``n`` every row meant for it (removals, cluster labels).

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
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq

from curation.files import part_name

PART_COLUMN = "_part"


def part_number(partition_info: dict | None) -> int:
    """The partition number Dask passes to a ``map_partitions`` function (0 when it passes none)."""
    return int((partition_info or {}).get("number", 0))


@dataclasses.dataclass(frozen=True)
class Artifact:
    """A folder of Parquet files keyed by input partition (see the module docstring)."""

    path: Path

    def __post_init__(self) -> None:
        object.__setattr__(self, "path", Path(self.path))

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
        return pq.read_table(path, columns=columns).to_pandas() if path.exists() else None

    def parts(self) -> list[Path]:
        return sorted(self.path.glob("part-*.parquet"))

    def read_all(self, columns: list[str] | None = None) -> pd.DataFrame:
        """Every per-partition file, in partition order, as one frame."""
        files = self.parts()
        if not files:
            return pd.DataFrame(columns=columns or [])
        return pd.concat([pq.read_table(f, columns=columns).to_pandas() for f in files], ignore_index=True)

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
        return pd.concat([pq.read_table(f, columns=columns).to_pandas() for f in files], ignore_index=True)
