"""A cached sub-step is reused only while its files are as the step wrote them (``_DONE`` records
their names, sizes and modification times): a damaged one (a truncated artifact, which is a hard
link to the cache, a deleted, rewritten or added file) is computed again, never recorded as good."""

from __future__ import annotations

import json
import logging
import os
import subprocess
from pathlib import Path

import pandas as pd
import pytest

from pipelines import io
from pipelines.cluster import open_client
from pipelines.kit import Artifact, SlicedStep, StageContext
from pipelines.recipe import load_recipe
from pipelines.runner import run_recipe
from pipelines.verify import verify_run
from tests.helpers import only
from tests.pipelines.test_slices import _frame, _scaled, _stage_dir

DONE = "_DONE"  # pipelines.kit.step_record.DONE
FRAME = pd.DataFrame({"x": list(range(200)), "y": [f"row {i}" for i in range(200)]})


def _ctx(tmp_path: Path, cache: str = "cache") -> StageContext:
    return StageContext(name="demo", work_dir=tmp_path / "work", cache_dir=tmp_path / cache, input_fingerprint="in-1", quiet=True)


def _step(ctx: StageContext, calls: list[Path]) -> Artifact:
    def produce(folder: Path) -> dict:
        calls.append(folder)
        Artifact(folder).write_part(0, FRAME)
        Artifact(folder).write_part(1, FRAME.head(50))
        return {"rows": 250}

    return ctx.step("scores", {"k": 1}, produce)


def _truncate(step: Path, ctx: StageContext) -> str:
    link = ctx.artifacts_dir / "scores" / "part-00001.parquet"  # the stage's artifact: the same file as the cache's
    os.truncate(link, 100)
    return "part-00001.parquet has 100 bytes"


def _delete(step: Path, ctx: StageContext) -> str:
    (step / "part-00000.parquet").unlink()
    return "part-00000.parquet is missing"


def _rewrite_same_size(step: Path, ctx: StageContext) -> str:
    part = step / "part-00000.parquet"
    written = part.stat().st_mtime_ns
    part.write_bytes(part.read_bytes())
    os.utime(part, ns=(written + 2_000_000_000, written + 2_000_000_000))  # a write two seconds later
    return "part-00000.parquet was modified after the step wrote it"


def _add_file(step: Path, ctx: StageContext) -> str:
    Artifact(step).write_part(7, FRAME.head(3))
    return "part-00007.parquet was not written by the step"


def _older_done(step: Path, ctx: StageContext) -> str:
    (step / DONE).write_text("0123456789abcdef")  # a _DONE that records no files
    return f"its {DONE} records no files"


@pytest.mark.parametrize("damage", [_truncate, _delete, _rewrite_same_size, _add_file, _older_done])
def test_a_damaged_cached_step_is_computed_again_and_named(tmp_path: Path, caplog, damage) -> None:
    calls: list[Path] = []
    first = _step(_ctx(tmp_path), calls)
    said = damage(first.path, _ctx(tmp_path))
    caplog.set_level(logging.INFO)
    again = _step(_ctx(tmp_path), calls)
    assert len(calls) == 2, "the damaged step was reused"
    assert f"demo: the cached scores in {first.path} is not as the step wrote it ({said}" in caplog.text
    pd.testing.assert_frame_equal(again.read_all().reset_index(drop=True),
                                  pd.concat([FRAME, FRAME.head(50)]).reset_index(drop=True))
    caplog.clear()
    _step(_ctx(tmp_path), calls)  # made again whole: reused from now on
    assert len(calls) == 2 and "reusing scores" in caplog.text


def test_an_untouched_step_and_a_copy_that_keeps_times_and_links_are_reused(tmp_path: Path) -> None:
    calls: list[Path] = []
    _step(_ctx(tmp_path), calls)
    _step(_ctx(tmp_path), calls)
    assert len(calls) == 1
    subprocess.run(["cp", "-a", str(tmp_path / "cache"), str(tmp_path / "copy")], check=True)  # new inodes, same times
    _step(_ctx(tmp_path, "copy"), calls)
    assert len(calls) == 1


def test_a_step_whose_times_lost_their_fraction_of_a_second_is_reused(tmp_path: Path) -> None:
    """An archive in tar's default format keeps whole seconds: a run unpacked from one reuses its steps."""
    calls: list[Path] = []
    first = _step(_ctx(tmp_path), calls)
    for part in first.path.rglob("*"):
        if part.is_file():
            whole = part.stat().st_mtime_ns // 1_000_000_000 * 1_000_000_000
            os.utime(part, ns=(whole, whole))
    _step(_ctx(tmp_path), calls)
    assert len(calls) == 1


def test_a_sliced_step_whose_artifact_was_truncated_is_computed_again(tmp_path: Path, caplog) -> None:
    src = _stage_dir(tmp_path / "in", [_frame(30, seed=s, offset=30 * s) for s in range(2)])
    docs = io.read_docs(src)

    def run() -> tuple[StageContext, Artifact, list[str]]:
        ctx = StageContext(name="demo", work_dir=tmp_path / "w", cache_dir=tmp_path / "c", input_fingerprint="x", quiet=True,
                           input_docs=docs, input_files=io.docs_files(src))
        labels: list[str] = []
        compute = ctx.compute
        ctx.compute = lambda graph, label, costs=None: (labels.append(label), compute(graph, label, costs))[1]  # type: ignore[method-assign]
        (art,) = ctx.sliced_steps(docs, [SlicedStep("scores", {"scale": 2.0}, _scaled, (2.0,))], "score")
        return ctx, art, labels

    with open_client("synchronous"):
        ctx, art, labels = run()
        ref = art.read_all()
        os.truncate(ctx.artifacts_dir / "scores" / "part-00001.parquet", 64)
        caplog.set_level(logging.INFO)
        _, art, labels = run()
        assert labels == ["score"] and "part-00001.parquet has 64 bytes, the step wrote" in caplog.text
        pd.testing.assert_frame_equal(art.read_all(), ref)


# the tester's case on a whole run: a truncated artifact of a finished stage


def _corpus(tmp_path: Path) -> Path:
    raw = tmp_path / "raw"
    raw.mkdir()
    with open(raw / "a.jsonl", "w") as f:
        for i in range(80):
            f.write(json.dumps({"id": f"a{i}", "text": f"document number {i % 25} with some words", "source": "web"}) + "\n")
    return raw


def _run(raw: Path, out: Path, *overrides: str):
    rec = load_recipe(None, ["ingest.tokenizer=whitespace", *only("exact_dedup"), *overrides])
    with open_client("synchronous") as client:
        return run_recipe(rec, [str(raw)], out, client=client, quiet=True)


def test_a_run_remakes_a_truncated_cached_artifact_instead_of_recording_it(tmp_path: Path, caplog) -> None:
    raw, out = _corpus(tmp_path), tmp_path / "run"
    _run(raw, out)
    artifact = sorted((out / "00_ingest" / "artifacts" / "parsed").glob("part-*.parquet"))[0]
    size = artifact.stat().st_size
    os.truncate(artifact, size // 2)
    caplog.set_level(logging.INFO)
    assert [r.skipped for r in _run(raw, out)] == [False, True]
    assert "ingest: re-running: its output is not as its marker recorded" in caplog.text
    assert "the cached parsed in" in caplog.text and "computing it again" in caplog.text
    assert artifact.stat().st_size == size and verify_run(out) == []
    assert [r.skipped for r in _run(raw, out, "exact_dedup.keep=longest")] == [True, False]  # reads it again
