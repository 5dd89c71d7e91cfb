"""A recipe file holds what differs from the shipped recipe: the top-level keys it leaves out
(``seed``, ``cluster``'s entries) are the shipped ones, and a stage re-run because such a key
changed says which (in the log, and in ``curate report --compare``'s config changes)."""

from __future__ import annotations

import logging
from pathlib import Path

from curation.stats.compare import config_changes
from curation.stats.run import open_run
from pipelines.cli import main as curate
from pipelines.recipe import load_recipe
from pipelines.recipe_schema import base_recipe
from tests.helpers import docs_frame, make_stage_dir

TEXTS = [
    "The French Revolution began in 1789 and ended the absolute monarchy of Louis XVI.",
    "Photosynthesis converts light energy into chemical energy stored in glucose molecules.",
    "A binary search tree keeps keys ordered so that lookups take logarithmic time on average.",
    "Marathon training plans increase weekly mileage slowly to avoid injuries to tendons.",
]


def _file(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_a_file_without_seed_or_cluster_runs_with_the_shipped_ones(tmp_path: Path) -> None:
    shipped = base_recipe()
    mine = load_recipe(_file(tmp_path, "mine.yaml", "name: mine\nstages:\n  code_quality:\n    tier_high: 80\n"))
    assert mine["name"] == "mine"
    assert mine["seed"] == shipped["seed"] == 1234
    assert mine["cluster"] == shipped["cluster"]
    two = load_recipe(_file(tmp_path, "two.yaml", "name: two\nseed: 7\ncluster:\n  workers: 2\n"))
    assert two["seed"] == 7
    assert two["cluster"] == {**shipped["cluster"], "workers": 2}  # min_input_mb kept


def test_a_stage_rerun_for_the_seed_names_it(tmp_path: Path, caplog) -> None:
    rows = [{"doc_id": f"d{i}", "text": t * 3, "source": "web", "lang": "en"} for i, t in enumerate(TEXTS * 3)]
    inp = make_stage_dir(tmp_path / "in", docs_frame(rows))
    plain = _file(tmp_path, "plain.yaml", "name: mine\n")
    seven = _file(tmp_path, "seven.yaml", "name: mine\nseed: 7\n")
    args = ["semdedup", "--input", str(inp), "--profile", "cpu", "--quiet", "semdedup.model=minilm-static"]
    assert curate([*args, "--config", str(plain), "--output", str(tmp_path / "a" / "30_semdedup")]) == 0
    assert curate([*args, "--config", str(seven), "--output", str(tmp_path / "b" / "30_semdedup")]) == 0
    with caplog.at_level(logging.INFO):
        assert curate([*args, "--config", str(seven), "--output", str(tmp_path / "a" / "30_semdedup")]) == 0
    assert "semdedup: re-running: its config changed (seed 1234 → 7)" in caplog.text
    changes = config_changes(open_run(tmp_path / "a"), open_run(tmp_path / "b"))
    assert changes.empty  # a is now made with seed 7 too
    assert curate([*args, "--config", str(plain), "--output", str(tmp_path / "a" / "30_semdedup")]) == 0
    changes = config_changes(open_run(tmp_path / "a"), open_run(tmp_path / "b"))
    assert changes[["stage", "key", "a", "b"]].values.tolist() == [["semdedup", "seed", 1234, 7]]
