"""Issue 39 (round three) and issue 38: a run folder describes one recipe; hostile recipes are
refused before anything runs; SIGTERM and failures leave nothing half-written; a bug is a bug.

Each test reproduces one finding through the CLI (real runs, real files) and fails on the code
before the fix.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import signal
import time
from pathlib import Path
from typing import Any

import pytest

from pipelines.cli import main
from pipelines.recipe_schema import default_recipe_path
from tests.helpers import slow_exact_dedup_run
from tests.pipelines.test_runner import FOUNDATION, _corpus

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "sample_data"
RECIPE = str(default_recipe_path())
#: The whole default recipe, its CPU settings, on the 60 reasoning traces: ~5 s a run.
SMALL = [str(SAMPLE / "reasoning")]


def _run(out: Path, *overrides: str, inputs: list[str] = SMALL) -> int:
    return main(["run", RECIPE, "--input", *inputs, "--output", str(out), "--scheduler", "synchronous", "--quiet",
                 "--profile", "cpu", *overrides])


def _manifest_upstream(out: Path) -> list[str]:
    manifest = json.loads((out / "80_mixture" / "manifests" / "pretrain_phase1.json").read_text())
    return [u["folder"] for u in manifest["upstream"]]


# 1. stale stages never pass as current


def test_a_rerun_with_another_recipe_leaves_no_stage_of_the_old_one(tmp_path, capsys, caplog):
    out = tmp_path / "run"
    assert _run(out) == 0
    assert "30_semdedup" in _manifest_upstream(out)
    # another recipe into the same folder: the mixture it no longer runs is not left behind
    assert _run(out, "minhash_dedup.threshold=0.5", "mixture.enabled=false") == 0
    assert not (out / "80_mixture").exists()
    capsys.readouterr()
    assert main(["verify", str(out)]) == 0
    capsys.readouterr()
    assert main(["stats", str(out), "--json", "--check"]) == 0
    assert "mixture" not in [s["stage"] for s in json.loads(capsys.readouterr().out)]
    # manifests cite exactly the stages that produced them
    assert _run(out, "semdedup.enabled=false") == 0
    assert not (out / "30_semdedup").exists() and "30_semdedup" not in _manifest_upstream(out)
    assert main(["manifest", "validate", str(out)]) == 0


def test_verify_stats_report_and_validate_refuse_a_stage_of_another_upstream(tmp_path, capsys, caplog):
    old, out = tmp_path / "old", tmp_path / "run"
    assert _run(old) == 0
    assert _run(out, "minhash_dedup.threshold=0.5", "semdedup.enabled=false") == 0
    # what an older curate (or a copy by hand) leaves: stages made from another upstream
    shutil.copytree(old / "30_semdedup", out / "30_semdedup")
    shutil.rmtree(out / "80_mixture")
    shutil.copytree(old / "80_mixture", out / "80_mixture")
    capsys.readouterr()
    assert main(["verify", str(out)]) == 1
    text = capsys.readouterr().out
    assert "30_semdedup: left out: not a stage of the run's recipe" in text
    assert "80_mixture: left out: made from another output" in text
    assert main(["manifest", "validate", str(out)]) == 1
    assert "80_mixture is not the run's current output" in capsys.readouterr().out
    caplog.clear()
    assert main(["stats", str(out), "--json"]) == 0  # says so, exits 0 unless asked to check
    stages = [s["stage"] for s in json.loads(capsys.readouterr().out)]
    assert "semdedup" not in stages and "mixture" not in stages and "web_quality" in stages
    assert "left out" in caplog.text and "80_mixture" in caplog.text
    assert main(["stats", str(out), "--check"]) == 1
    from curation.stats.mixture import manifests
    from curation.stats.run import missing_stage_note, open_run

    run = open_run(out)
    assert run.stale == ["30_semdedup", "80_mixture"]
    # the stale mixture's manifests (another run's documents) are in no view: not the table, not the notebook's
    assert manifests(run) == {} and (out / "80_mixture" / "manifests").is_dir()
    assert "80_mixture of run is left out: made from another output" in missing_stage_note(run, "mixture")
    caplog.clear()
    assert main(["stats", str(out), "--mixture"]) == 4
    assert "no mixture manifests of this run" in caplog.text and "80_mixture: made from another output" in caplog.text


# 13. stats says when a run did not finish


def test_stats_says_a_run_failed_or_was_killed(tmp_path, capsys, caplog, monkeypatch):
    import pipelines.stages.exact_dedup as stage_mod

    raw = _corpus(tmp_path)
    out = tmp_path / "run"
    argv = ["run", RECIPE, "--input", str(raw), "--output", str(out), "--scheduler", "synchronous", "--quiet", *FOUNDATION]
    assert main(argv) == 0

    def broken(*a, **k):
        raise RuntimeError("planted failure")

    monkeypatch.setattr(stage_mod, "pick_duplicates", broken)
    assert main([*argv, "exact_dedup.keep=longest"]) == 70
    caplog.clear()
    capsys.readouterr()
    assert main(["stats", str(out)]) == 0
    assert "ingest" in capsys.readouterr().out and "exact_dedup" not in caplog.text.split("stages not done:")[0]
    assert "did not finish: it is failed (RuntimeError: planted failure)" in caplog.text
    assert "stages not done: 10_exact_dedup" in caplog.text
    assert main(["stats", str(out), "--check"]) == 1
    # a run killed outright (SIGKILL, a lost node) leaves its progress file saying "running"
    progress = out / "run.progress.json"
    record = json.loads(progress.read_text())
    progress.write_text(json.dumps({**record, "status": "running", "error": None}))
    caplog.clear()
    assert main(["stats", str(out), "--check"]) == 1
    assert "stopped without finishing" in caplog.text
    # the finished re-run: nothing to say
    monkeypatch.undo()
    assert main([*argv, "exact_dedup.keep=longest"]) == 0
    caplog.clear()
    assert main(["stats", str(out), "--check"]) == 0 and "did not finish" not in caplog.text
    assert not progress.exists()


# 3. any recipe runs on any mix of sources


EDU_SOURCES = {"web", "crawl", "math_science"}


@pytest.mark.slow
@pytest.mark.parametrize("source", sorted(p.name for p in SAMPLE.iterdir() if p.is_dir()))
def test_the_default_recipe_runs_on_each_source_alone(tmp_path, source):
    """The local judge (edu_score.annotator=local) is turned on for the sources edu_score does not
    score: with none of its sources the judge's agreement compared two empty frames and crashed
    (exit 2 after 7 stages); on the others the CPU judge takes a minute, so the default (none) is used."""
    judge = [] if source in EDU_SOURCES else ["edu_score.annotator=local"]
    out = tmp_path / "run"
    assert _run(out, *judge, inputs=[str(SAMPLE / source)]) == 0
    assert (out / "run.json").exists() and (out / "80_mixture" / "_SUCCESS").exists()
    assert main(["verify", str(out)]) == 0


# 7 and 10. the whole recipe is checked before anything runs; messages name key and file


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["seed=.inf"], "seed = inf: give a whole number"),
        (["seed=abc"], "seed = 'abc': give a whole number"),
        (["name=[a, b]"], "name = ['a', 'b']: give the recipe's name as text"),
        (["ingest.max_chars=-1"], "IngestConfig.max_chars = -1 is out of range"),
        (["minhash_dedup.threshold=.nan"], "threshold = nan is not a valid float (give a finite number)"),
        (["ingest.blocksize_mb=true"], "blocksize_mb = True is not a valid int"),
        (["ingest.crawl_min_block_mb=0"], "IngestConfig.crawl_min_block_mb = 0 is out of range"),
        (["cluster.min_input_mb=-1"], "cluster.min_input_mb = -1: give a size in MiB ≥ 0"),
        (["ingest.tokenizer=/etc/passwd"], "stages.ingest.tokenizer = '/etc/passwd': /etc/passwd is not a tokenizer.json"),
        (["mixture.tokenizer=/no/such/tokenizer.json"], "stages.mixture.tokenizer = '/no/such/tokenizer.json': /no/such/tokenizer.json does not exist"),
        # the manifests named qwen over word counts, and the export ended in an internal error (exit 70)
        (["ingest.tokenizer=whitespace"], "mixture.tokenizer is 'qwen' but ingest.tokenizer is 'whitespace': the mixture's budgets"),
    ],
)
def test_bad_values_fail_before_anything_runs_naming_key_and_file(tmp_path, caplog, args, expected):
    out = tmp_path / "run"
    assert main(["run", RECIPE, "--input", *SMALL, "--output", str(out), "--dry-run", *args]) == 2
    assert expected in caplog.text
    assert not out.exists()


def test_config_that_is_not_a_file_says_what_it_is(tmp_path, caplog):
    for path, what in (("/dev/zero", "is a character device, not a file"), (str(tmp_path), "is a folder, not a file")):
        caplog.clear()
        rc = main(["exact-dedup", "--config", path, "--input", str(tmp_path / "in"), "--output", str(tmp_path / "out"), "--dry-run"])
        assert rc == 2 and f"recipe {path} {what}" in caplog.text


def _laughs(levels: int = 8) -> str:
    """A YAML list that expands to 9**levels numbers through aliases."""
    parts = ["&a0 [0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1]"]
    parts += [f"&a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, levels)]
    return "[" + ", ".join(parts) + "]"


def test_a_yaml_alias_bomb_is_refused_at_once(tmp_path, caplog):
    recipe = tmp_path / "bomb.yaml"
    recipe.write_text(f"name: bomb\nstages:\n  semdedup:\n    eps_sweep: {_laughs()}\n")
    started = time.monotonic()
    assert main(["run", str(recipe), "--input", *SMALL, "--output", str(tmp_path / "a"), "--dry-run"]) == 2
    assert main(["run", RECIPE, "--input", *SMALL, "--output", str(tmp_path / "b"), "--dry-run",
                 f"semdedup.eps_sweep={_laughs()}"]) == 2
    assert time.monotonic() - started < 30
    assert caplog.text.count("the YAML expands to more than 100,000 values") == 2
    assert max(len(line) for line in caplog.text.splitlines()) < 3000  # no message formats the expanded value
    recursive = tmp_path / "loop.yaml"
    recursive.write_text("name: loop\nstages:\n  semdedup:\n    eps_sweep: &a [0.1, *a]\n")
    assert main(["run", str(recursive), "--input", *SMALL, "--output", str(tmp_path / "c"), "--dry-run"]) == 2
    assert "contains itself" in caplog.text


# 8. SIGTERM like Ctrl-C; failed stages leave no temporary files; the cache lives under --output


@pytest.mark.slow
def test_sigterm_is_one_line_exit_143_and_leaves_nothing_half_written(tmp_path):
    raw = _corpus(tmp_path)
    out = tmp_path / "run"
    proc = slow_exact_dedup_run(RECIPE, raw, out, FOUNDATION)
    work = out / ".10_exact_dedup.inprogress"
    deadline = time.time() + 120
    while not work.exists() and time.time() < deadline and proc.poll() is None:
        time.sleep(0.2)
    assert work.exists(), "the run never reached exact_dedup"
    time.sleep(1)
    proc.send_signal(signal.SIGTERM)  # what SLURM and Kubernetes send: to the job's process, not its group
    try:
        _, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 143, err
    assert "Traceback" not in err and err.count("ERROR") == 1 and "terminated (SIGTERM)" in err, err
    left = [p.relative_to(out).as_posix() for p in out.rglob("*") if p.name.endswith((".inprogress", ".tmp", ".curate.lock"))]
    assert left == []
    assert (out / "00_ingest" / "_SUCCESS").exists()
    assert json.loads((out / "run.progress.json").read_text())["status"] == "interrupted"


def test_a_failed_ingest_leaves_no_temp_files_and_caches_under_its_output(tmp_path, caplog):
    raw = _corpus(tmp_path)  # b.jsonl ends in a broken line
    out = tmp_path / "home" / "ingested"  # as `--output ~/ingested`: nothing may land in ~/.cache
    rc = main(["ingest", "--input", str(raw), "--output", str(out), "--scheduler", "synchronous", "--quiet",
               "tokenizer=whitespace", "on_error=fail"])
    assert rc == 4
    assert not (tmp_path / "home" / ".cache").exists()
    assert [p for p in tmp_path.rglob("*.tmp")] == []
    assert main(["ingest", "--input", str(raw), "--output", str(out), "--scheduler", "synchronous", "--quiet",
                 "tokenizer=whitespace"]) == 0
    assert not (tmp_path / "home" / ".cache").exists() and list((out / ".cache" / "ingest").glob("parsed-*"))
    # the cache stays when the folder is replaced, and verify does not take it for foreign files
    assert main(["ingest", "--input", str(raw), "--output", str(out), "--scheduler", "synchronous", "--quiet",
                 "tokenizer=whitespace", "max_chars=1000"]) == 0
    assert list((out / ".cache" / "ingest").glob("parsed-*"))


# 11. manifests: weights finite, summing as planned, matching planned tokens; verify sees unlisted files


def test_manifest_validate_refuses_nan_and_swapped_weights_and_verify_sees_unlisted_files(tmp_path, capsys):
    out = tmp_path / "run"
    assert _run(out, inputs=[str(SAMPLE / "reasoning"), str(SAMPLE / "math_science")]) == 0
    capsys.readouterr()
    assert main(["verify", str(out)]) == 0
    path = out / "80_mixture" / "manifests" / "midtrain_reasoning_32k.json"
    if len(json.loads(path.read_text())["groups"]) < 2:
        path = out / "80_mixture" / "manifests" / "pretrain_phase2.json"
    original = path.read_text()
    manifest = json.loads(original)
    groups = manifest["groups"]
    assert len(groups) >= 2 and groups[0]["weight"] != groups[1]["weight"]
    groups[0]["weight"], groups[1]["weight"] = groups[1]["weight"], groups[0]["weight"]
    path.write_text(json.dumps(manifest))
    assert main(["manifest", "validate", str(path), "--no-files"]) == 1
    assert "is not its planned tokens' share" in capsys.readouterr().out
    groups[1]["weight"] = float("nan")
    path.write_text(json.dumps(manifest))  # Python writes NaN; JSON has none
    assert main(["manifest", "validate", str(path), "--no-files"]) == 1
    assert "weight is nan" in capsys.readouterr().out
    path.write_text(original)
    (out / "80_mixture" / "manifests" / "notes.txt").write_text("mine")
    assert main(["verify", str(out)]) == 1
    assert "manifests/notes.txt is not listed in its _SUCCESS" in capsys.readouterr().out


# only configuration errors are exit 2; a bug shows its traceback; workers lost by type


def _run_with_exact_dedup_raising(exc: Exception, tmp_path: Path, monkeypatch: Any) -> int:
    """The recipe on the small corpus, with exact dedup's duplicate picking raising ``exc``."""
    import pipelines.stages.exact_dedup as stage_mod

    def planted(*a, **k):
        raise exc

    monkeypatch.setattr(stage_mod, "pick_duplicates", planted)
    raw = _corpus(tmp_path)
    return main(["run", RECIPE, "--input", str(raw), "--output", str(tmp_path / "run"), "--scheduler", "synchronous",
                 "--quiet", *FOUNDATION])


