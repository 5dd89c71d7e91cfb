"""The CLI's choice between one process and an embedded LocalCluster (``cluster.min_input_mb``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from curation.config import ConfigError
from pipelines.cli import main as curate
from pipelines.scheduler_choice import check_min_input_mb, choose_scheduler, input_mb
from tests.helpers import only

MIB = 1 << 20
RECIPE = str(Path(__file__).resolve().parents[2] / "pipelines" / "configs" / "glm45.yaml")


def _file(path, size):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"x" * size)
    return path


def test_input_mb_counts_files_folders_and_globs(tmp_path):
    a = _file(tmp_path / "a.jsonl", MIB)
    _file(tmp_path / "dir" / "b.jsonl", MIB // 2)
    _file(tmp_path / "dir" / "deep" / "c.jsonl", MIB // 4)
    assert input_mb([a]) == 1.0
    assert input_mb([tmp_path / "dir"]) == 0.75
    assert input_mb([str(tmp_path / "dir" / "**" / "*.jsonl")]) == 0.75
    assert input_mb([a, tmp_path / "dir"]) == 1.75


def test_input_mb_is_unknown_for_what_is_not_a_local_path(tmp_path):
    _file(tmp_path / "a.jsonl", 10)
    assert input_mb([tmp_path / "a.jsonl", tmp_path / "missing.jsonl"]) is None
    assert input_mb([str(tmp_path / "*.parquet")]) is None  # a glob that matches nothing
    assert input_mb(["s3://bucket/crawl/*.warc.gz"]) is None


def test_small_inputs_run_in_one_process_large_or_unknown_ones_on_a_cluster(tmp_path):
    small = _file(tmp_path / "small.jsonl", MIB)
    assert choose_scheduler(None, None, 16, [small]) == (
        "synchronous", "one process", "inputs 1.0 MiB < cluster.min_input_mb 16; --workers N starts a cluster")
    scheduler, what, why = choose_scheduler(None, None, 0.5, [small])
    assert (scheduler, what) == (None, "LocalCluster") and "≥ cluster.min_input_mb 0.5" in why
    assert choose_scheduler(None, None, 16, ["hf://datasets/x"])[:2] == (None, "LocalCluster")
    assert choose_scheduler(None, None, 0, [small])[:2] == (None, "LocalCluster")  # 0: always a cluster


def test_an_option_that_asks_for_a_scheduler_wins_over_the_size(tmp_path):
    small = _file(tmp_path / "small.jsonl", 100)
    assert choose_scheduler(None, "--workers", 16, [small]) == (None, "LocalCluster", "chosen with --workers")
    assert choose_scheduler("tcp://10.0.0.1:8786", "--scheduler", 16, [small])[:2] == ("tcp://10.0.0.1:8786", "tcp://10.0.0.1:8786")
    assert choose_scheduler("synchronous", "--scheduler", 16, [small])[:2] == ("synchronous", "one process")


@pytest.mark.parametrize("bad", [-1, "16MB", True, float("nan")])
def test_min_input_mb_must_be_a_size(bad):
    with pytest.raises(ConfigError, match="cluster.min_input_mb"):
        check_min_input_mb(bad)
    assert check_min_input_mb(0) == 0.0 and check_min_input_mb(16) == 16.0


def _ingest(tmp_path, *options):
    data = tmp_path / "in.jsonl"
    data.write_text("".join(json.dumps({"id": f"d{i}", "text": f"document number {i} with some words"}) + "\n" for i in range(20)))
    out = tmp_path / "out"
    return curate(["ingest", "--input", str(data), "--output", str(out), "--source", "web", "ingest.tokenizer=whitespace", *options]), out


def test_a_small_stage_run_says_it_runs_in_one_process(tmp_path, capsys):
    rc, out = _ingest(tmp_path)
    assert rc == 0
    printed = capsys.readouterr().out.splitlines()
    assert printed[1] == "curate: one process (inputs 0.0 MiB < cluster.min_input_mb 16; --workers N starts a cluster)"
    stats = json.loads((out / "stats.json").read_text())
    assert stats["kept"]["documents"] == 20
    assert stats["cpu_seconds"] == pytest.approx(stats["driver_cpu_seconds"])  # no worker process spent any


@pytest.mark.slow
def test_workers_start_a_cluster_whatever_the_size(tmp_path, capsys):
    rc, out = _ingest(tmp_path, "--workers", "1")
    assert rc == 0
    assert "curate: LocalCluster (chosen with --workers)" in capsys.readouterr().out.splitlines()
    stats = json.loads((out / "stats.json").read_text())
    assert stats["kept"]["documents"] == 20 and stats["cpu_seconds"] > stats["driver_cpu_seconds"]


def test_a_bad_min_input_mb_is_a_config_error_before_anything_runs(tmp_path, caplog):
    rc, out = _ingest(tmp_path, "cluster.min_input_mb=-1")
    assert rc == 2 and not out.exists()
    assert "cluster.min_input_mb = -1: give a size in MiB ≥ 0" in caplog.text


def test_a_run_records_the_scheduler_it_took_in_run_json(tmp_path, capsys):
    data = tmp_path / "in.jsonl"
    data.write_text("".join(json.dumps({"id": f"d{i}", "text": f"document {i % 5} of the run"}) + "\n" for i in range(20)))
    out = tmp_path / "run"
    assert curate(["run", RECIPE, "--input", str(data), "--output", str(out), "--source", "web",
                   "ingest.tokenizer=whitespace", *only("exact_dedup")]) == 0
    why = "inputs 0.0 MiB < cluster.min_input_mb 16; --workers N starts a cluster"
    assert json.loads((out / "run.json").read_text())["recipe"]["scheduler"] == {"name": "one process", "why": why}
    assert f"curate: one process ({why})" in capsys.readouterr().out
    assert json.loads((out / "10_exact_dedup" / "stats.json").read_text())["dropped"]["documents"] == 15


def test_a_dry_run_says_which_scheduler_would_run(tmp_path, capsys):
    data = tmp_path / "in.jsonl"
    data.write_text(json.dumps({"id": "d0", "text": "one document"}) + "\n")
    assert curate(["run", RECIPE, "--input", str(data), "--output", str(tmp_path / "run"), "--dry-run"]) == 0
    plan = json.loads(capsys.readouterr().out)
    assert plan["scheduler"]["name"] == "one process" and "cluster.min_input_mb 16" in plan["scheduler"]["why"]
    assert plan["profile"]["name"] in ("cpu", "gpu") and plan["profile"]["why"].startswith("--profile auto")  # which settings, and why
    assert curate(["run", RECIPE, "--input", str(data), "--output", str(tmp_path / "run"), "--dry-run", "--workers", "2"]) == 0
    assert json.loads(capsys.readouterr().out)["scheduler"] == {"name": "LocalCluster", "why": "chosen with --workers"}
    assert not (tmp_path / "run").exists()
