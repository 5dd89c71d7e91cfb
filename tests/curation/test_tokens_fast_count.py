"""``_count_fast`` (numpy id buffers, NFC only for non-ASCII) against the per-text ``encode`` it replaced."""

from __future__ import annotations

import pytest

from curation.tokens import MAX_CHARS_PER_CALL, _count_fast, count_tokens, encode, load_fast_counter


def _reference(fast, texts):
    """The ids :func:`encode` gives (every whitespace piece NFC-normalised, then ``enc.encode``), counted."""
    return [len(ids) for ids in encode(texts, "qwen")]


TEXTS = [
    "",
    " ",
    "hello world",
    "def f(x):\n    return x  # comment\n",
    "caf\u00e9 cafe\u0301 \u212b \u1e9b\u0323",  # composed, decomposed, singletons NFC changes
    "这是一个关于数据库索引的教程。",
    "emoji 😀👍🏽 and ZWJ 👩‍👩‍👧",
    "<|endoftext|> special <|im_start|>user<|im_end|> <think>x</think>",
    "lone \ud800 surrogate and \udfff",
    "\x00 nul and \t tabs \r\n",
    "a" * 5000,
    ("word " * 250_000) + "é" * 10,  # over MAX_CHARS_PER_CALL: counted in pieces
    "x" * (MAX_CHARS_PER_CALL + 7),  # one piece with no space to cut at
]


def test_counts_match_reference_encode():
    fast = load_fast_counter("qwen")
    if fast is None:
        pytest.skip("tiktoken is not installed")
    assert _count_fast(fast, TEXTS).tolist() == _reference(fast, TEXTS)
    assert count_tokens(TEXTS, "qwen").tolist() == _reference(fast, TEXTS)


def test_counts_match_reference_on_sample_data():
    import json
    from pathlib import Path

    fast = load_fast_counter("qwen")
    if fast is None:
        pytest.skip("tiktoken is not installed")
    texts = []
    for path in sorted((Path(__file__).parents[2] / "sample_data").rglob("*.jsonl"))[:6]:
        for line in path.read_text(encoding="utf-8").splitlines()[:200]:
            rec = json.loads(line)
            texts += [v for v in rec.values() if isinstance(v, str)]
    assert texts
    assert _count_fast(fast, texts).tolist() == _reference(fast, texts)
