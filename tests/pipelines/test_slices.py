"""Row slices (pipelines.kit.slices, ``StageContext.write_sliced``): a heavy row-wise step runs on
slices of each partition as tasks of their own, and writes the same files as over whole
partitions, in one process and on a real 2-worker LocalCluster."""

from __future__ import annotations

import os
from pathlib import Path

import dask.dataframe as dd
import numpy as np
import pandas as pd
import pytest

from pipelines.cluster import open_client
from pipelines.kit import Artifact, StageContext
from pipelines.kit import slices as kit_slices
from pipelines.kit.slices import call_slice, concat_pieces, split_rows


def _frame(n: int, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    texts = ["w" * int(rng.integers(0, 400)) if rng.random() > 0.1 else None for _ in range(n)]
    return pd.DataFrame({"doc_id": [f"d{i}" for i in range(n)], "text": texts, "source": ["code" if i % 3 else "web" for i in range(n)]})


def test_slices_cover_every_row_once_in_order_and_follow_the_text_only() -> None:
    for n in (0, 1, 2, 7, 40):
        df = _frame(n, seed=n)
        for chars in (1, 50, 300, 10_000, 10**9):
            pieces = split_rows(df, slices=4, slice_chars=chars)
            assert len(pieces) == 4
            assert [d for p in pieces for d in p["doc_id"]] == df["doc_id"].tolist()
            total = sum(len(t) for t in df["text"] if isinstance(t, str))
            expected = max(1, min(4, n, -(-total // chars))) if n else 1
            assert sum(1 for p in pieces if len(p)) <= expected
            if n and total > 4 * chars and n >= 4:
                assert all(len(p) for p in pieces)  # a big partition uses every slice
    # near-equal characters per slice
    df = pd.DataFrame({"text": ["x" * 100] * 40})
    assert [len(p) for p in split_rows(df, slices=4, slice_chars=1000)] == [10, 10, 10, 10]
    # a partition under one slice is one slice: the step sees it whole
    assert [len(p) for p in split_rows(df, slices=4, slice_chars=10**6)] == [40, 0, 0, 0]


def test_pieces_concatenate_without_their_empty_ones() -> None:
    full = pd.DataFrame({"a": [1.5, 2.5]}, index=[5, 6])
    empty = pd.DataFrame({"b": pd.Series([], dtype=object)})  # other columns: left out
    out = concat_pieces([full.iloc[:1], empty, full.iloc[1:]])
    pd.testing.assert_frame_equal(out, full.reset_index(drop=True))
    assert concat_pieces([empty, None, None]) is empty
    assert call_slice(1, _score, 0, empty.iloc[0:0]) is None  # an empty slice after the first: nothing to run


def _score(number: int, df: pd.DataFrame, scale: float) -> pd.DataFrame:
    """Row-wise, like every scorer: one row per code document."""
    scope = df[df["source"] == "code"]
    return pd.DataFrame({
        "doc_id": scope["doc_id"].to_numpy(),
        "score": [scale * (len(t) if isinstance(t, str) else -1) for t in scope["text"]],
        "part": number,
        "slice_rows": len(df),  # how many rows the call saw: a whole partition or a slice
        "pid": os.getpid(),
    })


@pytest.mark.parametrize("scheduler", ["synchronous", "workers"])
def test_write_sliced_writes_what_the_step_gives_over_whole_partitions(tmp_path: Path, scheduler: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(kit_slices, "SLICE_CHARS", 2_000)  # ~13 rows of text per slice
    df = _frame(90, seed=3)
    docs = dd.from_pandas(df, npartitions=3, sort=False)
    with open_client("synchronous" if scheduler == "synchronous" else None, workers=2) as client:
        ctx = StageContext(name="demo", work_dir=tmp_path / "w", cache_dir=tmp_path / "c", input_fingerprint="x", client=client, quiet=True)
        written = ctx.write_sliced(docs, Artifact(tmp_path / "sliced"), _score, 2.0, label="score")
    parts = [df.iloc[a:b] for a, b in ((0, 30), (30, 60), (60, 90))]
    whole = [_score(i, p, 2.0) for i, p in enumerate(parts)]
    assert written == sum(len(w) for w in whole)
    for i, w in enumerate(whole):
        got = Artifact(tmp_path / "sliced").read_part(i)
        cols = ["doc_id", "score", "part"]
        pd.testing.assert_frame_equal(got[cols], w[cols])
        assert (got["slice_rows"] < 30).all() and got["slice_rows"].nunique() > 1  # the step ran on slices
    if scheduler == "workers":
        assert Artifact(tmp_path / "sliced").read_all()["pid"].ne(os.getpid()).all()  # on the workers, not the driver
