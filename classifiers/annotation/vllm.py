"""``vllm``: vLLM's offline engine on GPU, batched, with prefix caching for the shared rubric prefix.

vLLM comes with the ``gpu`` extra (``pip install -e .[gpu]``) and is imported only when this
backend annotates. Every prompt is the chat-formatted rubric ending with the answer prefix;
one generated token with its top log-probabilities gives the expected score (two tokens on a
0–10 scale, where "10" is "1" then "0"). The rubric's system message and criteria come first
in every prompt, so vLLM's automatic prefix caching computes them once.

>>> ann = VLLMAnnotator(model="Qwen/Qwen2.5-7B-Instruct")                 # doctest: +SKIP
>>> ann.annotate(texts, get_rubric("edu")).scores                         # doctest: +SKIP
"""

from __future__ import annotations

import functools
import logging
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from classifiers.annotation.base import AnnotationResult, AnnotationStats, expected_score, logprobs_to_probs
from classifiers.annotation.identity import QUIET_DEFAULTS, model_fingerprint
from classifiers.rubrics import Rubric, truncate_with

log = logging.getLogger(__name__)


#: What to do where the offline engine cannot run.
NEEDS = ("the vllm annotator needs vLLM and a CUDA GPU: pip install -e '.[gpu]' "
         "(or use annotator: openai against a `vllm serve` endpoint, or annotator: local on CPU)")


def require_vllm() -> Any:
    """The ``vllm`` module, or a clear error saying how to get it."""
    try:
        import vllm
    except ImportError as exc:
        raise RuntimeError(NEEDS) from exc
    return vllm


def check_available() -> None:
    """ConfigError where the engine cannot start (no vLLM, or no CUDA device), found without importing
    vLLM: a stage's preflight calls it, so the run stops before the stages ahead of it run."""
    import importlib.util

    from curation.config import ConfigError

    if importlib.util.find_spec("vllm") is None:
        raise ConfigError(f"annotator = 'vllm': {NEEDS}")
    import torch

    if not torch.cuda.is_available():
        raise ConfigError(f"annotator = 'vllm', but this machine has no CUDA device (or torch is a CPU build): {NEEDS}")


@functools.lru_cache(maxsize=1)
def load_engine(model: str, tensor_parallel_size: int, max_model_len: int, gpu_memory_utilization: float, dtype: str) -> Any:
    """The engine, once per process (loading a model takes minutes)."""
    vllm = require_vllm()
    return vllm.LLM(
        model=model,
        tensor_parallel_size=tensor_parallel_size,
        max_model_len=max_model_len,
        gpu_memory_utilization=gpu_memory_utilization,
        dtype=dtype,
        enable_prefix_caching=True,
    )


def step_probs(step: Mapping[Any, Any]) -> dict[str, float]:
    """One generation step of vLLM logprobs (token id → ``Logprob``) → decoded token → probability."""
    top = {}
    for token_id, lp in step.items():
        token = getattr(lp, "decoded_token", None) or str(token_id)
        top[token] = max(top.get(token, float("-inf")), float(lp.logprob))
    return logprobs_to_probs(top)


class VLLMAnnotator:
    """Expected rubric score from vLLM's top log-probabilities after the answer prefix."""

    def __init__(
        self,
        model: str,
        tensor_parallel_size: int = 1,
        max_model_len: int = 4096,
        gpu_memory_utilization: float = 0.85,
        dtype: str = "auto",
        top_logprobs: int = 20,
        doc_tokens: int | None = None,
    ) -> None:
        if not model:
            raise ValueError("the vllm annotator needs a model (Hugging Face id or local folder)")
        self.model = model
        self.engine_args = (model, int(tensor_parallel_size), int(max_model_len), float(gpu_memory_utilization), str(dtype))
        self.top_logprobs = int(top_logprobs)
        self.doc_tokens = doc_tokens
        budget = f":doc{doc_tokens}" if doc_tokens else ""
        top = f":top{self.top_logprobs}" if self.top_logprobs != QUIET_DEFAULTS["top_logprobs"] else ""  # score tokens weighed
        local = f"@{model_fingerprint(model)}" if Path(model).expanduser().exists() else ""  # a folder: its content, not its name
        self.model_id = f"vllm:{model}{local}:logprobs{top}{budget}"

    def annotate(self, texts: list[str], rubric: Rubric) -> AnnotationResult:
        vllm = require_vllm()
        started = time.time()
        llm = load_engine(*self.engine_args)
        tok = llm.get_tokenizer()
        truncate = truncate_with(tok)
        prompts = [
            tok.apply_chat_template(rubric.messages(t, self.doc_tokens, truncate), tokenize=False, add_generation_prompt=True)
            + rubric.answer_prefix + " "
            for t in texts
        ]
        n_answer = 2 if rubric.scale[1] >= 10 else 1
        params = vllm.SamplingParams(max_tokens=n_answer, temperature=0.0, logprobs=self.top_logprobs)
        outputs = llm.generate(prompts, params, use_tqdm=False)
        scores = np.full(len(texts), np.nan)
        raw: list[str] = []
        failures: list[str | None] = []
        tokens_in = [len(o.prompt_token_ids or []) for o in outputs]
        for i, out in enumerate(outputs):
            gen = out.outputs[0]
            steps = [step_probs(s) for s in (gen.logprobs or [])]
            if not steps:
                raw.append(gen.text)
                failures.append("no_score_mass")
                continue
            p_zero = None
            if rubric.scale[1] >= 10 and len(steps) > 1 and gen.text.strip().startswith("1"):
                p_zero = sum(p for t, p in steps[1].items() if t.strip() == "0")
            score, mass = expected_score(steps[0], rubric.scale, p_zero)
            raw.append(f"{gen.text}\tmass:{mass:.4f}")
            failures.append(None if score is not None else "no_score_mass")
            if score is not None:
                scores[i] = score
        stats = AnnotationStats(
            documents=len(texts), requests=len(texts), tokens_in=sum(tokens_in),
            tokens_out=n_answer * len(texts), seconds=time.time() - started,
        )
        stats.count_failures(failures)
        return AnnotationResult(scores, raw, failures, stats, tokens_in=tokens_in, tokens_out=[n_answer] * len(texts))
