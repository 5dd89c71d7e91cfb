"""What a stage's write pays to turn a partition into Arrow: ``pipelines.io.docs_table`` against the
same conversion with the pandas metadata taken from a conversion of the partition's first row
(the peer: the code before ``_cast_metadata``), over every docs partition of a finished run.

    python benchmarks/recipe/bench_docs_table.py RUN_DIR [--turns 7]

Every ``*/docs/part-*.parquet`` of ``RUN_DIR`` is read as a stage hands it to its write (pandas'
default string dtype). Per turn, both functions convert every partition, alternated; prints the
median CPU seconds of each over the turns, and checks that both give the same table, schema and
metadata for every partition.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import pandas as pd
import pyarrow as pa

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from pipelines import io  # noqa: E402
from pipelines.io import docs_table  # noqa: E402


def first_row_metadata(df: pd.DataFrame) -> pa.Table:
    """The peer: :func:`docs_table` with the metadata of a one-row conversion with the docs schema."""
    def one_row(_inferred: pa.Schema, schema: pa.Schema) -> dict[bytes, bytes]:
        return pa.Table.from_pandas(df.iloc[:1], schema=schema, preserve_index=False).schema.metadata

    own = io._cast_metadata
    io._cast_metadata = one_row
    try:
        return io.docs_table(df)
    finally:
        io._cast_metadata = own


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("run", type=Path)
    ap.add_argument("--turns", type=int, default=7)
    args = ap.parse_args()
    frames = [pd.read_parquet(p) for p in sorted(args.run.glob("*/docs/part-*.parquet"))]
    if not frames:
        raise SystemExit(f"{args.run}: no */docs/part-*.parquet; give a finished run's folder")
    for df in frames:
        a, b = docs_table(df), first_row_metadata(df)
        if not a.equals(b, check_metadata=True):
            raise SystemExit("the two conversions differ")
    spent: dict[str, list[float]] = {"docs_table": [], "first-row metadata (peer)": []}
    for _ in range(args.turns):
        for name, fn in (("first-row metadata (peer)", first_row_metadata), ("docs_table", docs_table)):
            start = time.process_time()
            for df in frames:
                fn(df)
            spent[name].append(time.process_time() - start)
    columns = statistics.median(len(df.columns) for df in frames)
    print(f"{len(frames)} partitions ({sum(len(df) for df in frames)} rows, median {columns:.0f} columns), {args.turns} turns; same tables")
    for name, values in spent.items():
        print(f"  {name:26s} median {statistics.median(values):.3f} CPU-s ({', '.join(f'{v:.3f}' for v in values)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
