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
