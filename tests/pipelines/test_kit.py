"""The stage kit: sub-steps report their figures when reused, partitions know their number,
compute always returns pandas, upstream artifacts are resolved from the run folder, and a stage
that does not produce what it declares is stopped."""

from __future__ import annotations

from pathlib import Path

import dask
import dask.dataframe as dd
import pandas as pd
import pytest

from pipelines.kit import Artifact, StageContext, check_produces, resolve_artifacts


def _ctx(tmp_path: Path, fingerprint: str = "in-1") -> StageContext:
    return StageContext(name="demo", work_dir=tmp_path / "work", cache_dir=tmp_path / "cache", input_fingerprint=fingerprint, quiet=True)


def test_a_reused_step_reports_the_figures_it_returned_when_it_ran(tmp_path: Path) -> None:
    calls = []

    def produce(folder: Path) -> dict:
        calls.append(folder)
        Artifact(folder).write_part(0, pd.DataFrame({"x": [1]}))
        return {"found": 3, "nested": {"a": 1}}

    first = _ctx(tmp_path)
    art = first.step("things", {"k": 1}, produce)
    second = _ctx(tmp_path)
    again = second.step("things", {"k": 1}, produce)
    assert len(calls) == 1 and art.path == again.path
    assert first.extra_stats == second.extra_stats == {"found": 3, "nested": {"a": 1}}
    assert (second.artifacts_dir / "things" / "part-00000.parquet").exists()
    assert not (second.artifacts_dir / "things" / "_STATS.json").exists()  # figures go to stats.json only
    third = _ctx(tmp_path)
    third.step("things", {"k": 2}, produce)  # a changed parameter runs the step again
    assert len(calls) == 2


def test_map_parts_passes_each_partition_its_number_and_compute_returns_one_frame(tmp_path: Path) -> None:
    docs = dd.from_pandas(pd.DataFrame({"v": range(10)}), npartitions=3)
    meta = pd.DataFrame({"part": pd.Series(dtype="int64"), "v": pd.Series(dtype="int64")})
    graph = StageContext.map_parts(docs, lambda n, df, add: pd.DataFrame({"part": n, "v": df["v"] + add}), 100, meta=meta)
    with dask.config.set(scheduler="synchronous"):
        out = _ctx(tmp_path).compute(graph, "label")
    assert isinstance(out, pd.DataFrame)
    assert out["v"].tolist() == list(range(100, 110))
    assert sorted(out["part"].unique().tolist()) == [0, 1, 2]


def test_upstream_artifacts_resolve_only_from_finished_stages(tmp_path: Path) -> None:
    class Needs:
        name = "web_quality"
        requires_artifacts = {"embeddings": ("semdedup", "embeddings"), "html": ("ingest", "html")}

    (tmp_path / "30_semdedup" / "artifacts" / "embeddings").mkdir(parents=True)
    (tmp_path / "00_ingest" / "artifacts" / "html").mkdir(parents=True)
    (tmp_path / "00_ingest" / "_SUCCESS").write_text("{}")
    got = resolve_artifacts(Needs(), tmp_path)
    assert got == {"embeddings": None, "html": tmp_path / "00_ingest" / "artifacts" / "html"}
    (tmp_path / "30_semdedup" / "_SUCCESS").write_text("{}")
    assert resolve_artifacts(Needs(), tmp_path)["embeddings"] == tmp_path / "30_semdedup" / "artifacts" / "embeddings"
    assert resolve_artifacts(Needs(), None) == {"embeddings": None, "html": None}


def test_a_stage_missing_a_declared_column_is_stopped() -> None:
    class Declares:
        name = "demo"
        produces = {"score": "float64"}

    check_produces(Declares(), ["doc_id", "score"])
    with pytest.raises(RuntimeError, match="score"):
        check_produces(Declares(), ["doc_id"])


def test_a_row_stage_that_produces_a_column_no_missing_value_fits_is_refused_when_defined() -> None:
    """Rows outside a row stage's sources get a missing value in its produced columns: numpy's int64 cannot
    hold one (the docs' example with int64 crashed mid-run); the class is refused, naming the type to use."""
    from pipelines.kit.shapes import RowStage

    with pytest.raises(TypeError, match=r"produces\['n_chars'\] = 'int64' cannot hold a missing value.*declare 'Int64'"):
        type("ShortDocs", (RowStage,), {"produces": {"n_chars": "int64"}})
    assert type("ShortDocs", (RowStage,), {"produces": {"n_chars": "Int64", "flag": "boolean"}}).produces["n_chars"] == "Int64"


