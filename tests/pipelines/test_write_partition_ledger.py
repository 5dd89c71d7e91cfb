"""``write_partition`` writes the ledger part of a partition without drops from one cached table:
the same bytes as converting that partition's (empty) ledger frame, whatever the stage and the
partition's columns and dtypes."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from curation.schema import DROP_DETAIL, DROP_REASON
from pipelines.io import LEDGER_SCHEMA, ledger_rows, write_frame, write_partition

TEXTS = ["plain", "", "naïve café", "中文文本", "emoji 🎉", "lone \udcff surrogate".encode("utf-8", "surrogateescape").decode("utf-8", "replace")]


def _part(n: int, text: bool = True, tokens: str = "int64", reasons: list[str | None] | None = None) -> pd.DataFrame:
    df = pd.DataFrame({
        "doc_id": [f"d{i}" for i in range(n)],
        "source": pd.Series(["web", "code"] * n, dtype=object)[:n].to_numpy(),
        "lang": ["en"] * n,
        "n_tokens": pd.Series(np.arange(n), dtype=tokens),
        DROP_REASON: pd.Series(reasons if reasons is not None else [None] * n, dtype=object),
        DROP_DETAIL: pd.Series([None] * n, dtype=object),
    })
    if text:
        df.insert(1, "text", [TEXTS[i % len(TEXTS)] for i in range(n)])
    return df


def _reference_ledger(df: pd.DataFrame, stage: str, path) -> bytes:
    """The ledger part as every partition's was written: its rows converted with the ledger schema."""
    dropped = df.loc[df[DROP_REASON].notna().to_numpy()]
    write_frame(ledger_rows(dropped, stage), path, LEDGER_SCHEMA)
    return path.read_bytes()


@pytest.mark.parametrize("stage", ["exact_dedup", "forge_filter", "mixture", "中文"])
@pytest.mark.parametrize("part", [
    _part(0), _part(5), _part(5, text=False), _part(3, tokens="Int64"), _part(4, tokens="float64"),
    _part(0, text=False, tokens="object"),
])
def test_ledger_without_drops_is_byte_identical(tmp_path, stage: str, part: pd.DataFrame) -> None:
    write_partition(2, part, str(tmp_path / "run"), stage)
    assert (tmp_path / "run" / "ledger" / "part-00002.parquet").read_bytes() == _reference_ledger(part, stage, tmp_path / "ref.parquet")


def test_ledger_with_drops_is_byte_identical(tmp_path) -> None:
    part = _part(6, reasons=[None, "exact_duplicate", None, "too_large", None, None])
    counts = write_partition(0, part, str(tmp_path / "run"), "exact_dedup")
    assert (tmp_path / "run" / "ledger" / "part-00000.parquet").read_bytes() == _reference_ledger(part, "exact_dedup", tmp_path / "ref.parquet")
    assert counts["documents"].sum() == 6
