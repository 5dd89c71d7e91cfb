from pathlib import Path

import pytest

SAMPLE = Path(__file__).resolve().parents[2] / "sample_data"


@pytest.fixture(scope="session")
def finished_run(tmp_path_factory):
    """The whole recipe on the sample at its CPU settings, in one process: a finished run that tests
    read and copy, never change."""
    from pipelines.cli import main as curate

    if not (SAMPLE / "web").is_dir():
        pytest.skip("sample_data/ has not been generated")
    out = tmp_path_factory.mktemp("finished") / "run"
    assert curate(["run", "pipelines/configs/glm45.yaml", "--input", str(SAMPLE), "--output", str(out), "--scheduler", "synchronous",
                   "--quiet", "--profile", "cpu"]) == 0
    return out
