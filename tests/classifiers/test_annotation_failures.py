"""What a judge that fails leaves behind: a failure reason (never a crash) with the server's own
answer, a one-line likely fix, and settings or model files refused before anything runs.
Against the loopback OpenAI-compatible server of ``test_annotation_openai``."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

from classifiers.annotation.openai import OpenAIAnnotator
from classifiers.annotation.settings import AnnotatorSettings
from classifiers.rubrics import get_rubric
from curation.config import ConfigError
from curation.errors import DamagedFileError
from tests.classifiers.test_annotation_openai import FakeLLMServer

EDU = get_rubric("edu")


def judge(url: str, **kw: object) -> OpenAIAnnotator:
    return OpenAIAnnotator(**{"model": "fake-judge", "base_url": url, "tokenizer": "chars", "backoff_s": 0.01,
                              "max_retries": 1, "timeout_s": 5.0} | kw)


def test_http_200_bodies_that_are_no_completion_are_bad_responses_not_crashes():
    """A non-UTF-8 body, a JSON list and a choice that is a string each crashed the stage (exit 70)."""
    with FakeLLMServer() as srv:
        res = judge(srv.url).annotate(["energy [[nonutf8]]", "energy [[jsonlist]]", "energy [[choicestr]]", "energy"], EDU)
    assert res.failures == ["bad_response", "bad_response", "bad_response", None]
    assert np.isnan(res.scores[:3]).all() and res.scores[3] == pytest.approx(1.1)
    assert "UnicodeDecodeError" in res.raw[0] and "not a JSON object: []" in res.raw[1] and "choices" in res.raw[2]


def test_a_failed_request_keeps_what_the_server_answered():
    with FakeLLMServer(model="served-judge") as srv:
        res = judge(srv.url, model="gpt-4o").annotate(["energy"], EDU)
    assert res.failures == ["http_404"] and res.raw == ["HTTP 404: The model `gpt-4o` does not exist."]


def test_likely_fix_lists_the_served_models_or_asks_for_v1():
    from classifiers.annotation import diagnose

    with FakeLLMServer(model="served-judge") as srv:
        assert diagnose.served_models(srv.url) == ["served-judge"]
        wrong_model = diagnose.likely_fix({"http_404": 3}, {}, {"base_url": srv.url, "model": "gpt-4o"}, answered=0)
        assert wrong_model == "the server serves ['served-judge'], not 'gpt-4o': set annotator_model to one of them"
        root = srv.url.removesuffix("/v1")
        res = judge(root, model="served-judge").annotate(["energy"], EDU)  # no /v1: the server has no such route
        assert res.failures == ["http_404"]
        hint = diagnose.likely_fix({"http_404": 1}, {}, {"base_url": root, "model": "served-judge"}, answered=0)
        assert hint.endswith(f"add /v1 to the base URL (annotator_base_url={root}/v1)")
    assert diagnose.served_models("http://127.0.0.1:9/v1", timeout_s=1) is None  # nothing listening
    died = diagnose.likely_fix({"connection_error": 2}, {}, {"base_url": "http://h:1/v1"}, answered=5, stopped=True)
    assert died.startswith("the server stopped answering after 5 answer(s)")


@pytest.mark.parametrize("value", [0, -1])
def test_a_timeout_must_be_above_zero(value):
    """0 made every request time out; -1 crashed inside urllib3."""
    with pytest.raises(ConfigError, match="annotator_timeout_s"):
        AnnotatorSettings(timeout_s=value).validate()
    with pytest.raises(ValueError, match="timeout_s"):
        OpenAIAnnotator(model="m", timeout_s=value)


def test_a_local_judge_model_that_is_not_gguf_is_named(tmp_path):
    from classifiers.annotation.local import LocalAnnotator, check_model

    fake = tmp_path / "judge.gguf"
    fake.write_bytes(b"not a model")
    with pytest.raises(DamagedFileError, match=f"{fake}: not a GGUF file"):
        check_model(fake)
    with pytest.raises(DamagedFileError, match="not a GGUF file"):
        LocalAnnotator(model=str(fake))
    with pytest.raises(DamagedFileError, match="config.json"):
        check_model(tmp_path)
    (tmp_path / "real.gguf").write_bytes(b"GGUF" + bytes(16))
    check_model(tmp_path / "real.gguf")  # the magic is all it checks up front


@pytest.mark.skipif(importlib.util.find_spec("vllm") is not None, reason="vLLM is installed here")
def test_vllm_without_vllm_is_a_config_error():
    from classifiers.annotation.vllm import check_available

    with pytest.raises(ConfigError, match=r"annotator = 'vllm'.*pip install -e '\.\[gpu\]'"):
        check_available()
