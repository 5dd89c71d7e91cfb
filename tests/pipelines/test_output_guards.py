"""Every command that writes guards its --output as `run` does: an export never replaces a stage's
folder (nor a stage another stage's), a trainer never writes into a run or over the user's files,
and a report never lands inside a stage folder or over a file it did not write."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from pipelines.cli import main as curate

SAMPLE = Path(__file__).resolve().parents[2] / "sample_data"


@pytest.fixture
def run(finished_run, tmp_path):
    out = tmp_path / "run"
    shutil.copytree(finished_run, out)  # these tests write beside and into it
    return out


def _files(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_an_export_and_a_stage_replace_only_their_own_kind_of_folder(run, tmp_path, caplog):
    stage = tmp_path / "ingest"
    shutil.copytree(run / "00_ingest", stage)
    before = _files(stage)
    assert curate(["export", "megatron", str(run), "--output", str(stage), "--phase", "midtrain_reasoning_32k",
                   "--scheduler", "synchronous", "--quiet"]) == 5
    assert f"{stage} holds curate's ingest output, not export_megatron or export_datasets's" in caplog.text
    assert _files(stage) == before

    export = tmp_path / "export"
    assert curate(["export", "datasets", str(run), "--output", str(export), "--phase", "midtrain_reasoning_32k",
                   "--scheduler", "synchronous", "--quiet"]) == 0
    exported = _files(export)
    assert curate(["export", "megatron", str(run), "--output", str(export), "--phase", "midtrain_reasoning_32k",
                   "--scheduler", "synchronous", "--quiet"]) == 5  # another format's export is not replaced unasked
    assert "holds a datasets export of midtrain_reasoning_32k; this megatron export would replace it" in caplog.text
    assert _files(export) == exported
    assert curate(["export", "megatron", str(run), "--output", str(export), "--phase", "midtrain_reasoning_32k",
                   "--scheduler", "synchronous", "--quiet", "--replace"]) == 0  # asked: replaced whole
    assert _files(export) != exported
    caplog.clear()
    assert curate(["ingest", "--input", str(SAMPLE / "web"), "--output", str(export), "--scheduler", "synchronous", "--quiet"]) == 5
    assert "holds curate's export_megatron output, not ingest's" in caplog.text and (export / "export.json").is_file()
    assert curate(["exact-dedup", "--input", str(run / "00_ingest"), "--output", str(stage), "--scheduler", "synchronous",
                   "--quiet"]) == 5
    assert _files(stage) == before


def test_a_trainer_writes_only_a_new_empty_or_model_folder_outside_runs(run, tmp_path, caplog):
    stage = run / "50_code_quality"
    train = ["train-classifier", "code-content", "--input", str(stage)]
    before = _files(run)
    assert curate([*train, "--output", str(stage)]) == 5
    assert f"is inside {stage}, which curate wrote" in caplog.text
    assert curate([*train, "--output", str(stage / "artifacts" / "model")]) == 5
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("mine")
    assert curate([*train, "--output", str(mine)]) == 5
    assert "holds files and no model.json" in caplog.text
    (tmp_path / "afile").write_text("mine")
    assert curate([*train, "--output", str(tmp_path / "afile")]) == 5
    assert _files(run) == before and (tmp_path / "afile").read_text() == "mine" and sorted(mine.iterdir()) == [mine / "notes.txt"]
    assert curate(["verify", str(run)]) == 0


def test_a_report_lands_outside_stage_folders_and_over_nothing_but_a_report(run, tmp_path, caplog, capsys):
    before = _files(run / "80_mixture")
    assert curate(["report", str(run), "--output", str(run / "80_mixture" / "manifests" / "x.json")]) == 5
    assert curate(["report", str(run), "--output", str(run / "00_ingest" / "report.html")]) == 5
    assert "which curate wrote and checks file by file" in caplog.text and _files(run / "80_mixture") == before
    mine = tmp_path / "notes.txt"
    mine.write_text("mine")
    assert curate(["report", str(run), "--output", str(mine)]) == 5
    assert "is not a report curate wrote" in caplog.text and mine.read_text() == "mine"
    assert curate(["report", str(run), "--output", str(tmp_path)]) == 5
    assert f"give a file name, e.g. {tmp_path / 'report.html'}" in caplog.text
    with pytest.raises(SystemExit) as exc:
        curate(["report", str(run), "--examples", "-1"])
    assert exc.value.code == 2 and "-1 is negative" in capsys.readouterr().err
    page = tmp_path / "report.html"
    assert curate(["report", str(run), "--output", str(page)]) == 0
    assert curate(["report", str(run), "--output", str(page), "--examples", "0"]) == 0  # its own earlier report is replaced
    assert curate(["verify", str(run)]) == 0


def test_a_run_never_lands_in_a_stage_folder_nor_a_stage_inside_one(run, tmp_path, caplog):
    before = _files(run / "10_exact_dedup")
    assert curate(["run", "pipelines/configs/glm45.yaml", "--input", str(SAMPLE), "--output", str(run / "10_exact_dedup"),
                   "--quiet"]) == 5
    assert f"--output {run / '10_exact_dedup'} is a folder curate wrote for one stage" in caplog.text
    assert curate(["minhash-dedup", "--input", str(run / "10_exact_dedup"), "--output", str(run / "10_exact_dedup" / "mh"),
                   "--quiet"]) == 5
    assert f"is inside {run / '10_exact_dedup'}, a folder curate wrote" in caplog.text
    assert _files(run / "10_exact_dedup") == before


def test_a_stage_refuses_an_unfinished_or_missing_input_before_anything_runs(run, tmp_path, caplog):
    unfinished = tmp_path / ".00_ingest.inprogress"
    shutil.copytree(run / "00_ingest", unfinished)
    (unfinished / "_SUCCESS").unlink()  # what a stage stopped while writing leaves
    unmarked = tmp_path / "00_ingest"
    shutil.copytree(run / "00_ingest", unmarked)
    (unmarked / "_SUCCESS").write_text("{}")
    stopped = tmp_path / "stopped"  # killed before its folder was renamed into place
    (tmp_path / ".stopped.inprogress").mkdir()
    for folder, words in ((unfinished, "is the unfinished output of a stage that was stopped"),
                          (unmarked, "is a stage's output without a readable _SUCCESS"),
                          (tmp_path / "nope", "does not exist; give the folder a stage wrote"),
                          (stopped, "does not exist: the stage writing it was stopped before it finished")):
        for extra in ([], ["--dry-run"]):
            caplog.clear()
            assert curate(["exact-dedup", "--input", str(folder), "--output", str(tmp_path / "out"), "--quiet", *extra]) == 4
            assert words in caplog.text and not (tmp_path / "out").exists()
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("mine")
    assert curate(["exact-dedup", "--input", str(run / "00_ingest"), "--output", str(mine), "--dry-run"]) == 5
    assert curate(["exact-dedup", "--input", str(run / "00_ingest" / "docs"), "--output", str(tmp_path / "fromdocs"),
                   "--quiet"]) == 0  # a stage's docs/ folder is its stage's output


def test_a_stage_input_given_as_dot_reads_its_runs_artifacts(run, tmp_path, monkeypatch):
    """code_web takes ingest's page HTML from the run folder holding its --input; `.` is that folder too."""
    args = ["code-web", "--scheduler", "synchronous", "--quiet"]
    assert curate([*args, "--input", str(run / "50_code_quality"), "--output", str(tmp_path / "a")]) == 0
    monkeypatch.chdir(run / "50_code_quality")
    assert curate([*args, "--input", ".", "--output", str(tmp_path / "b")]) == 0
    a, b = (json.loads((tmp_path / x / "stats.json").read_text())["extra"] for x in "ab")
    assert a["annotated"] == b["annotated"] and a["annotated"]["recalled"] > 0


