"""The worked notebook over a run whose mixture ships no document: every cell runs, and the
examples of ingest drops without text print no 'nan'."""

from __future__ import annotations

import json
import shutil

import pytest

from tests.curation.test_stats_fixture import shared_run
from tests.test_notebook import NOTEBOOK, _execute, _text


@pytest.mark.slow
def test_notebook_executes_over_a_run_whose_mixture_ships_nothing(tmp_path_factory, tmp_path):
    run = tmp_path / "zero"
    shutil.copytree(shared_run(tmp_path_factory), run)
    for path in (run / "80_mixture" / "manifests").glob("*.json"):
        manifest = json.loads(path.read_text())
        excluded = manifest["excluded_groups"] + [{**g, "reason": "zero_weight"} for g in manifest["groups"]]
        path.write_text(json.dumps({**manifest, "groups": [], "excluded_groups": excluded, "totals": {"documents": 0, "tokens": 0}}))
    text = _text(_execute(run, None, NOTEBOOK.parent))  # raises on any cell error
    assert "'nan'" not in text and "(no text)" in text  # the malformed line ingest dropped has no preview
    assert "interrupted" not in text
