"""Token counts do not depend on how the texts are batched (ingest counts in 1M-character batches)."""

import curation.tokens as tokens


def test_batched_counts_equal_one_call(monkeypatch):
    texts = ["hello world " * 30, "x", "", "naïve café — 東京 " * 5, "word " * 400, "tail"]
    whole = tokens.count_tokens(texts, "qwen").tolist()
    monkeypatch.setattr(tokens, "BATCH_CHARS", 50)
    assert tokens.count_tokens(texts, "qwen").tolist() == whole
    monkeypatch.setattr(tokens, "BATCH_CHARS", 1)
    assert tokens.count_tokens(texts, "qwen").tolist() == whole
    assert whole[1] == 1 and whole[2] == 0 and whole[4] >= 400


def test_texts_longer_than_one_call_are_counted_in_pieces(monkeypatch):
    monkeypatch.setattr(tokens, "MAX_CHARS_PER_CALL", 100)
    n = tokens.count_tokens(["alpha beta " * 50, "short"], "qwen").tolist()
    monkeypatch.setattr(tokens, "MAX_CHARS_PER_CALL", 10**9)
    assert tokens.count_tokens(["alpha beta " * 50, "short"], "qwen").tolist() == n


HARD_TEXTS = [
    "hello world",
    "",
    "naïve café — 東京 中文的文本，标点。",
    "e\u0301 composed by NFC, ﬁ ligature kept, Å",
    "x = 1\r\n\r\n\tif y:\n        return 'it''s'  \n\n\n",
    "special <|endoftext|> and <|fim_prefix|>a<|fim_middle|>b<|fim_suffix|> tokens <think>",
    "I'M HERE, you'LL see 12345678 3.14159 ...!!!",
    "a" * 5000 + " " * 300 + "\n" * 50,
    "😀 emoji 👩‍👩‍👧 and \u200b zero width",
]


def test_fast_counter_equals_the_hf_tokenizer_on_hard_text():
    """The tiktoken path must count exactly what HF tokenizers counts (the benchmark checks 107 MB of real text);
    the EOD token's text in a document is text on both (tests/curation/test_tokens_special_text.py)."""
    assert tokens.load_fast_counter("qwen") is not None
    hf = tokens._hf_without_eod("qwen")
    expected = [len(e.ids) for e in hf.encode_batch(HARD_TEXTS, add_special_tokens=False)]
    assert tokens.count_tokens(HARD_TEXTS, "qwen").tolist() == expected


def test_sample_data_counts_equal_the_hf_tokenizer():
    import gzip
    import json
    from pathlib import Path

    texts = []
    for f in sorted((Path(__file__).resolve().parents[2] / "sample_data").rglob("*.jsonl*")):
        data = gzip.decompress(f.read_bytes()) if f.name.endswith(".gz") else f.read_bytes()
        for line in data.decode("utf-8", "replace").splitlines():
            try:
                t = json.loads(line).get("text")
            except (ValueError, AttributeError):
                continue
            if isinstance(t, str):
                texts.append(t)
    assert len(texts) > 100
    hf = tokens.load_tokenizer("qwen")
    expected = [len(e.ids) for e in hf.encode_batch(texts, add_special_tokens=False)]
    assert tokens.count_tokens(texts, "qwen").tolist() == expected


def test_a_tokenizer_json_without_a_byte_level_split_uses_hf(tmp_path):
    import json

    spec = json.loads(tokens.qwen_tokenizer_path().read_text(encoding="utf-8"))
    spec["pre_tokenizer"] = {"type": "Whitespace"}
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(spec), encoding="utf-8")
    assert tokens.load_fast_counter(str(path)) is None
    n = tokens.count_tokens(["two words"], str(path)).tolist()
    assert n == [len(tokens.load_tokenizer(str(path)).encode("two words", add_special_tokens=False).ids)]


def test_a_vocabulary_outside_the_byte_alphabet_uses_hf(tmp_path):
    """A token with a character the byte-level alphabet lacks (here a space, which byte-level
    vocabularies write as 'Ġ') is not a byte-level vocabulary: the fast counter declines it."""
    import json

    spec = json.loads(tokens.qwen_tokenizer_path().read_text(encoding="utf-8"))
    vocab = spec["model"]["vocab"]
    token = next(t for t in vocab if t.startswith("Ġ") and len(t) > 2)
    vocab[" " + token[1:]] = vocab.pop(token)
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(spec), encoding="utf-8")
    assert tokens.load_fast_counter(str(path)) is None