def test_a_bug_in_a_stage_prints_its_traceback_and_exits_70(tmp_path, capsys, caplog, monkeypatch):
    assert _run_with_exact_dedup_raising(KeyError("planted_column"), tmp_path, monkeypatch) == 70
    err = capsys.readouterr().err
    assert "Traceback" in err and "KeyError: 'planted_column'" in err
    assert "internal error (a bug in curate, exit code 70)" in caplog.text and "test_run_integrity.py:" in caplog.text


def test_an_exception_named_killedworker_is_not_a_lost_worker(tmp_path, capsys, monkeypatch):
    class KilledWorker(Exception):  # noqa: N818 - the name distributed's class has
        pass

    rc = _run_with_exact_dedup_raising(KilledWorker("not distributed's"), tmp_path, monkeypatch)
    assert rc == 70 and "not distributed's" in capsys.readouterr().err


def _hog(part, *args):  # runs on a worker: grows past its memory limit until the nanny kills it
    blocks = []
    for _ in range(400):
        blocks.append(bytearray(16 << 20))
        time.sleep(0.01)
    return part


@pytest.mark.slow
def test_workers_killed_for_memory_name_the_limit_they_had_once(tmp_path, caplog, monkeypatch):
    # distributed's config defaults first: a set() of a key under 'distributed' before they exist removes
    # the whole 'distributed' section when it ends (Security() then failed in a later test with KeyError)
    import dask
    import distributed  # noqa: F401

    import pipelines.stages.exact_dedup as stage_mod
    from tests.helpers import docs_frame, make_stage_dir

    inp = make_stage_dir(tmp_path / "in", docs_frame([{"text": f"doc {i}"} for i in range(8)]))
    monkeypatch.setattr(stage_mod.STAGE, "build", lambda docs, cfg, ctx: docs.map_partitions(_hog, meta=docs._meta),
                        raising=False)
    caplog.set_level(logging.ERROR)
    with dask.config.set({"distributed.scheduler.allowed-failures": 0}):
        rc = main(["exact-dedup", "--input", str(inp), "--output", str(tmp_path / "out"), "--workers", "1",
                   "--memory-limit", "700MB", "--quiet"])
    assert rc == 3
    lines = [r.getMessage() for r in caplog.records if "Dask gave up" in r.getMessage()]
    assert len(lines) == 1, lines
    assert "the workers had a memory limit of 0.65 GiB per worker" in lines[0]


