"""A phase key that its builder or packing does not read is refused, naming the key, the phase and
what reads it (min_tokens: long_context; max_doc_tokens: repo_code; truncation: packing none), in
the recipe check before any compute; the shipped recipe passes it."""

from __future__ import annotations

from pathlib import Path

import pytest

from curation.config import ConfigError
from curation.mixture.phases import merged_phases
from pipelines.plan_checks import check_plan
from pipelines.recipe import load_recipe
from pipelines.stages import enabled_stages

RECIPE = str(Path(__file__).resolve().parents[2] / "pipelines" / "configs" / "glm45.yaml")


@pytest.mark.parametrize(
    ("phase", "data", "said"),
    [
        (
            "midtrain_reasoning_32k",
            {"max_doc_tokens": 8192},
            "max_doc_tokens = 8192 does nothing here: only builder repo_code reads it",
        ),
        (
            "midtrain_reasoning_32k",
            {"min_tokens": 1000},
            "min_tokens = 1000 does nothing here: only builder long_context reads it",
        ),
        ("midtrain_long_context_128k", {"max_doc_tokens": 32768}, "this phase has builder 'long_context'"),
        (
            "midtrain_reasoning_32k",
            {"truncation": "random"},
            "truncation = 'random' does nothing here: only packing none reads it",
        ),
        # a key the shipped phase carries, left behind by a change of builder or packing
        (
            "midtrain_long_context_128k",
            {"builder": "documents"},
            "mixture.phases.midtrain_long_context_128k.min_tokens=null",
        ),
        ("pretrain_phase1", {"packing": "best_fit"}, "mixture.phases.pretrain_phase1.truncation=null"),
    ],
)
def test_a_key_the_phase_does_not_read_is_refused(phase, data, said):
    with pytest.raises(ValueError, match="does nothing here") as err:
        merged_phases({phase: data})
    assert said in str(err.value) and f"mixture.phases.{phase}." in str(err.value)


def test_the_keys_where_they_apply_and_dropped_with_null_are_taken():
    specs = {
        s.name: s
        for s in merged_phases(
            {
                "midtrain_long_context_128k": {"builder": "documents", "min_tokens": None},
                "midtrain_repo_code_32k": {"max_doc_tokens": 16384},
                "pretrain_phase2": {"packing": "best_fit", "truncation": None},
            }
        )
    }
    assert specs["midtrain_long_context_128k"].builder == "documents"
    assert specs["midtrain_repo_code_32k"].max_doc_tokens == 16384
    assert specs["pretrain_phase2"].packing == "best_fit"


def test_the_recipe_check_refuses_it_before_any_stage_runs_and_the_shipped_recipe_passes():
    recipe = load_recipe(RECIPE, [])
    check_plan(recipe, enabled_stages(recipe), warn=False)
    bad = load_recipe(RECIPE, ["mixture.phases.midtrain_reasoning_32k.min_tokens=1000"])
    with pytest.raises(
        ConfigError, match=r"mixture\.phases\.midtrain_reasoning_32k\.min_tokens = 1000 does nothing here"
    ):
        check_plan(bad, enabled_stages(bad), warn=False)
