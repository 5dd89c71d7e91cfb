"""The special tokens of a tokenizer file (what `curate export` checks --eod-token and --pad-token against)
are kept in the tokenizer cache: parsing Qwen's 11 MB tokenizer.json cost every export ~0.3 CPU-s, twice.
The list read back is the file's; a changed file is parsed again."""

import json
import os
import shutil

import curation.tokenizer_cache as cache
from curation.tokens import _tokenizer_file


def test_special_tokens_are_kept_and_a_changed_file_is_read_again(tmp_path, monkeypatch):
    monkeypatch.setenv("CURATION_TOKENIZER_CACHE", str(tmp_path / "cache"))
    path = tmp_path / "tokenizer.json"
    shutil.copyfile(_tokenizer_file("qwen"), path)
    first = cache.marked_special(path)
    assert first[:3] == ["<|endoftext|>", "<|im_start|>", "<|im_end|>"] and "<|fim_prefix|>" not in first
    assert [p.suffix for p in (tmp_path / "cache").iterdir()] == [".json"]  # kept
    assert cache.marked_special(path) == first
    spec = json.loads(path.read_text(encoding="utf-8"))
    for t in spec["added_tokens"]:
        t["special"] = t["content"] == "<|fim_prefix|>"
    path.write_text(json.dumps(spec), encoding="utf-8")
    os.utime(path, ns=(1, 1))
    assert cache.marked_special(path) == ["<|fim_prefix|>"]
