"""A slice's check for rows of the step's sources reads the ``source`` column as Arrow, from the one
open of the file: the same pieces as the check through a pandas frame (the reference, kept here)."""

from __future__ import annotations

from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from pipelines.io import read_part
from pipelines.kit.slices import has_source, run_slice


def _reference(path: str, columns: list[str] | None, j: int, k: int, fn: Any, number: int, *args: Any,
               sources: list[str] | None = None) -> pd.DataFrame | None:
    share = None if k == 1 else (j, k)
    schema = pq.read_schema(path) if columns is not None or sources is not None else None
    if columns is not None:
        wanted = set(columns)
        columns = [c for c in schema.names if c in wanted]
    if sources is not None and "source" in schema.names:
        rows = read_part(path, ["source"], share)
        if not rows["source"].isin(list(sources)).any():
            if j and not len(rows):
                return None
            return fn(number, schema.empty_table().select(columns if columns is not None else schema.names).to_pandas(), *args)
    df = read_part(path, columns, share)
    if j and not len(df):
        return None
    return fn(number, df, *args)


def _seen(number: int, rows: pd.DataFrame, tag: str) -> pd.DataFrame:
    return rows.assign(seen=f"{tag}{number}:{len(rows)}")


def _write(path, frame: pd.DataFrame, groups: int) -> str:
    table = pa.Table.from_pandas(frame, preserve_index=False)
    with pq.ParquetWriter(path, table.schema) as w:
        step = max(1, -(-len(frame) // groups)) if len(frame) else 1
        for a in range(0, max(len(frame), 1), step):
            w.write_table(table.slice(a, step))
    return str(path)


FRAMES = {
    "web": pd.DataFrame({"doc_id": ["a", "b", "c", "d"], "source": ["web"] * 4, "text": ["x", "中文", "😀", ""]}),
    "code": pd.DataFrame({"doc_id": ["a", "b", "c"], "source": ["code", "code", None], "text": ["x = 1", "y", None]}),
    "mixed": pd.DataFrame({"doc_id": list("abcdef"), "source": ["code", "code", "code", "web", "code", "paper"], "text": list("uvwxyz")}),
    "null": pd.DataFrame({"doc_id": ["a", "b"], "source": [None, None], "text": ["p", "q"]}),
    "empty": pd.DataFrame({"doc_id": pd.Series([], dtype=str), "source": pd.Series([], dtype=str), "text": pd.Series([], dtype=str)}),
    "nosource": pd.DataFrame({"doc_id": ["a"], "text": ["t"]}),
}


@pytest.mark.parametrize("name", list(FRAMES))
@pytest.mark.parametrize("groups", [1, 3])
@pytest.mark.parametrize("sources", [None, ["web"], ["code", "web"], ["paper"]])
@pytest.mark.parametrize("columns", [None, ["doc_id", "source", "text"], ["text"]])
def test_same_pieces_as_the_pandas_check(tmp_path, name: str, groups: int, sources: list[str] | None, columns: list[str] | None) -> None:
    path = _write(tmp_path / "part-00000.parquet", FRAMES[name], groups)
    for k in (1, 2, 3):
        for j in range(k):
            got = run_slice(path, columns, j, k, _seen, 0, "t", sources=sources)
            want = _reference(path, columns, j, k, _seen, 0, "t", sources=sources)
            if want is None:
                assert got is None
            else:
                pd.testing.assert_frame_equal(got, want)


@pytest.mark.parametrize("column", [
    pa.chunked_array([["web", None]], pa.large_string()), pa.chunked_array([[None, None]]), pa.chunked_array([], pa.string()),
    pa.chunked_array([pa.array(["code", "web"]).dictionary_encode()]), pa.chunked_array([["code"], ["paper", "web"]]),
    pa.chunked_array([[1, 2]]), pa.chunked_array([["Web", "wéb", "web "]]),
])
@pytest.mark.parametrize("sources", [["web"], ["code", "paper"], []])
def test_has_source_is_pandas_isin_any(column: pa.ChunkedArray, sources: list[str]) -> None:
    assert has_source(column, sources) == bool(column.to_pandas().isin(sources).any())