def test_stats_check_of_a_run_stopped_before_its_first_stage_says_it_did_not_finish(tmp_path, caplog, monkeypatch):
    """Ctrl-C during ingest leaves no finished stage: --check is 1 (the run did not finish, as the
    README says), with why, and the record names the interrupt without repeating it."""
    import pipelines.stages.ingest as ingest_mod

    raw = _corpus(tmp_path)
    out = tmp_path / "run"

    def interrupted(*a, **k):
        raise KeyboardInterrupt

    monkeypatch.setattr(ingest_mod.IngestStage, "build", interrupted)
    assert main(["run", RECIPE, "--input", str(raw), "--output", str(out), "--scheduler", "synchronous", "--quiet", *FOUNDATION]) == 130
    assert json.loads((out / "run.progress.json").read_text())["error"] == "KeyboardInterrupt"
    caplog.clear()
    assert main(["stats", str(out), "--check"]) == 1
    assert "no finished stage folders" in caplog.text and "interrupted" in caplog.text
    assert main(["stats", str(out)]) == 4  # without --check: the folder has nothing to show


def test_a_stage_run_alone_into_its_run_folder_cites_the_run_as_the_recipe_does(finished_run, tmp_path, capsys):
    """``curate mixture --input RUN/75_forge_filter --output RUN/80_mixture``: the manifests cite the
    run's stages (they cited none, and verify failed for good), byte-identical to the recipe's."""
    run = tmp_path / "run"
    shutil.copytree(finished_run, run)
    shutil.rmtree(run / "80_mixture")
    assert main(["mixture", "--input", str(run / "75_forge_filter"), "--output", str(run / "80_mixture"), "--scheduler", "synchronous",
                 "--quiet", "--profile", "cpu"]) == 0
    for path in sorted((finished_run / "80_mixture" / "manifests").glob("*.json")):
        assert (run / "80_mixture" / "manifests" / path.name).read_bytes() == path.read_bytes()
    capsys.readouterr()
    assert main(["verify", str(run)]) == 0, capsys.readouterr().out


