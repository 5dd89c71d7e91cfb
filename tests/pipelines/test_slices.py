"""Row slices (pipelines.kit.slices, ``StageContext.write_sliced``): a heavy row-wise step runs on
slices of each partition file as tasks of their own, and writes the same files as over whole
partitions, in one process and on a real 2-worker LocalCluster."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

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


def test_a_partition_without_the_steps_sources_runs_as_one_task_and_writes_the_same_rows(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``sources``: where the input stage recorded no token of them in a partition, its slices
    would be tasks with nothing to do; it runs whole. Partition 1 is told to hold no code (its
    rows still have some), so what it writes shows the step saw all of its rows at once, and
    that the rows are those of the sliced run."""
    monkeypatch.setattr(kit_slices, "SLICE_CHARS", 2_000)
    parts = [_frame(30, seed=s, offset=30 * s) for s in range(3)]
    src = _stage_dir(tmp_path / "in", parts)
    docs = io.read_docs(src)
    ctx = StageContext(name="demo", work_dir=tmp_path / "w", cache_dir=tmp_path / "c", input_fingerprint="x", quiet=True,
                       input_docs=docs, input_files=io.docs_files(src), input_tokens={"code": [5, 0, 7], "web": [1, 4, 2]})
    with open_client("synchronous"):
        ctx.write_sliced(docs, Artifact(tmp_path / "scoped"), _score, 2.0, label="score", sources=["code"])
        ctx.write_sliced(docs, Artifact(tmp_path / "all"), _score, 2.0, label="score")
    cols = ["doc_id", "score", "part"]
    for i in range(3):
        scoped, every = Artifact(tmp_path / "scoped").read_part(i), Artifact(tmp_path / "all").read_part(i)
        pd.testing.assert_frame_equal(scoped[cols], every[cols])
        assert (scoped["slice_rows"] == 30).all() if i == 1 else (scoped["slice_rows"] < 30).all()
        assert (every["slice_rows"] < 30).all()


def _timed(number: int, df: pd.DataFrame, scale: float) -> pd.DataFrame:
    import time

    out = _score(number, df, scale)
    out["at"] = time.monotonic()
    return out


@pytest.mark.parametrize("steps", [1, 2])
def test_sliced_writes_start_with_the_costliest_partitions_slices_on_a_cluster(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, steps: int) -> None:
    """With the input stage's tokens, a sliced step's slices run partition by partition, the
    costliest first (one worker: the order Dask's scheduler hands them out), and a partition
    without the step's sources (one task) last. Two cached steps in one graph
    (``sliced_steps``) share each partition's rank."""
    from pipelines.kit import SlicedStep

    monkeypatch.setattr(kit_slices, "SLICE_CHARS", 2_000)
    parts = [_frame(30, seed=s, offset=30 * s) for s in range(5)]
    src = _stage_dir(tmp_path / "in", parts)
    docs = io.read_docs(src)
    code = [3, 0, 9, 1, 5]
    with open_client(workers=1) as client:
        ctx = StageContext(name="demo", work_dir=tmp_path / "w", cache_dir=tmp_path / "c", input_fingerprint="x", client=client, quiet=True,
                           input_docs=docs, input_files=io.docs_files(src), input_tokens={"code": code, "web": [9, 9, 9, 9, 9]})
        if steps == 1:
            ctx.write_sliced(docs, Artifact(tmp_path / "out"), _timed, 2.0, label="score", sources=["code"])
            ran = [Artifact(tmp_path / "out").read_all()]
        else:
            arts = ctx.sliced_steps(docs, [SlicedStep(f"s{i}", {"i": i}, _timed, (2.0,)) for i in range(2)], "score", sources=["code"])
            ran = [a.read_all() for a in arts]
    for rows in ran:  # a worker holds its next task or two: the order is by each partition's slices on average
        assert rows.groupby("part")["at"].mean().sort_values().index.tolist() == [2, 4, 0, 3, 1]
        assert rows["at"].idxmax() in rows.index[rows["part"] == 1]  # the partition without code ends the step


def _scaled(number: int, df: pd.DataFrame, scale: float) -> pd.DataFrame:
    return _score(number, df, scale).drop(columns=["pid", "slice_rows"])


