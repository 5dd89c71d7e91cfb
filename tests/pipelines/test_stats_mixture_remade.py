"""`curate stats RUN --mixture` after `curate mixture` remade the run's mixture folder with another
setting: it says so first and names the command that reads that folder, not "the stage did not run"."""

import logging
from pathlib import Path

import pytest

from pipelines.cli import main as curate
from tests.helpers import only

SAMPLE = Path(__file__).resolve().parents[2] / "sample_data"


@pytest.mark.slow
def test_stats_of_a_run_whose_mixture_another_config_remade_points_to_the_folder(tmp_path, caplog):
    if not (SAMPLE / "web").is_dir():
        pytest.skip("sample_data/ has not been generated")
    run = tmp_path / "run"
    assert (
        curate(
            [
                "run",
                "pipelines/configs/glm45.yaml",
                "--input",
                str(SAMPLE),
                "--output",
                str(run),
                "--scheduler",
                "synchronous",
                "--quiet",
                *only("exact_dedup", "mixture"),
            ]
        )
        == 0
    )
    mix = next(run.glob("*_mixture"))
    dedup = next(run.glob("*_exact_dedup"))
    assert (
        curate(
            [
                "mixture",
                "--input",
                str(dedup),
                "--output",
                str(mix),
                "--scheduler",
                "synchronous",
                "--quiet",
                "scale=1e-6",
            ]
        )
        == 0
    )
    with caplog.at_level(logging.ERROR, logger="curate"):
        assert curate(["stats", str(run), "--mixture"]) == 4
    (said,) = [r.getMessage() for r in caplog.records if r.levelno == logging.ERROR]
    assert said.startswith(f"{run}: {mix.name} was made with another config than the run's recipe")
    assert f"curate stats {mix} --mixture" in said
    assert curate(["stats", str(mix), "--mixture"]) == 0  # the command it names reads the folder
