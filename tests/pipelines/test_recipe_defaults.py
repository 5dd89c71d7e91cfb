"""One home for each default: a stage's config dataclass and the shipped recipe agree, so a stage
run from Python with no recipe does what `curate run pipelines/configs/glm45.yaml` does."""

from __future__ import annotations

import dataclasses

import pytest

from pipelines.recipe import load_recipe, stage_config
from pipelines.stages import STAGES, load_stage

RECIPE = load_recipe(None)


@pytest.mark.parametrize("name", list(STAGES))
def test_the_recipe_states_each_stage_default(name: str) -> None:
    cls = load_stage(name).config_cls
    section = RECIPE["stages"].get(name) or {}
    from_recipe = stage_config(RECIPE, name, cls)
    from_defaults = stage_config({"stages": {name: {}}}, name, cls)
    differ = [f.name for f in dataclasses.fields(cls) if getattr(from_recipe, f.name) != getattr(from_defaults, f.name)]
    assert not differ, (
        f"stages.{name}: the recipe and {cls.__name__}'s defaults disagree on {differ}: "
        "change both (the dataclass default is what a stage does without a recipe)")
    assert section, f"stages.{name} has no section in glm45.yaml (docs/adding-a-stage.md, step 5)"


def test_a_changed_default_is_seen() -> None:
    """The comparison sees a value that differs from the default (it can fail)."""
    cls = load_stage("semdedup").config_cls
    other = load_recipe(None, ["semdedup.prune_sources=[web]"])
    assert stage_config(other, "semdedup", cls) != stage_config({"stages": {"semdedup": {}}}, "semdedup", cls)
