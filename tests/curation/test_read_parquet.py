"""``read_parquet`` gives what ``pyarrow.parquet.read_table`` gives, for every column choice."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from curation.files import read_parquet
from pipelines.io import docs_schema

TEXTS = ["plain", "", "naïve café", "中文文本", "emoji 🎉", None, "lone \ud800 surrogate".encode("utf-8", "surrogatepass").decode("utf-8", "replace")]


def _frame(n: int) -> pd.DataFrame:
    texts = [TEXTS[i % len(TEXTS)] for i in range(n)]
    return pd.DataFrame({
        "doc_id": [f"d{i}" for i in range(n)],
        "text": pd.Series(texts, dtype=object),
        "n_tokens": np.arange(n, dtype=np.int64),
        "score": np.linspace(0, 1, n),
        "flag": pd.array([i % 3 == 0 if i % 4 else None for i in range(n)], dtype="boolean"),
        "bucket": pd.array([i if i % 5 else None for i in range(n)], dtype="Int64"),
    })


@pytest.fixture(params=[0, 1, 7, 40])
def part(request: pytest.FixtureRequest, tmp_path) -> str:
    df = _frame(request.param)
    table = pa.Table.from_pandas(df, schema=docs_schema(df), preserve_index=False)
    sigs = pa.array([list(range(i, i + 4)) for i in range(len(df))], type=pa.list_(pa.uint32()))
    path = tmp_path / "part-00000.parquet"
    # several row groups where there are rows, as the stages write their docs/ parts
    pq.write_table(table.append_column("sig", sigs), path, compression="zstd", row_group_size=max(1, len(df) // 3))
    return str(path)


@pytest.mark.parametrize("columns", [None, ["doc_id"], ["text", "doc_id"], ["score", "n_tokens", "flag"], ["sig", "bucket"], []])
def test_same_table_and_frame_as_read_table(part: str, columns: list[str] | None) -> None:
    want = pq.read_table(part, columns=columns)
    got = read_parquet(part, columns)
    assert got.equals(want)
    assert got.schema.equals(want.schema, check_metadata=True)
    pd.testing.assert_frame_equal(got.to_pandas(), want.to_pandas())


@pytest.mark.parametrize("columns", [["nope"], ["doc_id", "nope"]])
def test_unknown_column_fails_as_read_table_does(part: str, columns: list[str]) -> None:
    with pytest.raises(pa.ArrowInvalid):
        pq.read_table(part, columns=columns)
    with pytest.raises(pa.ArrowInvalid):
        read_parquet(part, columns)


def test_repeated_column_as_read_table(part: str) -> None:
    assert read_parquet(part, ["doc_id", "doc_id"]).equals(pq.read_table(part, columns=["doc_id", "doc_id"]))


def test_missing_file_is_an_os_error(tmp_path) -> None:
    with pytest.raises(OSError):
        read_parquet(tmp_path / "absent.parquet")
