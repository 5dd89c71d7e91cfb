"""A single stage re-run into a run folder made with the user's own recipe read the shipped recipe
(its --config default) without a word: semdedup removed 137 documents where the run's recipe gave 225."""

import json

from pipelines.cli import main
from pipelines.output_guards import run_recipe_note
from pipelines.recipe_schema import default_recipe_path


def test_a_stage_into_a_run_of_another_recipe_says_so(finished_run, tmp_path, caplog):
    import shutil

    mine = tmp_path / "mine.yaml"
    mine.write_text(default_recipe_path().read_text())
    run = tmp_path / "run"
    run.mkdir()
    shutil.copytree(finished_run / "20_minhash_dedup", run / "20_minhash_dedup")
    record = json.loads((finished_run / "run.json").read_text())
    record["recipe"]["recipe_path"] = str(mine)
    (run / "run.json").write_text(json.dumps(record))
    note = run_recipe_note(run / "30_semdedup", None)
    assert note and f"was made with the recipe {mine}" in note and f"--config {mine}" in note
    assert run_recipe_note(run / "30_semdedup", str(mine)) is None  # the run's own recipe: nothing to say
    assert run_recipe_note(tmp_path / "alone" / "30_semdedup", None) is None  # not in a run folder
    assert main(["semdedup", "--input", str(run / "20_minhash_dedup"), "--output", str(run / "30_semdedup"), "--dry-run"]) == 0
    assert f"pass --config {mine} to re-run it with the run's" in caplog.text
