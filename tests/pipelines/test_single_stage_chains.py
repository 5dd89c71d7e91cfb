"""Iterating with single stages on a finished run of the sample (tests/pipelines/conftest.py): a chain
of stages that begins in another folder verifies, a stale mixture folder exports with a warning, and
a run folder or an input already past a stage is said as such."""

import json
import shutil

import pytest

from curation.mixture.manifest_check import validate_run
from pipelines.cli import main

ONE = ["--scheduler", "synchronous", "--quiet"]


@pytest.fixture(scope="module")
def chain(finished_run, tmp_path_factory):
    """``curate forge-filter --input RUN/70_edu_score --output C/75_forge_filter`` then the mixture
    into ``C``: a folder of stages run one at a time whose chain begins in the run."""
    c = tmp_path_factory.mktemp("chain") / "c"
    assert main(["forge-filter", "--input", str(finished_run / "70_edu_score"), "--output", str(c / "75_forge_filter"), *ONE]) == 0
    assert main(["mixture", "--input", str(c / "75_forge_filter"), "--output", str(c / "80_mixture"), *ONE]) == 0
    return c


def test_a_chain_of_single_stages_that_begins_in_another_folder_verifies(chain, capsys):
    """Its manifests cite the chain back to the run's ingest, which ends with the folder's own stages:
    verify and manifest validate said the upstream was not the folder's stages and exited 1."""
    manifest = chain / "80_mixture" / "manifests" / "pretrain_phase1.json"
    cited = [u["folder"] for u in json.loads(manifest.read_text())["upstream"]]
    assert cited[0] == "00_ingest" and cited[-1] == "75_forge_filter"
    capsys.readouterr()
    assert main(["verify", str(chain)]) == 0
    assert main(["verify", str(chain / "80_mixture")]) == 0
    assert main(["manifest", "validate", str(manifest)]) == 0
    assert "upstream cites" not in capsys.readouterr().out


def test_a_chain_is_accepted_only_where_it_meets_the_folder_its_first_stage_read(chain):
    manifest = chain / "80_mixture" / "manifests" / "pretrain_phase1.json"
    data = json.loads(manifest.read_text())
    assert validate_run(manifest, data) == []
    other = json.loads(manifest.read_text())
    other["upstream"][-2]["output_fingerprint"] = "0" * 64  # the cited edu_score is not the folder forge_filter read
    assert "upstream cites" in validate_run(manifest, other)[0]
    moved = json.loads(manifest.read_text())
    moved["upstream"] = moved["upstream"][:-1]  # the folder's own forge_filter left out
    assert "upstream cites" in validate_run(manifest, moved)[0]
    marker = json.loads((chain / "75_forge_filter" / "_SUCCESS").read_text())
    assert not marker["input"].startswith(str(chain))  # what the acceptance rests on: its input lies outside


def test_stats_says_a_folder_of_single_stages_is_one(chain, caplog):
    caplog.clear()
    assert main(["stats", str(chain)]) == 0
    assert "a folder of stages run one at a time" in caplog.text and "the run did not finish" not in caplog.text
    assert "has already been through" not in caplog.text


def test_exporting_a_mixture_folder_whose_earlier_stages_were_made_again_warns(finished_run, tmp_path, caplog):
    run = tmp_path / "run"
    shutil.copytree(finished_run, run, symlinks=True)
    caplog.clear()
    assert main(["export", "datasets", str(run / "80_mixture"), "--output", str(tmp_path / "current"), "--quiet"]) == 0
    assert "is not the current output" not in caplog.text  # the run's own mixture: nothing to say
    assert main(["forge-filter", "--input", str(run / "70_edu_score"), "--output", str(run / "75_forge_filter"),
                 "min_words=5", *ONE]) == 0
    assert main(["export", "datasets", str(run), "--output", str(tmp_path / "refused"), "--quiet"]) == 4
    caplog.clear()
    assert main(["export", "datasets", str(run / "80_mixture"), "--output", str(tmp_path / "stale"), "--quiet"]) == 0
    lines = [r.getMessage() for r in caplog.records if "is not the current output" in r.getMessage()]
    assert len(lines) == 2 and lines[0] == lines[-1]  # before the export and again under its lines
    assert f"`curate verify {run}` says which" in lines[0] and "re-run the same `curate run` command" in lines[0]
    assert (tmp_path / "stale" / "export.json").is_file()


def test_a_run_folder_as_input_names_the_stage_folder_to_give(finished_run, tmp_path, caplog):
    caplog.clear()
    assert main(["web-quality", "--input", str(finished_run), "--output", str(tmp_path / "wq"), *ONE]) == 4
    assert f"{finished_run} is a run folder" in caplog.text and f"--input {finished_run / '30_semdedup'}" in caplog.text
    assert "Raw files must go through ingest" not in caplog.text and not (tmp_path / "wq").exists()


def test_an_input_already_past_the_stage_is_warned(finished_run, tmp_path, caplog):
    caplog.clear()
    assert main(["edu-score", "--input", str(finished_run / "75_forge_filter"), "--output", str(tmp_path / "es"), *ONE]) == 0
    text = caplog.text
    assert "has already been through edu_score, forge_filter" in text
    assert f"give {(finished_run / '60_code_web').resolve()}" in text
