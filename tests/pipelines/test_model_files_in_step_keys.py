"""A model folder of the user's retrained in place (same name, same card version) gives new cached
steps: code_web's scores and semdedup's embeddings were keyed by the model's name or card version,
and a resumed run reused the old model's scores (67 pages recalled where the new model recalls 350)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import numpy as np

from pipelines.stages.code_web import CodeWebConfig
from pipelines.stages.semdedup import STAGE as SEMDEDUP
from pipelines.stages.semdedup import SemDedupConfig

MODELS = Path(__file__).resolve().parents[2] / "classifiers" / "models"


def _retrain_in_place(folder: Path, name: str) -> None:
    """Change one array of ``name`` (an .npz or .npy) as a retraining would, keeping the card."""
    path = folder / name
    if path.suffix == ".npz":
        arrays = dict(np.load(path))
        key = sorted(arrays)[0]
        arrays[key] = arrays[key] + 1
        np.savez(path, **arrays)
    else:
        np.save(path, np.load(path) * 2)


def test_code_web_scores_are_keyed_by_the_classifier_files(tmp_path):
    model = tmp_path / "cc"
    shutil.copytree(MODELS / "code_content", model)
    before = CodeWebConfig(classifier_model=str(model)).score_params("qwen")
    _retrain_in_place(model, next(p.name for p in model.glob("*.npz")))
    after = CodeWebConfig(classifier_model=str(model)).score_params("qwen")
    assert before["classifier"] == after["classifier"]  # the card's version alone does not move
    assert before != after
    assert "classifier_files" not in CodeWebConfig().score_params("qwen")  # the shipped model: by its version, as before


class _Steps:
    """A stage context that records the keys of the steps asked for, and runs none."""

    def __init__(self) -> None:
        self.keys: list[dict[str, Any]] = []

    def step(self, name: str, params: dict[str, Any], fn: Any, **options: Any) -> None:
        self.keys.append(params)


def test_semdedup_embeddings_are_keyed_by_a_local_model_s_files(tmp_path):
    model = tmp_path / "static"
    shutil.copytree(MODELS / "minilm_static_bi", model)
    cfg = SemDedupConfig(model=str(model))
    ctx = _Steps()
    SEMDEDUP._embed(None, cfg, str(model), "embedding", ctx)
    _retrain_in_place(model, "embeddings.npy")
    SEMDEDUP._embed(None, cfg, str(model), "embedding", ctx)
    assert ctx.keys[0]["embedder"]["model"] == ctx.keys[1]["embedder"]["model"] and ctx.keys[0] != ctx.keys[1]
    SEMDEDUP._embed(None, SemDedupConfig(), "all-MiniLM-L6-v2", "embedding", ctx)  # a shipped model: by its name
    assert "files" not in ctx.keys[2]["embedder"]
