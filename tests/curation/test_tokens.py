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
