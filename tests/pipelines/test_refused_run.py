"""A run refused because a stage folder it would replace holds someone else's files (exit 5) is
refused before it changes anything: the finished run keeps its ``run.json``, stage folders and
state. A folder the run keeps as it is (up to date) is no reason to refuse. A stage made again says
why in one line; a model folder's fingerprint sees a file put back with its old modification time."""

from __future__ import annotations

import json
import logging
import os
import shutil
import time
from pathlib import Path

import pytest

from curation.stats.run_state import run_state
from pipelines.kit.preflight import files_stamp
from pipelines.recipe import load_recipe, stage_hash
from pipelines.safety import OutputError
from tests.pipelines.test_cached_steps_intact import _corpus, _run


def _state(out: Path) -> dict[str, bytes]:
    """Every file of the run folder (locks aside) and its bytes."""
    return {p.relative_to(out).as_posix(): p.read_bytes() for p in sorted(out.rglob("*"))
            if p.is_file() and not p.name.endswith(".lock")}


@pytest.mark.parametrize(("notes_in", "overrides"), [
    ("10_exact_dedup", ["exact_dedup.keep=longest"]),  # the stage whose key changed
    ("10_exact_dedup", ["ingest.max_chars=100000"]),  # a stage after it, remade from its new output
])
def test_a_refused_run_leaves_the_finished_run_as_it_was(tmp_path: Path, notes_in: str, overrides: list[str]) -> None:
    raw, out = _corpus(tmp_path), tmp_path / "run"
    _run(raw, out)
    (out / notes_in / "NOTES.txt").write_text("mine\n")
    before = _state(out)
    with pytest.raises(OutputError, match=f"{notes_in} holds files curate did not write"):
        _run(raw, out, *overrides)
    assert _state(out) == before and not (out / "run.progress.json").exists()
    assert json.loads((out / "run.json").read_text())["status"] == "complete"


def test_a_folder_with_someone_elses_file_that_stays_up_to_date_is_no_reason_to_refuse(tmp_path: Path) -> None:
    raw, out = _corpus(tmp_path), tmp_path / "run"
    _run(raw, out)
    (out / "00_ingest" / "NOTES.txt").write_text("mine\n")
    assert [r.skipped for r in _run(raw, out)] == [True, True]
    assert [r.skipped for r in _run(raw, out, "exact_dedup.keep=longest")] == [True, False]
    assert (out / "00_ingest" / "NOTES.txt").read_text() == "mine\n"


def test_a_stage_made_again_says_why(tmp_path: Path, caplog) -> None:
    raw, out = _corpus(tmp_path), tmp_path / "run"
    _run(raw, out)
    caplog.set_level(logging.INFO)
    _run(raw, out, "exact_dedup.keep=longest")
    assert 'exact_dedup: re-running: its config changed (keep "first" → "longest")' in caplog.text
    caplog.clear()
    with open(raw / "a.jsonl", "a") as f:
        f.write(json.dumps({"id": "new", "text": "one more document", "source": "web"}) + "\n")
    _run(raw, out, "exact_dedup.keep=longest")
    assert "ingest: re-running: its input changed since it was made (an input file was edited" in caplog.text
    assert "exact_dedup: re-running: its input changed since it was made (the folder it reads" in caplog.text


def test_a_model_file_put_back_with_its_old_modification_time_changes_the_stage_hash(tmp_path: Path) -> None:
    """The tester's case: other weights of the same size, put in place with the modification time of
    the file they replace (``cp -p``, ``touch -r``). The change time and inode are in the model's
    stamp, as in ingest's fingerprint of its input files, so the stage is made again."""
    model = tmp_path / "myedu"
    shutil.copytree(Path(__file__).resolve().parents[2] / "classifiers" / "models" / "edu_fast", model)
    recipe = load_recipe(None, [f"edu_score.scorer={model}"])
    weights = model / "weights.npz"
    chash, before = stage_hash("edu_score", recipe), os.stat(weights)
    assert stage_hash("edu_score", recipe) == chash  # nothing changed: the same hash
    time.sleep(0.05)  # past the file system's clock tick
    aside = tmp_path / "aside.npz"
    aside.write_bytes(weights.read_bytes()[::-1])
    os.utime(aside, ns=(before.st_atime_ns, before.st_mtime_ns))
    os.replace(aside, weights)
    after = os.stat(weights)
    assert (after.st_size, after.st_mtime_ns) == (before.st_size, before.st_mtime_ns)
    assert files_stamp(model)[1][:3] == ["weights.npz", before.st_size, before.st_mtime_ns]
    assert stage_hash("edu_score", recipe) != chash


