"""Reading a judge's answer: the score token of "N/5" and "N.5" answers, answers cut by max_tokens,
and the ids that key the annotation cache (the model's content, the server, max_tokens)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from classifiers.annotation import get_annotator
from classifiers.annotation.diagnose import unreadable_fix
from classifiers.annotation.identity import model_fingerprint
from classifiers.annotation.openai_answers import read_answer
from classifiers.rubrics import get_rubric

EDU = get_rubric("edu")
CODE = get_rubric("code_quality")


def chat(tokens: list[str], score_token: str | None = None, finish: str = "stop", p: float = 0.9) -> dict:
    """A chat completion whose ``score_token`` has p on itself and 1 - p on the next score up."""
    def top(t: str) -> list[dict]:
        if t != score_token:
            return [{"token": t, "logprob": 0.0}]
        return [{"token": t, "logprob": math.log(p)}, {"token": str(int(t) + 1), "logprob": math.log(1 - p)}]

    content = [{"token": t, "logprob": top(t)[0]["logprob"], "top_logprobs": top(t)} for t in tokens]
    return {"choices": [{"message": {"content": "".join(tokens)}, "finish_reason": finish, "logprobs": {"content": content}}]}


HEAD = ["The", " extract", " is", " ok", ".\n", "Educational", " score", ":", " "]


@pytest.mark.parametrize("score", [0, 2, 3, 4])
def test_a_score_written_over_the_scale_reads_the_numerator_not_the_denominator(score):
    """'3/5' with the digits as tokens (Qwen, GLM) was read from the '5' token's distribution: every answer ~5."""
    value, _raw, failure = read_answer(chat([*HEAD, str(score), "/", "5"], str(score)), EDU, "chat", prefill=False)
    assert failure is None and value == pytest.approx(0.9 * score + 0.1 * (score + 1))


def test_a_decimal_score_is_read_as_written():
    """'2.5' was read from the '5' token: 3.5 (and '4.5' as 5)."""
    for written, want in (("2.5", 2.5), ("4.5", 4.5)):
        whole, _dot, frac = written.partition(".")
        value, _raw, failure = read_answer(chat([*HEAD, whole, ".", frac], frac), EDU, "chat", prefill=False)
        assert (value, failure) == (want, None)


def test_a_denominator_that_is_not_the_scales_top_is_out_of_range():
    _value, _raw, failure = read_answer(chat([*HEAD, "4", "/", "10"], "4"), EDU, "chat", prefill=False)
    assert failure == "out_of_range"
    assert EDU.parse("Educational score: 4/10").failure == "out_of_range"
    assert EDU.parse("**Educational score: 4/5**").score == 4.0
    # completions: one generated token after the prompt's prefix, then a wrong denominator
    resp = {"choices": [{"text": "4/10", "logprobs": {"tokens": ["4", "/", "10"], "top_logprobs": [{"4": -0.1}, {}, {}]}}]}
    assert read_answer(resp, EDU, "completions", prefill=False)[2] == "out_of_range"


def test_ten_on_a_ten_point_scale_still_splits_one_and_zero():
    tokens = ["Code", " quality", " score", ":", " ", "1", "0"]
    content = [{"token": t, "top_logprobs": [{"token": t, "logprob": 0.0}]} for t in tokens]
    content[5]["top_logprobs"] = [{"token": "1", "logprob": math.log(0.8)}, {"token": "9", "logprob": math.log(0.2)}]
    content[6]["top_logprobs"] = [{"token": "0", "logprob": math.log(0.5)}, {"token": "<eos>", "logprob": math.log(0.5)}]
    resp = {"choices": [{"message": {"content": "".join(tokens)}, "logprobs": {"content": content}}]}
    value, _raw, failure = read_answer(resp, CODE, "chat", prefill=False)
    assert failure is None and value == pytest.approx(10 * 0.4 + 1 * 0.4 + 9 * 0.2)


def test_an_answer_cut_by_max_tokens_is_truncated_and_the_fix_names_the_key():
    resp = chat(["Let", " me", " weigh", " the", " criteria"], finish="length")
    assert read_answer(resp, EDU, "chat", prefill=False)[2] == "truncated"
    assert read_answer(chat(["Nice", "."], finish="stop"), EDU, "chat", prefill=False)[2] == "no_final_score"
    fix = unreadable_fix({"truncated": 24}, EDU, {"max_tokens": 256})
    assert "annotator_max_tokens = 256" in fix and "raise annotator_max_tokens" in fix


def test_the_http_judges_id_names_its_server_and_max_tokens():
    """Two servers serving the model name `judge` shared cached answers; so did two max_tokens."""
    ids = {get_annotator({"backend": "openai", "model": "judge", "base_url": url, "max_tokens": n}).model_id
           for url, n in (("http://a:8000/v1", 256), ("http://b:8000/v1/", 256), ("http://a:8000/v1", 1024))}
    assert len(ids) == 3 and all(i.startswith("openai:judge:chat") for i in ids)
    secret = get_annotator({"backend": "openai", "model": "judge", "base_url": "http://u:s3cret@a:8000/v1"}).model_id
    assert "s3cret" not in secret and secret.endswith("@http://a:8000/v1")


def test_two_local_models_in_folders_of_one_name_have_different_ids(tmp_path):
    """Both judges recorded the id `local:final:logprobs`: judge B was given judge A's cached answers."""
    pytest.importorskip("torch")
    for judge, weight in (("judgeA", b"\x00" * (3 << 20)), ("judgeB", b"\x00\x01" * (3 << 19))):
        folder = tmp_path / judge / "final"
        folder.mkdir(parents=True)
        (folder / "config.json").write_text("{}")
        (folder / "model.safetensors").write_bytes(weight)  # same size, different content
    a, b = (get_annotator({"backend": "local", "model": str(tmp_path / j / "final")}).model_id for j in ("judgeA", "judgeB"))
    assert a != b and a.startswith("local:final@") and a.endswith(":logprobs")
    again = get_annotator({"backend": "local", "model": str(tmp_path / "judgeA" / "final")}).model_id
    assert again == a  # content, not time: the same model gives the same id


def test_a_fingerprint_reads_content_not_names_or_times(tmp_path: Path):
    one, two = tmp_path / "one" / "model.gguf", tmp_path / "two" / "model.gguf"
    for f in (one, two):
        f.parent.mkdir()
        f.write_bytes(b"GGUF" + b"\x07" * (4 << 20))
    assert model_fingerprint(one) == model_fingerprint(two)
    two.write_bytes(b"GGUF" + b"\x07\x08" * (2 << 20))  # other weights (a fine-tune changes every tensor)
    assert model_fingerprint(one) != model_fingerprint(two)


def test_the_http_judges_id_names_how_the_document_is_cut_and_the_score_tokens_weighed():
    """top_logprobs (the score tokens the expected score weighs) and tokenizer (how a document is cut
    to its budget) change the answers, but a judge with another of either was given cached answers."""
    base = {"backend": "openai", "model": "judge", "base_url": "http://a:8000/v1"}
    default = get_annotator(base).model_id
    assert default == "openai:judge:chat:logprobs:t0:max256:chatml@http://a:8000/v1"  # the ids answers are cached under
    others = [get_annotator({**base, **o}).model_id for o in ({"top_logprobs": 5}, {"tokenizer": "chars"})]
    assert len({default, *others}) == 3
    assert get_annotator({**base, "logprobs": False, "top_logprobs": 5}).model_id == get_annotator({**base, "logprobs": False}).model_id
