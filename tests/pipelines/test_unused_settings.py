"""A setting the user changed that nothing in the plan reads is said before anything runs, one
warning each stage (pipelines/plan_checks.py, the stages' ``config_notes``); the shipped recipe
under either profile says nothing."""

from __future__ import annotations

import pytest

from pipelines.cli import main as curate
from pipelines.recipe_profiles import profile_overrides
from tests.pipelines.test_plan_checks import RECIPE, _checked

CPU = profile_overrides("cpu")
EDU_JUDGE_ONLY = [
    "distil=hashed",
    "holdout_fraction=0.3",
    "min_annotations=4",
    "on_annotation_failure=ledger",
    "sample_allocation=proportional",
    "sample_length_edges=[100,200]",
    "max_transport_failures=0.1",
]


@pytest.mark.parametrize("profile", [CPU, []], ids=["cpu", "gpu"])
def test_the_shipped_recipe_says_nothing_under_either_profile(profile):
    assert _checked(profile) == []


def test_verify_threshold_without_signature_verification_is_said():
    (note,) = _checked(["minhash_dedup.verify_threshold=0.7"])
    assert (
        note.startswith("minhash_dedup.verify_threshold = 0.7 does nothing under verify: exact")
        and "verify=signature" in note
    )
    (note,) = _checked(["minhash_dedup.verify=none", "minhash_dedup.verify_threshold=0.7"])
    assert "under verify: none" in note
    assert _checked(["minhash_dedup.verify=signature", "minhash_dedup.verify_threshold=0.7"]) == []


def test_static_weight_is_said_when_the_static_model_is_the_embedder():
    (note,) = _checked([*CPU, "semdedup.static_weight=0.2"])
    assert note.startswith(
        "semdedup.static_weight = 0.2 does nothing: static_model is the embedder itself (minilm-static-bi)"
    )
    assert _checked(["semdedup.static_weight=0.2"]) == []  # the transformer with the static model mixed in


def test_edu_embedder_settings_are_said_when_nothing_is_embedded():
    (note,) = _checked([*CPU, "edu_score.embed_device=cpu", "edu_score.embed_batch_size=8"])
    assert note.startswith(
        "edu_score.embed_device and edu_score.embed_batch_size do nothing: the scorer auto (fallback_scorer: fast)"
    )
    assert (
        _checked(["edu_score.embed_device=cpu", "edu_score.embed_batch_size=8"]) == []
    )  # gpu: the default scorer's vectors
    # a judge whose head is distilled from vectors embeds its sample
    assert (
        _checked([*CPU, "edu_score.annotator=openai", "edu_score.annotator_model=m", "edu_score.embed_batch_size=8"])
        == []
    )


def test_web_quality_embed_batch_size_without_an_embedding_scorer_is_said():
    (note,) = _checked(["web_quality.embed_batch_size=8"])
    assert note.startswith(
        "web_quality.embed_batch_size = 8 does nothing: no scorer of web_quality.scorers ['heuristics', 'linear']"
    )


def test_sample_and_distillation_settings_under_annotator_none_are_said():
    (note,) = _checked([f"edu_score.{o}" for o in EDU_JUDGE_ONLY])
    assert note.startswith(
        "edu_score.annotator is none, so no judge is asked and sample_length_edges, sample_allocation, "
        "on_annotation_failure, max_transport_failures, distil, holdout_fraction, min_annotations do nothing"
    )
    assert (
        _checked(
            ["edu_score.annotator=openai", "edu_score.annotator_model=m", *(f"edu_score.{o}" for o in EDU_JUDGE_ONLY)]
        )
        == []
    )


def test_fim_settings_with_fim_off_are_said():
    (note,) = _checked(["mixture.fim_rate=0", "mixture.fim_spm_rate=0.2"])
    assert note.startswith("mixture.fim_spm_rate does nothing: mixture.fim_rate is 0")
    assert _checked(["mixture.fim_rate=0"]) == [] and _checked(["mixture.fim_spm_rate=0.2"]) == []


def test_the_notes_are_said_by_a_dry_run(tmp_path, caplog):
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "pages.jsonl").write_text('{"id": "p0", "text": "One page.", "source": "web"}\n')
    args = [
        "run",
        RECIPE,
        "--input",
        str(tmp_path / "in"),
        "--output",
        str(tmp_path / "out"),
        "--dry-run",
        "--profile",
        "cpu",
    ]
    assert curate([*args, "minhash_dedup.verify_threshold=0.7", "mixture.fim_rate=0", "mixture.fim_spm_rate=0.2"]) == 0
    said = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert any(m.startswith("minhash_dedup.verify_threshold = 0.7") for m in said), said
    assert any(m.startswith("mixture.fim_spm_rate does nothing") for m in said), said
