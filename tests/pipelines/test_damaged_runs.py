"""A run damaged after it was written (a file cut or edited, a record unreadable) is named in one
line with exit 4 by every command that reads it, never a traceback; each command's words fit the
case (a run that is running, one that stopped, a mixture run alone); `stats --mixture --json` is
JSON and a closed pipe ends a command quietly."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pipelines.cli import main as curate

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def run(finished_run, tmp_path):
    out = tmp_path / "run"
    shutil.copytree(finished_run, out)
    return out


@pytest.mark.parametrize("damage", ["stats", "manifest", "ledger"])
def test_a_damaged_file_is_named_by_stats_and_report(run, tmp_path, caplog, damage):
    if damage == "stats":
        bad = run / "20_minhash_dedup" / "stats.json"
        bad.write_text('{"bad')
    elif damage == "manifest":
        bad = run / "80_mixture" / "manifests" / "pretrain_phase1.json"
        bad.write_bytes(bad.read_bytes()[:100])
    else:
        bad = sorted((run / "10_exact_dedup" / "ledger").glob("part-*.parquet"))[0]
        bad.write_bytes(bad.read_bytes()[:50])
    commands = [["report", str(run), "--output", str(tmp_path / "r.html")]]
    if damage != "ledger":  # the tables read the stats and manifests, not the ledgers
        commands += [["stats", str(run), "--mixture"]] + ([["stats", str(run)]] if damage == "stats" else [])
    for command in commands:
        caplog.clear()
        assert curate(command) == 4, command
        assert f"{bad} cannot be read as" in caplog.text and "curate verify RUN" in caplog.text, command
        assert "internal error" not in caplog.text


def test_a_run_record_that_cannot_be_read_is_said_so(run, tmp_path, caplog, capsys):
    (run / "run.json").write_text("x{")
    assert curate(["verify", str(run)]) == 1
    assert f"{run / 'run.json'} cannot be read as a run record" in capsys.readouterr().out
    assert curate(["stats", str(run)]) == 0 and "cannot be read as a run record" in caplog.text
    assert curate(["export", "megatron", str(run), "--output", str(tmp_path / "e"), "--quiet"]) == 4
    assert not (tmp_path / "e").exists()


def test_an_export_reads_only_the_current_mixture_or_a_mixture_run_alone(run, tmp_path, caplog):
    stale = tmp_path / "stale"
    shutil.copytree(run, stale)
    (stale / "30_semdedup" / "_SUCCESS").write_text("{}")
    assert curate(["export", "megatron", str(stale), "--output", str(tmp_path / "e1"), "--quiet"]) == 4
    assert f"{stale / '80_mixture'} is not the run's current output" in caplog.text and not (tmp_path / "e1").exists()

    assert curate(["export", "megatron", str(run / "00_ingest"), "--output", str(tmp_path / "e2"), "--quiet"]) == 4
    assert "is the ingest stage's output; export reads a run folder or the mixture stage's" in caplog.text

    alone = tmp_path / "mixture"
    assert curate(["mixture", "--input", str(run / "75_forge_filter"), "--output", str(alone), "--scheduler", "synchronous",
                   "--quiet", "--profile", "cpu"]) == 0
    assert curate(["export", "datasets", str(alone), "--output", str(tmp_path / "e3"), "--phase", "midtrain_reasoning_32k",
                   "--quiet"]) == 0
    export = json.loads((tmp_path / "e3" / "export.json").read_text())
    assert list(export["phases"]) == ["midtrain_reasoning_32k"]


def test_a_shard_changed_at_its_size_says_how_to_rewrite_it(run, tmp_path, caplog):
    shard = next((run / "80_mixture" / "shards").rglob("part-*.parquet"))
    data = bytearray(shard.read_bytes())
    data[len(data) // 2] ^= 0xFF
    shard.write_bytes(bytes(data))
    assert curate(["export", "datasets", str(run), "--output", str(tmp_path / "e"), "--quiet"]) == 4
    assert f"delete {run / '80_mixture'} and re-run the same `curate run` command" in caplog.text


def test_stats_mixture_json_is_the_table_as_data(run, capsys, caplog):
    assert curate(["stats", str(run), "--mixture", "--json"]) == 0
    phases = json.loads(capsys.readouterr().out)["phases"]
    manifest = json.loads((run / "80_mixture" / "manifests" / "pretrain_phase2.json").read_text())
    assert phases["pretrain_phase2"]["budget"] == manifest["budget"]
    groups = {g["group"]: g for g in phases["pretrain_phase2"]["groups"]}
    total = groups.pop("(phase)")
    assert {g["name"]: g["replay_tokens"] for g in manifest["groups"]} == {k: g["replay_tokens"] for k, g in groups.items()}
    assert total["replay_tokens"] == manifest["budget"]["replay_tokens"]
    shutil.rmtree(run / "80_mixture")
    assert curate(["stats", str(run), "--mixture", "--json"]) == 4 and "no mixture manifests" in caplog.text


def test_manifest_validate_checks_only_manifests(run, capsys):
    assert curate(["manifest", "validate", str(run / "00_ingest")]) == 1
    assert "no manifest found" in capsys.readouterr().out
    shutil.rmtree(run / "80_mixture")
    assert curate(["manifest", "validate", str(run)]) == 1
    out = capsys.readouterr().out
    assert "no manifest found" in out and "run.json" not in out


def test_a_closed_pipe_ends_the_command_without_a_traceback(run):
    cmd = f"{sys.executable} -m pipelines.cli stats {run} --json | head -c 1"
    done = subprocess.run(["bash", "-o", "pipefail", "-c", cmd], capture_output=True, text=True, cwd=REPO, timeout=120)
    assert done.stdout == "[" and "Traceback" not in done.stderr and "internal error" not in done.stderr
    assert done.returncode == 141


def test_a_missing_path_is_input_missing_for_every_reader(tmp_path, caplog):
    """exit 4 (input missing) for a path that does not exist, as stats and export say; 1 is for problems found."""
    gone = tmp_path / "no-such-run"
    for command in (["verify", str(gone)], ["manifest", "validate", str(gone)], ["stats", str(gone)]):
        caplog.clear()
        assert curate(command) == 4 and f"{gone}" in caplog.text