def test_code_web_on_a_folder_outside_its_run_says_it_lacks_ingest_html(finished_run, tmp_path, caplog):
    """Stages chained by hand outside the run folder: code_web cannot read ingest's HTML, and says so."""
    import json

    alone = tmp_path / "chain" / "code_quality"
    shutil.copytree(finished_run / "50_code_quality", alone)
    marker = json.loads((alone / "_SUCCESS").read_text())
    marker.pop("input", None)  # a folder moved away from the run: the chain back to its ingest is lost
    (alone / "_SUCCESS").write_text(json.dumps(marker))
    args = ["--scheduler", "synchronous", "--quiet", "--profile", "cpu"]
    assert main(["code-web", "--input", str(alone), "--output", str(tmp_path / "chain" / "code_web"), *args]) == 0
    assert "code_web: no ingest stage on its input's chain" in caplog.text
    caplog.clear()
    assert main(["code-web", "--input", str(finished_run / "50_code_quality"), "--output", str(tmp_path / "cw"), *args]) == 0
    assert "no ingest stage on its input's chain" not in caplog.text


def test_a_stop_while_run_json_is_written_is_recorded_as_a_stop(tmp_path, monkeypatch):
    """SIGTERM after the last stage, while run.json was written, left run.progress.json saying
    'running' (verify: 'killed, or its machine went down'); the same command then finishes it."""
    import pipelines.runner as runner_mod

    raw = _corpus(tmp_path)
    out = tmp_path / "run"
    real = runner_mod.io.write_json

    def stopped(path, *a, **k):
        if Path(path).name == "run.json":
            raise KeyboardInterrupt
        return real(path, *a, **k)

    monkeypatch.setattr(runner_mod.io, "write_json", stopped)
    args = ["run", RECIPE, "--input", str(raw), "--output", str(out), "--scheduler", "synchronous", "--quiet", *FOUNDATION]
    assert main(args) == 130
    record = json.loads((out / "run.progress.json").read_text())
    assert record["status"] == "interrupted" and record["error"] == "KeyboardInterrupt" and not (out / "run.json").exists()
    monkeypatch.setattr(runner_mod.io, "write_json", real)
    assert main(args) == 0 and (out / "run.json").exists() and not (out / "run.progress.json").exists()
    assert main(["verify", str(out)]) == 0


