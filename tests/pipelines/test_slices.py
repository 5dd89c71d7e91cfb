"""Row slices (pipelines.kit.slices, ``StageContext.write_sliced``): a heavy row-wise step runs on
slices of each partition file as tasks of their own, and writes the same files as over whole
partitions, in one process and on a real 2-worker LocalCluster."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from pipelines import io
from pipelines.cluster import open_client
from pipelines.kit import Artifact, StageContext
from pipelines.kit import slices as kit_slices
from pipelines.kit.slices import concat_pieces, slice_bounds, slice_count, slice_groups


def _frame(n: int, seed: int = 0, offset: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    texts = ["w" * int(rng.integers(0, 400)) if rng.random() > 0.1 else None for _ in range(n)]
    return pd.DataFrame({"doc_id": [f"d{offset + i}" for i in range(n)], "text": texts,
                         "source": ["code" if i % 3 else "web" for i in range(n)]})


def _stage_dir(root: Path, frames: list[pd.DataFrame]) -> Path:
    """A stage folder whose docs/ parts are written as every stage writes them (row groups by text)."""
    (root / "docs").mkdir(parents=True)
    for i, f in enumerate(frames):
        io.write_frame(f, root / "docs" / f"part-{i:05d}.parquet", groups=slice_groups(f["text"], len(f)))
    return root


def test_slices_cover_every_row_once_in_order_at_near_equal_characters() -> None:
    for n in (0, 1, 2, 7, 40):
        texts = _frame(n, seed=n)["text"]
        for k in (1, 2, 3, 4):
            b = slice_bounds(texts, k)
            assert len(b) == k + 1 and b[0] == 0 and b[-1] == n and b == sorted(b)
    even = pd.Series(["x" * 100] * 40)
    assert slice_bounds(even, 4) == [0, 10, 20, 30, 40]


def test_parts_are_written_in_row_groups_of_the_slice_size(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(1)
    df = pd.DataFrame({"text": ["".join(rng.choice(list("abcdefgh"), 1000)) for _ in range(100)], "n": range(100)})  # 100k characters
    for chars, groups in ((10**7, 1), (40_000, 3), (1_000, 4)):  # at most MAX_SLICES
        path = tmp_path / f"p{chars}.parquet"
        io.write_frame(df, path, groups=slice_groups(df["text"], len(df), slice_chars=chars))
        assert slice_count(str(path)) == groups
        pd.testing.assert_frame_equal(pd.read_parquet(path), df)  # the same rows back
    # a stage's writer cuts its docs parts the same way
    monkeypatch.setattr(kit_slices, "SLICE_CHARS", 40_000)
    df["doc_id"], df["source"], df["n_tokens"], df["lang"] = [f"d{i}" for i in range(100)], "web", 10, "en"
    df["drop_reason"], df["drop_detail"] = None, None
    io.write_partition(0, df, str(tmp_path / "stage"), "demo")
    assert slice_count(str(tmp_path / "stage" / "docs" / "part-00000.parquet")) == 3


def test_pieces_concatenate_without_their_empty_ones() -> None:
    full = pd.DataFrame({"a": [1.5, 2.5]}, index=[5, 6])
    empty = pd.DataFrame({"b": pd.Series([], dtype=object)})  # other columns: left out
    pd.testing.assert_frame_equal(concat_pieces([full.iloc[:1], empty, None, full.iloc[1:]]), full.reset_index(drop=True))
    assert concat_pieces([empty, None, None]) is empty


def _score(number: int, df: pd.DataFrame, scale: float) -> pd.DataFrame:
    """Row-wise, like every scorer: one row per code document."""
    scope = df[df["source"] == "code"] if "source" in df.columns else df.iloc[0:0]
    return pd.DataFrame({
        "doc_id": scope["doc_id"].to_numpy() if len(scope) else [],
        "score": [scale * (len(t) if isinstance(t, str) else -1) for t in scope["text"]] if len(scope) else [],
        "part": number,
        "slice_rows": len(df),  # how many rows the call saw: a whole partition or a slice
        "pid": os.getpid(),
    })


@pytest.mark.parametrize("scheduler", ["synchronous", "workers"])
def test_write_sliced_writes_what_the_step_gives_over_whole_partitions(tmp_path: Path, scheduler: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(kit_slices, "SLICE_CHARS", 2_000)  # ~10 rows of text per row group
    parts = [_frame(30, seed=s, offset=30 * s) for s in range(3)]
    src = _stage_dir(tmp_path / "in", parts)
    docs = io.read_docs(src)
    with open_client("synchronous" if scheduler == "synchronous" else None, workers=2) as client:
        ctx = StageContext(name="demo", work_dir=tmp_path / "w", cache_dir=tmp_path / "c", input_fingerprint="x", client=client, quiet=True,
                           input_docs=docs, input_files=io.docs_files(src))
        written = ctx.write_sliced(docs, Artifact(tmp_path / "sliced"), _score, 2.0, label="score")
        derived = docs[["doc_id", "text", "source"]]  # not the runner's frame: whole partitions
        ctx.write_sliced(derived, Artifact(tmp_path / "whole"), _score, 2.0, label="score")
    whole = [_score(i, p, 2.0) for i, p in enumerate(parts)]
    assert written == sum(len(w) for w in whole)
    cols = ["doc_id", "score", "part"]
    for i, w in enumerate(whole):
        got = Artifact(tmp_path / "sliced").read_part(i)
        pd.testing.assert_frame_equal(got[cols], w[cols])
        assert (got["slice_rows"] < 30).all()  # the step ran on slices
        again = Artifact(tmp_path / "whole").read_part(i)
        pd.testing.assert_frame_equal(again[cols], w[cols])
        assert (again["slice_rows"] == 30).all()
    if scheduler == "workers":
        assert Artifact(tmp_path / "sliced").read_all()["pid"].ne(os.getpid()).all()  # on the workers, not the driver