def test_lineage_lists_the_finished_earlier_stages_in_run_order(tmp_path: Path) -> None:
    import json

    from pipelines.kit import resolve_lineage

    for folder, done in (("00_ingest", True), ("10_exact_dedup", False), ("30_semdedup", True), ("80_mixture", True)):
        (tmp_path / folder).mkdir()
        if done:
            (tmp_path / folder / "_SUCCESS").write_text(json.dumps({"stage": folder[3:], "version": "1", "config_hash": "h" + folder}))
            (tmp_path / folder / "stats.json").write_text(json.dumps({"config": {"k": folder}}))
    got = resolve_lineage("mixture", tmp_path)
    assert [g["folder"] for g in got] == ["00_ingest", "30_semdedup"]  # unfinished and later stages are not cited
    assert got[1]["config_hash"] == "h30_semdedup" and got[1]["config"] == {"k": "30_semdedup"}
    assert resolve_lineage("mixture", None) == []


def test_routed_rows_reach_their_partition_in_input_order_and_empty_partitions_read_none(tmp_path: Path) -> None:
    import numpy as np

    routed = Artifact(tmp_path / "x")
    a = pd.DataFrame({"k": ["a0", "a1", "a2", "a3"], "meta": [None, None, None, None]})  # an all-null column
    b = pd.DataFrame({"k": ["b0", "b1"], "meta": ["{}", None]})
    assert routed.write_routed(a, source=0, dest=np.array([3, 0, 3, 1]), nparts=5) == 4
    assert routed.write_routed(b, source=1, dest=np.array([3, 1]), nparts=5) == 2
    assert routed.read_routed(3)["k"].tolist() == ["a0", "a2", "b0"]
    assert routed.read_routed(1)["k"].tolist() == ["a3", "b1"]
    assert routed.read_routed(0)["k"].tolist() == ["a1"]
    assert routed.read_routed(2) is None and routed.read_routed(4) is None
    assert sorted(p.name for p in routed.path.iterdir()) == ["routed-00000.arrow", "routed-00001.arrow"]  # one file per input
    with pytest.raises(ValueError, match="partitions 0..4"):
        routed.write_routed(a, source=2, dest=np.array([0, 1, 2, 5]), nparts=5)


def _frames() -> dd.DataFrame:
    import numpy as np

    rng = np.random.default_rng(3)
    n = 400
    df = pd.DataFrame({
        "key": pd.Series([f"k{i}" for i in rng.integers(0, 60, n)], dtype=object),
        "band": rng.integers(0, 4, n).astype("int64"),
        "band_hash": rng.integers(0, 2**63, n, dtype=np.uint64),
        "note": pd.Series([None if i % 3 else f"n{i}" for i in range(n)], dtype=object),
        "blob": pd.Series([bytes([i % 256]) * 3 for i in range(n)], dtype=object),
        "row": np.arange(n, dtype="int64"),
    })
    return dd.from_pandas(df, npartitions=5, sort=False)


@pytest.mark.parametrize(("on", "nparts"), [("key", None), (["band", "band_hash"], 3), ("band", 7)])
def test_shuffle_gives_each_partition_the_rows_and_order_of_dasks_shuffle(tmp_path: Path, on, nparts) -> None:
    with dask.config.set(scheduler="synchronous", **{"dataframe.convert-string": False, "dataframe.shuffle.method": "tasks"}):
        frames = _frames()  # the settings open_client runs every stage with
        ctx = _ctx(tmp_path)
        ours = ctx.shuffle(frames, on, "test", npartitions=nparts)
        theirs = frames.shuffle(on=on, npartitions=nparts)
        assert ours.npartitions == theirs.npartitions == (nparts or 5)
        for n in range(ours.npartitions):
            mine = ours.get_partition(n).compute().reset_index(drop=True)
            dask_part = theirs.get_partition(n).compute().reset_index(drop=True)
            pd.testing.assert_frame_equal(mine, dask_part)  # same rows, same order, same dtypes (None kept)
        assert sum(len(ours.get_partition(n).compute()) for n in range(ours.npartitions)) == 400
    # one routed file per input partition, under the stage's scratch folder (one task per input)
    assert len(list((tmp_path / "work" / "_scratch" / "exchange-001").glob("routed-*.arrow"))) == 5