def test_a_cache_dir_follows_the_rules_of_an_output(run, tmp_path, caplog):
    before = _files(run / "00_ingest")
    stage = ["exact-dedup", "--input", str(run / "00_ingest"), "--output", str(tmp_path / "out"), "--quiet"]
    assert curate([*stage, "--cache-dir", str(run / "00_ingest")]) == 5
    assert f"--cache-dir {run / '00_ingest'} is a folder curate wrote for one stage" in caplog.text
    raw = tmp_path / "raw"
    shutil.copytree(SAMPLE / "web", raw)
    assert curate(["ingest", "--input", str(raw), "--output", str(tmp_path / "ing"), "--quiet", "--cache-dir", str(raw / "cache")]) == 5
    assert f"--cache-dir {raw / 'cache'} is inside the input {raw}" in caplog.text and not (raw / "cache").exists()
    (tmp_path / "afile").write_text("mine")
    assert curate([*stage, "--cache-dir", str(tmp_path / "afile")]) == 5
    assert "is a file, not a folder" in caplog.text and (tmp_path / "afile").read_text() == "mine"
    assert _files(run / "00_ingest") == before and not (tmp_path / "out").exists()


def test_a_stage_rerun_into_its_runs_folder_reuses_the_runs_cache(run, caplog):
    import logging

    caplog.set_level(logging.INFO)
    assert curate(["minhash-dedup", "--input", str(run / "10_exact_dedup"), "--output", str(run / "20_minhash_dedup"),
                   "--scheduler", "synchronous", "threshold=0.7"]) == 0  # a decision key: the signatures stand
    assert f"reusing signatures from {run / '.cache' / 'minhash_dedup'}" in caplog.text
    assert "computing signatures" not in caplog.text and not (run / "20_minhash_dedup" / ".cache").exists()


