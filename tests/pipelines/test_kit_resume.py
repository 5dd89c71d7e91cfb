"""``ctx.step(..., resume=True)`` with ``ctx.map_resumable``: the partitions finished before a stop
are kept (the runner's clean-up after a stop, ``remove_temp``, leaves them), a re-run with the same
key computes only the others and gets every partition's frame, a file without its record is never
taken, another key starts from nothing, and the finished folder is that of a run never stopped."""

from __future__ import annotations

from pathlib import Path

import dask
import dask.dataframe as dd
import pandas as pd
import pytest

from pipelines.kit import Artifact, StageContext
from pipelines.kit.resume import PARTS
from pipelines.stage_cache import remove_temp

NPARTS = 5


def _ctx(root: Path) -> StageContext:
    return StageContext(
        name="demo", work_dir=root / "work", cache_dir=root / "cache", input_fingerprint="in-1", quiet=True
    )


def _docs() -> dd.DataFrame:
    return dd.from_pandas(pd.DataFrame({"x": range(20)}), npartitions=NPARTS, sort=False)


def _square(number: int, part: pd.DataFrame, out: Artifact, calls: list[int], stop_after: int | None) -> pd.DataFrame:
    if stop_after is not None and len(calls) == stop_after:
        raise KeyboardInterrupt  # Ctrl-C in the middle of the step
    calls.append(number)
    out.write_part(number, part.assign(y=part["x"] ** 2))
    return pd.DataFrame({"part": [number], "rows": [len(part)]})


def _run(
    ctx: StageContext, calls: list[int], stop_after: int | None = None, params: str = "a"
) -> tuple[Artifact, list]:
    got: list = []

    def produce(folder: Path) -> dict:
        frame = ctx.map_resumable(
            _docs(), Artifact(folder), _square, Artifact(folder), calls, stop_after, label="square"
        )
        got.append(frame)
        return {"rows": int(frame["rows"].sum())}

    with dask.config.set(scheduler="synchronous"):
        return ctx.step("squares", {"p": params}, produce, resume=True), got


def test_a_stopped_resumable_step_computes_only_the_partitions_left(tmp_path: Path) -> None:
    stopped, calls = _ctx(tmp_path / "stopped"), []
    with pytest.raises(KeyboardInterrupt):
        _run(stopped, calls, stop_after=2)
    remove_temp(stopped.cache_dir)  # what the runner does after a stop
    (tmp,) = stopped.cache_dir.glob(".squares-*.tmp")
    done = sorted(calls)
    assert len(done) == 2 and sorted(int(p.stem[-5:]) for p in (tmp / PARTS).glob("part-*.parquet")) == done
    left = sorted(set(range(NPARTS)) - set(done))
    (tmp / f"part-{left[0]:05d}.parquet").write_bytes(b"PAR1 cut short")  # a write the stop cut short, no record
    (tmp / f".part-{left[1]:05d}.parquet.123.tmp").write_bytes(b"PAR1")

    calls.clear()
    art, got = _run(stopped, calls)
    assert sorted(calls) == left  # the partitions kept are not computed again
    assert got[0]["part"].tolist() == list(range(NPARTS)) and int(got[0]["rows"].sum()) == 20
    assert not (art.path / PARTS).exists() and not list(stopped.cache_dir.glob(".squares-*.tmp"))

    once, all_calls = _ctx(tmp_path / "once"), []
    ref, ref_got = _run(once, all_calls)
    assert sorted(all_calls) == list(range(NPARTS))
    pd.testing.assert_frame_equal(got[0], ref_got[0])
    names = sorted(p.name for p in ref.path.iterdir() if p.name != "_DONE")
    assert sorted(p.name for p in art.path.iterdir() if p.name != "_DONE") == names
    for name in names:
        assert (art.path / name).read_bytes() == (ref.path / name).read_bytes(), name

    # a finished step is reused whole; another key computes every partition
    calls.clear()
    _run(stopped, calls)
    assert calls == []
    _run(stopped, calls, params="b")
    assert sorted(calls) == list(range(NPARTS))


def test_the_partitions_kept_after_a_stop_are_counted_as_at_least(tmp_path: Path, caplog) -> None:
    """Workers still computing when the stop is handled may finish more partitions before they stop,
    so the count of those kept is a floor: the next run says how many it keeps."""
    import logging

    ctx, calls = _ctx(tmp_path), []
    with pytest.raises(KeyboardInterrupt):
        _run(ctx, calls, stop_after=2)
    caplog.set_level(logging.INFO)
    remove_temp(ctx.cache_dir)
    assert "cache: at least 2 finished partitions of" in caplog.text


def test_another_key_takes_nothing_from_a_stopped_step(tmp_path: Path) -> None:
    ctx, calls = _ctx(tmp_path), []
    with pytest.raises(KeyboardInterrupt):
        _run(ctx, calls, stop_after=3)
    remove_temp(ctx.cache_dir)
    calls.clear()
    _run(ctx, calls, params="b")
    assert sorted(calls) == list(range(NPARTS))
    assert len(list(ctx.cache_dir.glob(".squares-*.tmp"))) == 1  # the stopped key's partitions wait for its next run