def test_a_single_stage_made_again_inside_a_run_says_its_later_stages_are_stale(tmp_path: Path, caplog) -> None:
    from pipelines.cluster import open_client
    from pipelines.runner import run_stage

    raw, out = _corpus(tmp_path), tmp_path / "run"
    _run(raw, out)  # ingest and exact_dedup
    caplog.set_level(logging.WARNING)
    with open_client("synchronous") as client:
        # ingest again with a setting that leaves its output as it was (restat): the run stays current
        same = load_recipe(None, ["ingest.tokenizer=whitespace", "ingest.max_chars=100000"])
        run_stage("ingest", same, stage_dir=out / "00_ingest", inputs=[str(raw)], client=client, quiet=True)
    assert "made again inside the run" not in caplog.text
    with open_client("synchronous") as client:
        # ingest again with a setting that changes its output, into the run's own folder: exact_dedup was made
        # from its old output
        changed = load_recipe(None, ["ingest.tokenizer=whitespace", "ingest.max_chars=20"])
        run_stage("ingest", changed, stage_dir=out / "00_ingest", inputs=[str(raw)], client=client, quiet=True)
    assert "00_ingest was made again inside the run" in caplog.text and "(10_exact_dedup)" in caplog.text
    caplog.clear()
    with open_client("synchronous") as client:  # the same stage into a folder of its own: nothing to say
        run_stage("ingest", changed, stage_dir=tmp_path / "alone" / "00_ingest", inputs=[str(raw)], client=client, quiet=True)
    assert "made again inside the run" not in caplog.text


def test_a_single_stage_made_again_inside_a_run_names_only_the_stages_it_made_stale(tmp_path: Path, caplog) -> None:
    """A later stage made stale on its own (re-run alone with other settings) is not blamed on an
    earlier stage re-run after it whose output comes out as before."""
    from pipelines.cluster import open_client
    from pipelines.runner import run_stage

    raw, out = tmp_path / "raw", tmp_path / "run"
    raw.mkdir()
    with open(raw / "a.jsonl", "w") as f:  # each text twice, the second copy longer: keep=longest keeps the other
        for i in range(20):
            for n, text in enumerate(
                [f"document number {i} with some words", f"document number {i} with some words  \t "]
            ):
                f.write(json.dumps({"id": f"a{i}-{n}", "text": text, "source": "web"}) + "\n")
    _run(raw, out)  # ingest and exact_dedup
    with open_client("synchronous") as client:  # exact_dedup alone with another setting: stale on its own
        longest = load_recipe(None, ["ingest.tokenizer=whitespace", "exact_dedup.keep=longest"])
        run_stage(
            "exact_dedup",
            longest,
            stage_dir=out / "10_exact_dedup",
            input_dir=out / "00_ingest",
            client=client,
            quiet=True,
        )
    assert "10_exact_dedup" in run_state(out).stale
    caplog.set_level(logging.WARNING)
    with open_client("synchronous") as client:  # ingest again, its output as before: it made nothing stale
        same = load_recipe(None, ["ingest.tokenizer=whitespace", "ingest.max_chars=100000"])
        run_stage("ingest", same, stage_dir=out / "00_ingest", inputs=[str(raw)], client=client, quiet=True)
    assert "made again inside the run" not in caplog.text
    assert "10_exact_dedup" in run_state(out).stale


@pytest.mark.parametrize("damage", ["removed", "cut"])
def test_a_run_stage_folder_without_its_marker_is_named_with_what_to_do(tmp_path: Path, damage: str) -> None:
    """A stage folder of a run whose ``_SUCCESS`` is gone or cut is refused (curate cannot tell it is
    its own), and the error says to move or delete that one folder, not to choose another --output;
    done so, the run makes that stage again and keeps the later one, whose input comes out the same."""
    raw, out = _corpus(tmp_path), tmp_path / "run"
    _run(raw, out)
    marker = out / "00_ingest" / "_SUCCESS"
    if damage == "removed":
        marker.unlink()
    else:
        marker.write_text(marker.read_text()[:40])
    with pytest.raises(OutputError) as refused:
        _run(raw, out)
    said = str(refused.value)
    assert f"it is a stage folder of the run {out}: move it away or delete it (`rm -r {out / '00_ingest'}`)" in said
    assert "choose a new or empty --output" not in said and "and run the command again" in said
    assert ("its _SUCCESS is not one curate wrote" in said) == (damage == "cut")
    shutil.rmtree(out / "00_ingest")
    assert [r.skipped for r in _run(raw, out)] == [False, True]