def test_single_stages_side_by_side_do_not_lock_each_other_but_a_runs_folder_is_locked(run, tmp_path, caplog):
    import os
    import subprocess
    import sys

    repo = SAMPLE.parent
    shared = tmp_path / "shared"
    holder = subprocess.Popen(  # a stage writing shared/a, holding what a stage holds
        [sys.executable, "-c", "import time\nfrom pipelines.safety import stage_lock\n"
         f"with stage_lock({str(shared / 'a')!r}):\n    print('locked', flush=True)\n    time.sleep(120)\n"],
        stdout=subprocess.PIPE, text=True, cwd=repo, env={**os.environ, "PYTHONPATH": str(repo)})
    try:
        assert holder.stdout.readline().strip() == "locked"
        stage = ["exact-dedup", "--input", str(run / "00_ingest"), "--scheduler", "synchronous", "--quiet"]
        assert curate([*stage, "--output", str(shared / "b")]) == 0  # a sibling: not blocked
        assert curate([*stage, "--output", str(shared / "a")]) == 6
        assert f"{shared / 'a'} is being written by another curate process" in caplog.text  # the stage folder, not its parent
        assert sorted(p.name for p in shared.iterdir()) == [".a.curate.lock", "b"]  # no lock of b left behind
    finally:
        holder.kill()
        holder.wait()
    runner = subprocess.Popen(  # a run writing its folder: a stage into that run waits for it
        [sys.executable, "-c", "import time\nfrom pipelines.safety import folder_lock\n"
         f"with folder_lock({str(run)!r}):\n    print('locked', flush=True)\n    time.sleep(120)\n"],
        stdout=subprocess.PIPE, text=True, cwd=repo, env={**os.environ, "PYTHONPATH": str(repo)})
    try:
        assert runner.stdout.readline().strip() == "locked"
        assert curate(["exact-dedup", "--input", str(run / "00_ingest"), "--output", str(run / "10_exact_dedup"), "--quiet"]) == 6
    finally:
        runner.kill()
        runner.wait()
