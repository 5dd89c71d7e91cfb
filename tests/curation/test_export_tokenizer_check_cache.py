"""The export's tokenizer check (megatron-core loading the copy, ~10 s) runs once per copy and loader:
its answer is kept under the tokenizer cache, a changed copy is loaded again, and megatron-core's
INFO lines on import stay out of the export's log."""

import json
import os
import subprocess
import sys

import pytest

from curation.export.tokenizer import copy_for_trainer, trainer_eod

pytestmark = pytest.mark.slow

CHECK = """
import json, logging, sys
from pathlib import Path
logging.basicConfig(level=logging.INFO)
from curation.export.tokenizer import trainer_eod
print(json.dumps(trainer_eod(Path(sys.argv[1]))))
"""


def test_the_check_is_loaded_once_per_copy_and_quietly(tmp_path, monkeypatch):
    pytest.importorskip("megatron.core")
    cache = tmp_path / "cache"
    monkeypatch.setenv("CURATION_TOKENIZER_CACHE", str(cache))
    copy = copy_for_trainer("qwen", tmp_path / "tok", "<|endoftext|>", "<|vision_pad|>")
    env = {**os.environ, "CURATION_TOKENIZER_CACHE": str(cache)}
    proc = subprocess.run([sys.executable, "-c", CHECK, str(copy)], capture_output=True, text=True, env=env, check=True)
    assert json.loads(proc.stdout) == [151643, 151654, "megatron-core's HuggingFaceTokenizer"]
    assert "megatron" not in proc.stderr, f"megatron-core logs into the export: {proc.stderr}"
    [entry] = (cache / "trainer-eod").glob("*.json")
    stored = json.loads(entry.read_text())
    entry.write_text(json.dumps({**stored, "eod": -1}))  # the kept answer is the one returned: nothing is loaded
    assert trainer_eod(copy)[0] == -1
    config = copy / "tokenizer_config.json"
    config.write_text(json.dumps({**json.loads(config.read_text()), "eos_token": "<|im_end|>"}))
    assert trainer_eod(copy)[0] == 151645  # another copy, another entry: loaded again
    assert len(list((cache / "trainer-eod").glob("*.json"))) == 2