def test_an_interrupted_single_stage_says_a_folder_it_would_replace_is_kept(tmp_path, caplog, monkeypatch):
    """It said 'the stage under way was removed' where a finished folder it was to replace stays as it was."""
    import pipelines.runner as runner_mod
    from tests.helpers import docs_frame, make_stage_dir

    inp = make_stage_dir(tmp_path / "in", docs_frame([{"doc_id": "a", "text": "one text here"}, {"doc_id": "b", "text": "another text"}]))

    def interrupted(*a, **k):
        raise KeyboardInterrupt

    monkeypatch.setattr(runner_mod, "run_stage", interrupted)
    caplog.set_level(logging.ERROR)
    assert main(["exact-dedup", "--input", str(inp), "--output", str(tmp_path / "out"), "--scheduler", "synchronous", "--quiet"]) == 130
    assert "interrupted: what the stage had written was removed and a finished folder it would replace is kept as it was" in caplog.text
    assert "the stage under way" not in caplog.text


def test_a_rerun_removes_the_half_written_run_files_of_a_killed_process(tmp_path):
    """A SIGKILL while run.json or run.progress.json was being written leaves `.run.json.<pid>.tmp`
    (the writer's cleanup is a `finally`, which SIGKILL skips); the re-run, holding the lock, removed
    only stage leftovers, so they stayed for good."""
    raw = _corpus(tmp_path)
    out = tmp_path / "run"
    args = ["run", str(RECIPE), "--input", str(raw), "--output", str(out), "--scheduler", "synchronous", "--quiet", *FOUNDATION]
    assert main(args) == 0
    (out / ".run.progress.json.99999.tmp").write_text('{"x":')
    (out / ".run.json.99998.tmp").write_text("{}")
    (out / "notes.tmp").write_text("the user's")  # not curate's: left alone
    assert main(args) == 0
    assert sorted(p.name for p in out.iterdir() if p.name.endswith(".tmp")) == ["notes.tmp"]
