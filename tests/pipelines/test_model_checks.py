"""A model folder a recipe names is whole and of the kind its setting needs, checked before anything
runs: a code-quality regression model given to code_web recalled every page; a cut weights file or
a garbled model card ended in an internal error after the earlier stages had run."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from pipelines.cli import main

REPO = Path(__file__).resolve().parents[2]
RECIPE = str(REPO / "pipelines" / "configs" / "glm45.yaml")
MODELS = REPO / "classifiers" / "models"


def _dry(tmp_path: Path, *overrides: str) -> int:
    return main(["run", RECIPE, "--input", str(REPO / "sample_data"), "--output", str(tmp_path / "run"), "--dry-run", *overrides])


@pytest.fixture()
def models(tmp_path: Path) -> dict[str, Path]:
    out = {}
    for name in ("code_content", "edu_fast"):  # a binary and a regression hashed n-gram model
        out[name] = tmp_path / name
        shutil.copytree(MODELS / name, out[name])
    return out


def test_a_model_of_another_kind_is_refused_naming_what_it_is(tmp_path, models, caplog):
    assert _dry(tmp_path, f"code_web.classifier_model={models['edu_fast']}") == 2
    assert "code_web.classifier_model" in caplog.text and "is a regression hashed n-gram model" in caplog.text
    assert "needs a binary hashed n-gram model" in caplog.text
    caplog.clear()
    assert _dry(tmp_path, "code_quality.scorers=[structural,learned]", f"code_quality.learned_model={models['code_content']}") == 2
    assert "code_quality.learned_model" in caplog.text and "is a binary hashed n-gram model" in caplog.text
    caplog.clear()
    assert _dry(tmp_path, "web_quality.scorers=[heuristics,emb]",
                f"web_quality.scorer_options={{emb: {{kind: embedding, model: {models['code_content']}}}}}") == 2
    assert "is not an embedding head" in caplog.text
    caplog.clear()
    head = MODELS / "edu_default" / "head"
    assert _dry(tmp_path, "web_quality.scorers=[heuristics,lin]", f"web_quality.scorer_options={{lin: {{kind: linear, model: {head}}}}}") == 2
    assert "is an embedding head" in caplog.text and "needs a" in caplog.text
    # the right kind passes
    assert _dry(tmp_path, f"code_web.classifier_model={models['code_content']}") == 0
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize("damage", ["cut weights", "empty weights", "garbled card"])
def test_a_damaged_model_folder_is_exit_4_naming_the_file(tmp_path, models, caplog, damage):
    model = models["code_content"]
    weights, card = model / "weights.npz", model / "model.json"
    if damage == "cut weights":
        weights.write_bytes(weights.read_bytes()[: weights.stat().st_size // 2])
    elif damage == "empty weights":
        weights.write_bytes(b"")
    else:
        card.write_text('{"kind": ')
    assert _dry(tmp_path, f"code_web.classifier_model={model}") == 4
    assert str(card if damage == "garbled card" else weights) in caplog.text and "Traceback" not in caplog.text