def test_sliced_steps_compute_the_missing_steps_in_one_graph_and_keep_each_steps_cache(tmp_path: Path) -> None:
    """web_quality's scorers: two cached steps computed together. Each writes what write_sliced
    alone writes, keeps its own figures and reuse, and a changed parameter re-runs that step alone."""
    from pipelines.kit import SlicedStep

    parts = [_frame(30, seed=s, offset=30 * s) for s in range(3)]
    src = _stage_dir(tmp_path / "in", parts)
    docs = io.read_docs(src)

    def ctx_and_computes() -> tuple[StageContext, list[str]]:
        ctx = StageContext(name="demo", work_dir=tmp_path / "w", cache_dir=tmp_path / "c", input_fingerprint="x", quiet=True,
                           input_docs=docs, input_files=io.docs_files(src))
        labels: list[str] = []
        compute = ctx.compute
        ctx.compute = lambda graph, label, costs=None: (labels.append(label), compute(graph, label, costs))[1]  # type: ignore[method-assign]
        return ctx, labels

    def steps(b: float) -> list[SlicedStep]:
        return [SlicedStep(f"scores-{n}", {"scale": s}, _scaled, (s,), figures=lambda rows, n=n: {"rows": {n: rows}})
                for n, s in (("a", 1.0), ("b", b))]

    with open_client("synchronous"):
        first, labels = ctx_and_computes()
        a, b = first.sliced_steps(docs, steps(2.0), "score a, b")
        assert labels == ["score a, b"]  # one graph for both
        alone = StageContext(name="demo", work_dir=tmp_path / "w2", cache_dir=tmp_path / "c2", input_fingerprint="x", quiet=True,
                             input_docs=docs, input_files=io.docs_files(src))
        ref = alone.write_sliced(docs, Artifact(tmp_path / "ref"), _scaled, 2.0, label="score")
        pd.testing.assert_frame_equal(b.read_all(), Artifact(tmp_path / "ref").read_all())
        assert first.extra_stats == {"rows": {"a": ref, "b": ref}} and ref > 0
        assert a.read_all()["score"].sum() * 2 == pytest.approx(b.read_all()["score"].sum())

        again, labels = ctx_and_computes()
        assert [x.path for x in again.sliced_steps(docs, steps(2.0), "score a, b")] == [a.path, b.path]
        assert labels == [] and again.extra_stats == first.extra_stats  # both reused, figures reported

        written = {p: p.stat().st_mtime_ns for p in a.parts()}
        changed, labels = ctx_and_computes()
        a3, b3 = changed.sliced_steps(docs, steps(3.0), "score a, b")
        assert labels == ["score a, b"] and b3.path != b.path and b3.read_all()["score"].sum() > b.read_all()["score"].sum()
        assert a3.path == a.path and {p: p.stat().st_mtime_ns for p in a3.parts()} == written  # b alone ran again
        assert (changed.artifacts_dir / "scores-a" / "part-00000.parquet").exists()


def _seen(number: int, df: pd.DataFrame, scale: float) -> pd.DataFrame:
    """``_score`` that also records which columns and how many rows each call got."""
    out = _score(number, df, scale)
    return out.assign(columns=",".join(df.columns), rows_seen=len(df))


def test_a_scorer_reads_only_its_columns_and_no_text_of_slices_without_its_sources(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``columns``: the step gets those the part has (a missing one is left out); ``sources``: a
    slice without a row of them is read by its ``source`` column alone and the step gets no row
    of it. What the step writes is what it writes over every row and column."""
    monkeypatch.setattr(kit_slices, "SLICE_CHARS", 2_000)
    web_only = _frame(30, seed=7, offset=90).assign(source="web")
    parts = [_frame(30, seed=s, offset=30 * s) for s in range(3)] + [web_only]
    for p in parts:
        p["url"] = "https://example.com/" + p["doc_id"]
    src = _stage_dir(tmp_path / "in", parts)
    docs = io.read_docs(src)
    reads: list[tuple[str, tuple[str, ...] | None]] = []
    real = io.read_part

    def read_part(path: str, columns: list[str] | None = None, share: tuple[int, int] | None = None) -> pd.DataFrame:
        reads.append((Path(path).name, tuple(columns) if columns is not None else None))
        return real(path, columns, share)

    monkeypatch.setattr(io, "read_part", read_part)
    checked: list[list[str]] = []  # the source columns the slices' checks read (as Arrow, from the one open of the file)
    real_check = kit_slices.has_source

    def has_source(column: Any, sources: Any) -> bool:
        checked.append(column.to_pylist())
        return real_check(column, sources)

    monkeypatch.setattr(kit_slices, "has_source", has_source)
    ctx = StageContext(name="demo", work_dir=tmp_path / "w", cache_dir=tmp_path / "c", input_fingerprint="x", quiet=True,
                       input_docs=docs, input_files=io.docs_files(src))
    with open_client("synchronous"):
        ctx.write_sliced(docs, Artifact(tmp_path / "scoped"), _seen, 2.0, label="score", sources=["code"],
                         columns=["doc_id", "source", "text", "no_such_column"])
        reads_scoped = list(reads)
        ctx.write_sliced(docs, Artifact(tmp_path / "all"), _seen, 2.0, label="score")
    cols = ["doc_id", "score", "part"]
    for i in range(4):
        scoped, every = Artifact(tmp_path / "scoped").read_part(i), Artifact(tmp_path / "all").read_part(i)
        pd.testing.assert_frame_equal(scoped[cols], every[cols])
        if i < 3:  # part 3 holds no code: no row
            assert set(scoped["columns"]) == {"doc_id,text,source"} and set(every["columns"]) == {"doc_id,text,source,url"}
    assert len(Artifact(tmp_path / "scoped").read_part(3)) == len(Artifact(tmp_path / "all").read_part(3)) == 0
    text_reads = [(name, c) for name, c in reads_scoped if c is None or "text" in c]
    assert text_reads and all(c == ("doc_id", "text", "source") for _, c in text_reads)  # never url, never a missing column
    assert "part-00003.parquet" not in {name for name, _ in text_reads}  # the web-only part: its source column alone
    assert any(c and set(c) == {"web"} for c in checked)  # part 3's slices: checked by their source column alone
