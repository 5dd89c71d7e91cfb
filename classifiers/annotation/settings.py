"""The settings of an LLM annotator, grouped: which model, where it is served, how hard to push it.

A stage holds them as one nested config (``edu_score.annotation``); the flat recipe keys
``annotator_model``, ``annotator_base_url``, … still work and land here (curation.config.nested).

>>> AnnotatorSettings(model="Qwen/Qwen3-8B", tensor_parallel_size=2).backend_config("vllm")
{'backend': 'vllm', 'model': 'Qwen/Qwen3-8B', 'tensor_parallel_size': 2, 'max_model_len': 4096, 'gpu_memory_utilization': 0.85, 'top_logprobs': 20}
>>> AnnotatorSettings(batch_size=4, threads=2).backend_config("local")
{'backend': 'local', 'batch_size': 4, 'threads': 2}
"""

from __future__ import annotations

import dataclasses
from typing import Any

from curation.config import Config, ConfigError, check_choice, check_range


@dataclasses.dataclass(frozen=True)
class AnnotatorSettings(Config):
    model: str = ""  #: served model name (openai, vllm) or a model folder / GGUF (local)
    base_url: str = "http://127.0.0.1:8000/v1"  #: OpenAI-compatible server (openai)
    endpoint: str = "chat"  #: chat | completions
    api_key_env: str = "OPENAI_API_KEY"  #: the environment variable holding the key
    concurrency: int = 8  #: requests in flight
    timeout_s: float = 120.0
    max_retries: int = 4
    backoff_s: float = 1.0  #: openai: first retry's back-off, doubling each retry (with jitter)
    backoff_max_s: float = 30.0  #: openai: the longest back-off of its own
    retry_after_max_s: float = 600.0  #: openai: a server's Retry-After (seconds or an HTTP date) is waited up to this
    rate_limit_rps: float = 0.0  #: 0 = unlimited
    batch_size: int = 8  #: documents per forward pass (local)
    threads: int = 0  #: torch threads (local; 0 = torch's default)
    doc_tokens: int = 0  #: tokens of a document shown to the judge (0 = the rubric's default)
    # vllm only: the offline engine (docs/annotation.md, "vllm options")
    tensor_parallel_size: int = 1
    max_model_len: int = 4096
    gpu_memory_utilization: float = 0.85
    # openai only: how the judge is asked (docs/annotation.md, "openai options"); all in the cache key but parse_retries
    max_tokens: int = 256  #: chat: tokens the answer may take (a reasoning judge needs 1024 or more)
    temperature: float = 0.0
    logprobs: bool = True  #: score from the score token's distribution when the server returns it
    top_logprobs: int = 20
    prefill: bool = False  #: chat: write the answer prefix for the model, one token (vLLM's continue_final_message)
    prompt_format: str = "chatml"  #: completions: chatml | plain | hf:<tokenizer folder>
    tokenizer: str = "qwen"  #: truncation to doc_tokens: qwen | chars | a tokenizer.json
    parse_retries: int = 1  #: an unreadable answer is asked again this many times
    extra_body: dict[str, Any] = dataclasses.field(default_factory=dict)  #: merged into every request (guided_choice)

    def validate(self) -> None:
        check_choice(self, "endpoint", ("chat", "completions"))
        for key in ("doc_tokens", "threads", "max_retries", "top_logprobs", "parse_retries"):
            check_range(self, key, 0, None)
        for key in ("concurrency", "batch_size", "max_tokens"):
            check_range(self, key, 1, None)
        for key in ("rate_limit_rps", "backoff_s", "backoff_max_s", "retry_after_max_s"):
            check_range(self, key, 0, None)
        check_range(self, "tensor_parallel_size", 1, None)
        check_range(self, "max_model_len", 1, None)
        check_range(self, "gpu_memory_utilization", 0.01, 1.0)
        check_range(self, "temperature", 0, None)
        if self.prompt_format not in ("chatml", "plain") and not self.prompt_format.startswith("hf:"):
            raise ConfigError(f"annotator_prompt_format = {self.prompt_format!r}; choose chatml, plain or hf:<tokenizer folder>")
        check_base_url(self.base_url)
        if not self.timeout_s > 0:  # 0 failed every request as a timeout; urllib refuses a negative one mid-run
            raise ConfigError(f"annotator_timeout_s = {self.timeout_s!r}: a request needs a timeout above 0 seconds; "
                              "set annotator_timeout_s=<seconds> (default 120)")

    def backend_config(self, backend: str) -> dict[str, Any]:
        """The ``classifiers.annotation.get_annotator`` mapping of ``backend`` (without the cache)."""
        budget = {"doc_tokens": self.doc_tokens} if self.doc_tokens else {}
        if backend == "local":
            threads = {"threads": self.threads} if self.threads else {}
            model = {"model": self.model} if self.model else {}
            return {"backend": "local", "batch_size": self.batch_size, **model, **threads, **budget}
        if backend == "vllm":
            return {"backend": "vllm", "model": self.model, **{k: getattr(self, k) for k in VLLM_ONLY}, **budget}
        return {
            "backend": "openai", "model": self.model, "base_url": self.base_url,
            "endpoint": self.endpoint, "api_key_env": self.api_key_env,
            "concurrency": self.concurrency, "timeout_s": self.timeout_s,
            "max_retries": self.max_retries, "rate_limit_rps": self.rate_limit_rps, **budget,
            **{k: getattr(self, k) for k in OPENAI_ONLY},
        }


def check_base_url(url: str) -> None:
    """ConfigError unless ``url`` is an http(s) URL with a host: ``127.0.0.1:8000/v1`` (what
    ``vllm serve`` prints, without its scheme) was retried as a connection error and blamed the server.

    >>> check_base_url("127.0.0.1:8000/v1")
    Traceback (most recent call last):
    ...
    curation.errors.ConfigError: annotator_base_url = '127.0.0.1:8000/v1' has no http:// or https:// scheme; set annotator_base_url=http://127.0.0.1:8000/v1 (the server's /v1 root)
    """
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(url)
        host = parts.hostname
        parts.port  # noqa: B018 - a port that is no number raises here
    except ValueError as exc:
        raise ConfigError(f"annotator_base_url = {url!r} is no URL ({exc}); set annotator_base_url=http://HOST:PORT/v1") from None
    if parts.scheme not in ("http", "https"):
        bare = url.split("://", 1)[-1].lstrip("/")
        bare += "/v1" if "/" not in bare else ""  # `vllm serve` prints its address, the OpenAI API is under /v1
        what = f"has the scheme {parts.scheme}://" if "://" in url else "has no http:// or https:// scheme"
        raise ConfigError(f"annotator_base_url = {url!r} {what}; set annotator_base_url=http://{bare} (the server's /v1 root)")
    if not host:
        raise ConfigError(f"annotator_base_url = {url!r} names no host; set annotator_base_url=http://HOST:PORT/v1")


#: Settings only the ``openai`` backend takes (passed through as its keyword arguments).
OPENAI_ONLY = ("max_tokens", "temperature", "logprobs", "top_logprobs", "prefill", "prompt_format", "tokenizer",
               "parse_retries", "extra_body", "backoff_s", "backoff_max_s", "retry_after_max_s")
#: Settings the ``vllm`` backend takes (its engine, and the score token's top log-probabilities).
VLLM_ONLY = ("tensor_parallel_size", "max_model_len", "gpu_memory_utilization", "top_logprobs")
