"""train-classifier with an LLM judge nothing answers: edu_score's one-line diagnosis and exit 10, not
"only 0 annotated files" (exit 2) or "annotate more pages" (exit 4)."""

import json
import socket

import pytest

from pipelines.cli import main as curate
from tests.pipelines.test_code_train_commands import _input


def _closed_port() -> int:
    with socket.socket() as s:  # bound then closed: nothing listens there
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize(("kind", "cache"), [("code-quality", "--cache"), ("code-quality", "--cache-dir"), ("web-embedding", "--cache-dir")])
def test_an_unreachable_judge_is_exit_10_with_the_fix(tmp_path, caplog, kind, cache):
    base = f"http://127.0.0.1:{_closed_port()}/v1"
    judge = json.dumps({"backend": "openai", "base_url": base, "model": "judge", "max_retries": 0})
    rc = curate(["train-classifier", kind, "--input", str(_input(tmp_path)), "--output", str(tmp_path / "m"), "--annotator", judge,
                 cache, str(tmp_path / "ann"), "--sample", "12", "--sources", "code" if kind == "code-quality" else "web"])
    assert rc == 10
    assert f"train-classifier {kind}: 12 of 12 annotation requests to {base} failed in transport (connection_error=12" in caplog.text
    assert f"nothing answers at {base}: start the server" in caplog.text and "the --annotator's base_url" in caplog.text
    assert "annotate more pages" not in caplog.text and "annotated files" not in caplog.text
    assert not (tmp_path / "m").exists()
