"""A profile met a user's own recipe: ``--profile auto`` replaced the recipe's values with the
profile's without a word (a recipe's semdedup.eps 0.2 ran at 0.05)."""

import re

from pipelines.profile_choice import profile_settings
from pipelines.recipe import load_recipe, profile_overrides
from pipelines.recipe_schema import default_recipe_path

AUTO = "--profile auto: no CUDA device was found"


def _recipe(tmp_path, eps="0.2"):
    text = default_recipe_path().read_text()
    edited, n = re.subn(r"(?m)^(    eps: )[0-9.]+", rf"\g<1>{eps}", text)
    assert n == 1
    path = tmp_path / "mine.yaml"
    path.write_text(edited)
    return path


def test_auto_keeps_what_the_user_wrote_and_says_so(tmp_path):
    path = _recipe(tmp_path)
    chosen, notes = profile_settings("cpu", AUTO, path, None)
    recipe = load_recipe(path, chosen)
    assert recipe["stages"]["semdedup"]["eps"] == 0.2
    # the profile's semdedup settings are tuned together: the stage the user changed keeps all of the recipe's
    # (a kept model beside the profile's eps and Chinese settings pruned Chinese pages with the wrong model) ...
    assert recipe["stages"]["semdedup"]["model"] == "all-MiniLM-L6-v2"
    assert recipe["stages"]["edu_score"]["fallback_scorer"] == "fast"  # ... and the other stages follow the profile
    assert len(notes) == 1 and notes[0].startswith("profile cpu leaves your recipe's semdedup.eps: 0.2 as it is, and the rest "
                                                   "of its semdedup settings with it (the profile sets 0.05 in place of the shipped 0.12")


def test_a_named_profile_wins_and_says_over_what(tmp_path):
    path = _recipe(tmp_path)
    chosen, notes = profile_settings("cpu", "chosen with --profile", path, None)
    assert load_recipe(path, chosen)["stages"]["semdedup"]["eps"] == 0.05
    assert len(notes) == 1 and notes[0].startswith("--profile cpu sets semdedup.eps: 0.05 over your recipe's 0.2")


def test_the_shipped_recipe_and_an_unchanged_copy_take_the_whole_profile(tmp_path):
    assert profile_settings("cpu", AUTO, default_recipe_path(), None) == (profile_overrides("cpu"), [])
    copy = _recipe(tmp_path, eps="0.12")  # the shipped value: nothing of the user's to keep
    assert profile_settings("cpu", AUTO, copy, None) == (profile_overrides("cpu"), [])


def test_a_single_stage_keeps_its_keys_the_same_way(tmp_path):
    path = _recipe(tmp_path)
    chosen, notes = profile_settings("cpu", AUTO, path, "semdedup")
    assert "eps=0.05" not in chosen and "model=minilm-static-bi" not in chosen
    assert notes and "semdedup.eps: 0.2" in notes[0]
    assert load_recipe(path, chosen, stage="semdedup")["stages"]["semdedup"]["eps"] == 0.2


def test_the_command_line_warns_and_records_the_choice(tmp_path, capsys, caplog):
    import json

    from pipelines.cli import main

    path = _recipe(tmp_path)
    assert main(["run", str(path), "--input", "sample_data", "--output", str(tmp_path / "out"), "--dry-run", "--profile", "cpu"]) == 0
    plan = json.loads(capsys.readouterr().out)
    assert plan["profile"]["notes"][0].startswith("--profile cpu sets semdedup.eps: 0.05 over your recipe's 0.2")
    assert "over your recipe's 0.2" in caplog.text
