"""The worked notebook runs headless (nbclient) over a run without an error, and is committed without outputs."""

from __future__ import annotations

import os
from pathlib import Path

import nbformat
import pytest

from tests.curation.test_stats_fixture import shared_run

NOTEBOOK = Path(__file__).resolve().parents[1] / "notebooks" / "mixture_stats.ipynb"


def test_notebook_is_committed_without_outputs():
    nb = nbformat.read(NOTEBOOK, as_version=4)
    nbformat.validate(nb)
    for cell in nb.cells:
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None, "clear the notebook's outputs before committing"


def _execute(run_dir: Path, compare_dir: Path | None, cwd: Path) -> nbformat.NotebookNode:
    from nbclient import NotebookClient

    nb = nbformat.read(NOTEBOOK, as_version=4)
    env = {"CURATION_RUN_DIR": str(run_dir)}
    if compare_dir is not None:
        env["CURATION_COMPARE_RUN_DIR"] = str(compare_dir)
    old = {k: os.environ.get(k) for k in (*env, "CURATION_COMPARE_RUN_DIR")}
    os.environ.update(env)
    try:  # the kernel inherits this process's environment; any cell error raises CellExecutionError
        NotebookClient(nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(cwd)}}).execute()
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    return nb


def _text(nb: nbformat.NotebookNode) -> str:
    parts = []
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            parts.append(out.get("text", "") + str(out.get("data", {}).get("text/plain", "")))
    return "\n".join(parts)


def _images(nb: nbformat.NotebookNode) -> int:
    return sum("image/png" in out.get("data", {}) for cell in nb.cells for out in cell.get("outputs", []))


@pytest.mark.slow
def test_notebook_executes_over_a_full_run(tmp_path_factory):
    run = shared_run(tmp_path_factory)
    other = shared_run(tmp_path_factory, "stricter", config={"web_quality": {"low_max_bucket": 12}})
    nb = _execute(run, other, NOTEBOOK.parent)
    text = _text(nb)
    assert "stages ['ingest', 'exact_dedup', 'minhash_dedup', 'web_quality', 'code_quality', 'code_web', 'edu_score', 'mixture']" in text
    assert "low_max_bucket" in text and "kept instead: web-0" in text and "did not run" not in text
    assert _images(nb) >= 14


@pytest.mark.slow
def test_notebook_executes_over_a_run_with_only_the_foundation_stages(tmp_path_factory):
    run = shared_run(tmp_path_factory, "foundation", stages=())
    nb = _execute(run, None, tmp_path_factory.mktemp("elsewhere"))  # Jupyter started outside the repository
    text = _text(nb)
    assert "web_quality did not run" in text and "mixture did not run" in text and "edu_score did not run" in text
    assert _images(nb) >= 4


@pytest.mark.slow
def test_notebook_shows_code_webs_scores_on_the_sample_run(tmp_path):
    """code_web's recalled pages keep source web: the score view reads ("web", "code_web"), so on the
    sample run it shows code_web's table (not a note that it scored none, nor that it dropped any)."""
    import subprocess
    import sys

    repo = NOTEBOOK.parents[1]
    run = tmp_path / "sample"
    proc = subprocess.run([sys.executable, "-m", "pipelines.cli", "run", "pipelines/configs/glm45.yaml", "--input", "sample_data",
                           "--output", str(run), "--quiet"], cwd=repo, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-4000:]
    nb = _execute(run, None, NOTEBOOK.parent)
    cell = next(c for c in nb.cells if c.cell_type == "code" and "scored_none_note(run, stage)" in c.source)
    text = "\n".join(out.get("text", "") + str(out.get("data", {}).get("text/plain", "")) for out in cell.outputs)
    tables = [" ".join(str(out["data"]["text/plain"]).split()) for out in cell.outputs if "text/html" in out.get("data", {})]
    assert "scored none" not in text and "dropped before scoring" not in text
    assert len(tables) == 3  # code_quality's, code_web's and edu_score's documents and tokens per scorer
    words = tables[1].split()
    assert words[words.index("structural") + 1] == "True" and int(words[words.index("structural") + 2]) > 0, tables[1]
