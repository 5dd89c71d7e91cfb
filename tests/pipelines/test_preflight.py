"""A model path or device a stage's config names is checked before anything runs, in the run and
in --dry-run alike: a typo fails at once, naming the key, not after the stages before it."""

from __future__ import annotations

import pytest

from pipelines.cli import main as curate
from pipelines.recipe import default_recipe_path


def _cuda() -> bool:
    import torch

    return torch.cuda.is_available()


CASES = [
    ("code_web.classifier_model=/nonexist", "code_web.classifier_model = '/nonexist': /nonexist does not exist"),
    ("semdedup.model=bogus-model", "semdedup.model: embedding model 'bogus-model' is neither a shipped model"),
    ("edu_score.scorer=TMP", "holds no model.json (not a model folder); train one with `curate train-classifier edu`"),
    ("web_quality.scorer_options={linear: {model: /nonexist}}", "web_quality.scorer_options.linear: scorer 'linear': model /nonexist does not exist"),
    ("code_quality.scorers=[structural,learned]", "code_quality.scorers has 'learned' but"),
]


@pytest.mark.parametrize("dry", [False, True])
@pytest.mark.parametrize(("override", "words"), CASES)
def test_a_missing_model_fails_before_anything_runs(tmp_path, caplog, override, words, dry, monkeypatch):
    monkeypatch.setattr("pipelines.cluster.open_client", lambda *a, **k: pytest.fail("a scheduler opened"))
    raw = tmp_path / "raw.jsonl"
    raw.write_text('{"id": "a", "text": "some text", "source": "web"}\n')
    out = tmp_path / "run"
    rc = curate(["run", str(default_recipe_path()), "--input", str(raw), "--output", str(out), "--quiet", "--profile", "cpu",
                 override.replace("TMP", str(tmp_path)), *(["--dry-run"] if dry else [])])
    assert rc == 2 and words in caplog.text and not out.exists()


@pytest.mark.skipif(_cuda(), reason="this machine has a CUDA device")
@pytest.mark.parametrize(("command", "override"), [("semdedup", "device=cuda"), ("edu-score", "embed_device=cuda")])
def test_a_cuda_device_on_a_machine_without_one_is_a_config_error(tmp_path, caplog, command, override):
    rc = curate([command, "--input", str(tmp_path / "in"), "--output", str(tmp_path / "out"), "--quiet", override])
    assert rc == 2 and "has no CUDA device" in caplog.text and "internal error" not in caplog.text


def test_a_model_retrained_in_place_re_runs_the_stage(finished_run, tmp_path, caplog):
    import logging
    import os
    import shutil
    from pathlib import Path

    model = tmp_path / "edu_model"
    shutil.copytree(Path("classifiers/models/edu_fast"), model)
    args = ["edu-score", "--input", str(finished_run / "60_code_web"), "--output", str(tmp_path / "out"), "--scheduler", "synchronous",
            "--quiet", f"scorer={model}"]
    caplog.set_level(logging.INFO)
    assert curate(args) == 0
    caplog.clear()
    assert curate(args) == 0 and "up to date" in caplog.text  # nothing changed: resumed
    weights = model / "weights.npz"
    stamp = weights.stat().st_mtime_ns + 5_000_000_000
    os.utime(weights, ns=(stamp, stamp))  # what a retrain into the same folder leaves
    caplog.clear()
    assert curate(args) == 0 and "up to date" not in caplog.text