def test_shuffle_hands_a_very_wide_exchange_to_dask(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from pipelines.kit import context

    monkeypatch.setattr(context, "EXCHANGE_MAX_PARTITIONS", 4)  # 5 input partitions: over the limit
    with dask.config.set(scheduler="synchronous", **{"dataframe.convert-string": False, "dataframe.shuffle.method": "tasks"}):
        frames = _frames()
        ours = _ctx(tmp_path).shuffle(frames, "key", "test")
        assert sorted(ours.compute()["row"].tolist()) == list(range(400))
        for n in range(5):
            assert ours.get_partition(n).compute()["key"].isin(frames.shuffle(on="key").get_partition(n).compute()["key"]).all()
    assert not (tmp_path / "work" / "_scratch").exists()  # no files: Dask's own shuffle ran


def test_the_runner_removes_the_scratch_folder_before_it_lists_the_output(tmp_path: Path) -> None:
    from pipelines.marker import read_marker
    from tests.helpers import docs_frame, make_stage_dir, run_one

    inp = make_stage_dir(tmp_path / "in", docs_frame([{"text": "same words here"}, {"text": "same words here"}, {"text": "other"}]))
    result = run_one("exact_dedup", inp, tmp_path / "out")
    assert result.stats["dropped"]["documents"] == 1  # the exchange ran: one copy removed
    assert not (tmp_path / "out" / "_scratch").exists()
    assert not any("_scratch" in str(f) for f in read_marker(tmp_path / "out")["files"])


def _when(df: pd.DataFrame) -> pd.DataFrame:
    import time

    time.sleep(0.05)
    return pd.DataFrame({"part": df["part"].iloc[:1], "at": [time.monotonic()]})


def test_compute_with_costs_starts_the_costliest_partitions_first_on_a_cluster(tmp_path: Path) -> None:
    from pipelines.cluster import open_client

    costs = [1, 5, 3, 9, 2, 7, 4, 8, 6, 0, 10]  # 11 partitions: Dask alone would run 10 second to last
    with open_client(workers=1) as client:
        frames = dd.from_pandas(pd.DataFrame({"part": range(11)}), npartitions=11, sort=False)
        graph = frames.map_partitions(_when, meta=pd.DataFrame({"part": pd.Series(dtype="int64"), "at": pd.Series(dtype="float64")}))
        ctx = StageContext(name="demo", work_dir=tmp_path / "w", cache_dir=tmp_path / "c", input_fingerprint="x", quiet=True, client=client)
        out = ctx.compute(graph, "timed", costs=costs)
        assert sorted(out["part"]) == list(range(11))  # every partition once, results in partition order
        assert out["part"].tolist() == list(range(11))
        ran = out.sort_values("at")["part"].tolist()
        assert ran == sorted(range(11), key=lambda i: -costs[i])


def _log_part(df: pd.DataFrame, path: str) -> pd.DataFrame:
    with open(path, "a") as f:
        f.write(f"{int(df['part'].iloc[0])}\n")
    return df


def test_shuffle_with_costs_routes_the_costliest_input_partitions_first(tmp_path: Path) -> None:
    """exact_dedup hashes its documents in the exchange's routing step: with the input's costs
    the costliest partitions are hashed first, and the partitions that come out are the same."""
    from pipelines.cluster import open_client

    costs = [1, 5, 3, 9, 2, 7, 4, 8, 6, 0, 10]
    frames = dd.from_pandas(pd.DataFrame({"part": range(11), "key": [i % 3 for i in range(11)]}), npartitions=11, sort=False)
    log = tmp_path / "order.txt"
    with open_client(workers=1) as client:
        ctx = StageContext(name="demo", work_dir=tmp_path / "w", cache_dir=tmp_path / "c", input_fingerprint="x", quiet=True, client=client)
        logged = frames.map_partitions(_log_part, str(log), meta=frames._meta)
        ours = ctx.shuffle(logged, "key", "test", costs=costs)
        assert [int(x) for x in log.read_text().split()] == sorted(range(11), key=lambda i: -costs[i])
        plain = ctx.shuffle(frames, "key", "test")
        for n in range(11):
            assert ours.get_partition(n).compute().equals(plain.get_partition(n).compute())


def test_costs_come_from_the_input_stage_tokens_per_source(tmp_path: Path) -> None:
    ctx = _ctx(tmp_path)
    assert ctx.costs(["web"]) is None  # no recorded tokens: Dask's own order
    ctx.input_tokens, ctx.input_files = {"web": [5, 0, 2], "code": [1, 9, 0]}, ["a", "b", "c"]
    assert ctx.costs(["web"]) == [5, 0, 2]
    assert ctx.costs() == [6, 9, 2]
    assert ctx.costs(["math_science"]) == [0, 0, 0]


def test_read_rows_reads_a_range_across_row_groups(tmp_path: Path) -> None:
    from pipelines.io import read_rows, write_frame

    write_frame(pd.DataFrame({"a": range(1000)}), tmp_path / "x.parquet", row_group_size=256)
    for start, count in [(0, 256), (256, 256), (100, 300), (990, 256), (0, 1000)]:
        assert read_rows(tmp_path / "x.parquet", start, count)["a"].tolist() == list(range(start, min(start + count, 1000)))
    assert read_rows(tmp_path / "x.parquet", 1000, 5).empty


@pytest.mark.parametrize(("on", "nparts"), [("key", None), (["band", "band_hash"], 3), ("band", 7)])
def test_shuffle_without_costs_routes_in_the_graph_that_reads_it(tmp_path: Path, on, nparts) -> None:
    """Without ``costs`` the routing runs in the compute that uses the exchange (no compute of
    its own): the same partitions as the routing computed first (the reference, with costs)."""
    with dask.config.set(scheduler="synchronous", **{"dataframe.convert-string": False, "dataframe.shuffle.method": "tasks"}):
        frames = _frames()
        lazy_ctx, eager_ctx = _ctx(tmp_path / "lazy"), _ctx(tmp_path / "eager")
        lazy = lazy_ctx.shuffle(frames, on, "test", npartitions=nparts)
        assert not (tmp_path / "lazy" / "work" / "_scratch" / "exchange-001").exists()  # nothing routed yet
        eager = eager_ctx.shuffle(frames, on, "test", npartitions=nparts, costs=[0] * frames.npartitions)
        assert len(list((tmp_path / "eager" / "work" / "_scratch" / "exchange-001").glob("routed-*.arrow"))) == 5
        assert lazy.npartitions == eager.npartitions == (nparts or 5)
        together = lazy_ctx.compute(lazy.map_partitions(lambda df: df.assign(n=len(df)), meta={**frames.dtypes.to_dict(), "n": "int64"}), "all")
        assert len(together) == 400
        for n in range(lazy.npartitions):
            pd.testing.assert_frame_equal(lazy.get_partition(n).compute().reset_index(drop=True),
                                          eager.get_partition(n).compute().reset_index(drop=True))


def test_shuffle_without_costs_on_a_cluster(tmp_path: Path) -> None:
    from pipelines.cluster import open_client

    settings = {"dataframe.convert-string": False, "dataframe.shuffle.method": "tasks"}
    with dask.config.set(settings), open_client(workers=2) as client:
        frames = _frames()
        ctx = StageContext(name="demo", work_dir=tmp_path / "w", cache_dir=tmp_path / "c", input_fingerprint="x", quiet=True, client=client)
        lazy = ctx.shuffle(frames, "key", "test", npartitions=4)
        out = ctx.compute(lazy, "read")
    with dask.config.set(scheduler="synchronous", **settings):
        frames = _frames()
        eager = _ctx(tmp_path / "e").shuffle(frames, "key", "test", npartitions=4, costs=[0] * 5)
        ref = eager.compute()
    pd.testing.assert_frame_equal(out.reset_index(drop=True), ref.reset_index(drop=True))
