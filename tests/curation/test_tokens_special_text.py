"""A document that quotes the end-of-document token's text (``<|endoftext|>``: a reasoning trace, a
page about tokenizers) is counted and encoded as that text, never as the EOD id, so the export gives
it exactly one EOD; the special tokens the pipeline inserts (FIM sentinels, repository headers) stay
single ids; counts and export ids agree, on tiktoken's path and on HF ``tokenizers``' path."""

from __future__ import annotations

import unicodedata

import numpy as np
import pytest

import curation.tokens as tokens
from curation.export.sequences import EodInDocumentError, check_counts, with_eod

EOD = "<|endoftext|>"
FIM = ["<|fim_prefix|>", "<|fim_suffix|>", "<|fim_middle|>"]
REPO = ["<|repo_name|>", "<|file_sep|>"]

WITH_EOD = [
    EOD,
    f"The tokenizer appends {EOD} after every document.",
    f"{EOD}{EOD}  {EOD}\n\n{EOD}x",
    f"<think>\nQwen's EOD is `{EOD}` (id 151643).\n</think>\nAnswer: 151643",
    f"{FIM[0]}def f():\n    return '{EOD}'\n{FIM[1]}\nprint(f())\n{FIM[2]}    pass\n",
    f"{REPO[0]}acme/tok\n{REPO[1]}tok.py\nEOD = '{EOD}'\n{REPO[1]}README.md\nEnds with {EOD}.\n",
    f"naïve café {EOD}\u0301 東京 {EOD}中文 <|im_start|>user<|im_end|>",
]
WITHOUT_EOD = ["", "hello world", f"{FIM[0]}a{FIM[1]}b{FIM[2]}c", "<|endoftext|", "endoftext|>", "<|endof text|>"]


def _ids(name: str = "qwen") -> tuple[list[list[int]], list[int]]:
    texts = WITH_EOD + WITHOUT_EOD
    return [x.tolist() for x in tokens.encode(texts, name)], tokens.count_tokens(texts, name).tolist()


@pytest.fixture(params=["tiktoken", "tokenizers"])
def path(request, monkeypatch):
    """Each test on the fast (tiktoken) path and on HF ``tokenizers``' path (the fast counter declined)."""
    if request.param == "tiktoken":
        if tokens.load_fast_counter("qwen") is None:
            pytest.skip("tiktoken is not installed")
    else:
        monkeypatch.setattr(tokens, "load_fast_counter", lambda name: None)
    return request.param


def test_the_eod_text_in_a_document_is_its_text_not_the_eod_id(path):
    eod = tokens.token_id("qwen", EOD)
    hf = tokens.load_tokenizer("qwen")
    ids, counts = _ids()
    for text, x, n in zip(WITH_EOD + WITHOUT_EOD, ids, counts, strict=True):
        assert eod not in x, text
        assert n == len(x), text  # what ingest and the mixture counted is what the export encodes
        assert hf.decode(x, skip_special_tokens=False) == unicodedata.normalize("NFC", text), text
    assert ids[0] == hf.encode("<|endoftext", add_special_tokens=False).ids + hf.encode("|>", add_special_tokens=False).ids


def test_inserted_special_tokens_stay_single_ids(path):
    hf = tokens.load_tokenizer("qwen")
    ids, _ = _ids()
    by_text = dict(zip(WITH_EOD + WITHOUT_EOD, ids, strict=True))
    fim_doc, repo_doc = WITH_EOD[4], WITH_EOD[5]
    assert [i for i in by_text[fim_doc] if i >= 151643] == [hf.token_to_id(t) for t in FIM]
    assert [i for i in by_text[repo_doc] if i >= 151643] == [hf.token_to_id(t) for t in (REPO[0], REPO[1], REPO[1])]
    assert [i for i in by_text[WITH_EOD[3]] if i >= 151643] == [hf.token_to_id("<think>"), hf.token_to_id("</think>")]
    assert [i for i in by_text[WITH_EOD[6]] if i >= 151643] == [hf.token_to_id("<|im_start|>"), hf.token_to_id("<|im_end|>")]
    assert by_text[WITHOUT_EOD[2]] == [hf.token_to_id(FIM[0]), 64, hf.token_to_id(FIM[1]), 65, hf.token_to_id(FIM[2]), 66]


def test_tiktoken_and_tokenizers_give_the_same_ids(monkeypatch):
    """The two paths agree on texts that quote the EOD token: a run's counts do not depend on which
    one counted them (tokens.py's promise)."""
    if tokens.load_fast_counter("qwen") is None:
        pytest.skip("tiktoken is not installed")
    fast = _ids()
    monkeypatch.setattr(tokens, "load_fast_counter", lambda name: None)
    assert _ids() == fast


def test_texts_without_the_eod_text_take_the_path_they_always_took(monkeypatch):
    """No text without the EOD string pays for it: tiktoken's ``"all"`` and the one HF tokenizer."""
    fast = tokens.load_fast_counter("qwen")
    if fast is None:
        pytest.skip("tiktoken is not installed")
    assert tokens._fast_kwargs(fast[0], "plain <|fim_prefix|> text") is tokens._ALL_SPECIAL
    monkeypatch.setattr(tokens, "_specials_but_eod", lambda enc: pytest.fail("a text without the EOD string left the fast path"))
    monkeypatch.setattr(tokens, "_hf_without_eod", lambda name: pytest.fail("a text without the EOD string used the second tokenizer"))
    texts = WITHOUT_EOD * 3
    expected = [len(fast[0].encode(t, allowed_special="all")) for t in texts]
    assert tokens.count_tokens(texts, "qwen").tolist() == expected
    assert [len(x) for x in tokens.encode(texts, "qwen")] == expected
    monkeypatch.setattr(tokens, "load_fast_counter", lambda name: None)
    assert tokens.count_tokens(texts, "qwen").tolist() == expected


def test_batches_and_long_texts_count_what_is_encoded(path, monkeypatch):
    """ingest counts in batches and cuts long texts into pieces: the same ids, still no EOD id."""
    texts = [("word " * 40 + EOD + " ") * 5, "short", *WITH_EOD, "x" * 30 + EOD + "y" * 30]
    whole = tokens.count_tokens(texts, "qwen").tolist()
    monkeypatch.setattr(tokens, "BATCH_CHARS", 20)
    monkeypatch.setattr(tokens, "MAX_CHARS_PER_CALL", 64)
    ids = tokens.encode(texts, "qwen")
    assert tokens.count_tokens(texts, "qwen").tolist() == [len(x) for x in ids]
    assert all(tokens.token_id("qwen", EOD) not in x.tolist() for x in ids)
    monkeypatch.setattr(tokens, "MAX_CHARS_PER_CALL", 10**9)
    assert tokens.count_tokens(texts, "qwen").tolist() == whole


def test_export_ids_have_one_eod_per_document_at_its_end():
    eod = tokens.token_id("qwen", EOD)
    texts = WITH_EOD + WITHOUT_EOD
    ids = tokens.encode(texts, "qwen")
    check_counts(ids, tokens.count_tokens(texts, "qwen"), [str(i) for i in range(len(texts))], "shard")  # no TokenCountError
    for x in with_eod(ids, eod):
        assert x is not None and np.flatnonzero(x == eod).tolist() == [len(x) - 1]


def test_a_document_holding_the_eod_id_is_refused_not_cut():
    """Another --eod-token's text can be matched as that token: the export stops rather than cut the
    document into several."""
    im_end = tokens.token_id("qwen", "<|im_end|>")
    ids = tokens.encode(["ok", "a<|im_end|>b"], "qwen")
    with pytest.raises(EodInDocumentError, match=r"row 1 holds the end-of-document id 151645 at token 1 of 3"):
        with_eod(ids, im_end)
    assert [x.tolist() for x in with_eod([ids[0], None], im_end) if x is not None] == [[*ids[0].tolist(), im_end]]
