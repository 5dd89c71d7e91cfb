"""``openai``: any OpenAI-compatible server (``vllm serve`` on a cluster, a hosted API).

Two endpoints:

- ``chat`` (``/v1/chat/completions``): the model may reason briefly and must end with the
  rubric's answer line, which :meth:`Rubric.parse` reads (last line only). With ``logprobs``
  the score is the expected value over the score token's top log-probabilities. With
  ``prefill`` (vLLM's ``continue_final_message``) the answer prefix is written for the model
  and one token is generated: one forward pass per document.
- ``completions`` (``/v1/completions``): the prompt is rendered here (``prompt_format``:
  ``chatml``, ``plain`` or ``hf:<tokenizer folder>``) and ends with the answer prefix; one
  token with ``logprobs`` gives the expected score.

Requests run ``concurrency`` at a time, under a rate limit (requests/s), with a timeout and
retries with exponential back-off (at least ``Retry-After``, up to ``retry_after_max_s``) on
timeouts, connection errors, 429 and 5xx; the first of each reason is logged in full and the rest counted
(:mod:`~classifiers.annotation.retry_log`). An answer that cannot be parsed is asked again ``parse_retries`` times, then
reported as a failure — never as a 0. The API key is read from the environment variable named
by ``api_key_env`` at request time and never logged.

>>> ann = OpenAIAnnotator(model="Qwen/Qwen2.5-7B-Instruct", base_url="http://gpu-node:8000/v1")  # doctest: +SKIP
>>> ann.annotate(texts, get_rubric("edu")).scores                                   # doctest: +SKIP
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import functools
import http.client
import json
import logging
import math
import os
import socket
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from typing import Any

import numpy as np

from classifiers.annotation import openai_answers
from classifiers.annotation.base import AnnotationResult, AnnotationStats, Answer, AnswerHook
from classifiers.annotation.identity import openai_id
from classifiers.annotation.openai_answers import error_body, excerpt, read_answer, retry_after, usage_tokens
from classifiers.annotation.pacing import Breaker, RateLimiter, backoff_delay, breaker_threshold
from classifiers.annotation.retry_log import RetryLog
from classifiers.rubrics import Rubric, truncate_chars, truncate_with

log = logging.getLogger(__name__)

ENDPOINTS = ("chat", "completions")
PROMPT_FORMATS = ("chatml", "plain")
RETRY_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504})


class RequestFailed(Exception):
    """A request that failed for good; ``reason`` is the ledger/statistics reason, ``detail`` what
    the server answered (an error body) or the socket said, so a failure message can quote it."""

    def __init__(self, reason: str, attempts: int, detail: str = "") -> None:
        super().__init__(reason)
        self.reason, self.attempts, self.detail = reason, attempts, detail


@dataclasses.dataclass
class _Answer(Answer):
    """An answer as it is built, with the requests it took."""

    requests: int = 0
    retried: list[str] = dataclasses.field(default_factory=list)  #: the reason of each request sent again


class OpenAIAnnotator:
    """Annotate through an OpenAI-compatible HTTP server (see the module docstring)."""

    def __init__(
        self,
        model: str,
        base_url: str = "http://127.0.0.1:8000/v1",
        endpoint: str = "chat",
        api_key_env: str = "OPENAI_API_KEY",
        concurrency: int = 8,
        timeout_s: float = 60.0,
        max_retries: int = 4,
        backoff_s: float = 1.0,
        backoff_max_s: float = 30.0,
        retry_after_max_s: float = 600.0,
        rate_limit_rps: float = 0.0,
        parse_retries: int = 1,
        max_tokens: int = 256,
        temperature: float = 0.0,
        logprobs: bool = True,
        top_logprobs: int = 20,
        prefill: bool = False,
        prompt_format: str = "chatml",
        tokenizer: str = "qwen",
        doc_tokens: int | None = None,
        extra_body: dict[str, Any] | None = None,
    ) -> None:
        if endpoint not in ENDPOINTS:
            raise ValueError(f"endpoint must be one of {ENDPOINTS}, not {endpoint!r}")
        if prompt_format not in PROMPT_FORMATS and not prompt_format.startswith("hf:"):
            raise ValueError(f"prompt_format must be one of {PROMPT_FORMATS} or 'hf:<tokenizer folder>', not {prompt_format!r}")
        if not model:
            raise ValueError("the openai annotator needs a model name (the server's model id)")
        if not float(timeout_s) > 0:  # 0 fails every request at once; urllib refuses a negative one
            raise ValueError(f"timeout_s = {timeout_s!r}: a request needs a timeout above 0 seconds")
        self.model = model
        self.base_url = base_url.rstrip("/")
        self.endpoint = endpoint
        self.api_key_env = api_key_env
        self.concurrency = max(1, int(concurrency))
        self.timeout_s = float(timeout_s)
        self.max_retries = int(max_retries)
        self.backoff_s = float(backoff_s)
        self.backoff_max_s, self.retry_after_max_s = float(backoff_max_s), float(retry_after_max_s)
        self.parse_retries = int(parse_retries)
        self.max_tokens = int(max_tokens)
        self.temperature = float(temperature)
        self.logprobs = bool(logprobs)
        self.top_logprobs = int(top_logprobs)
        self.prefill = bool(prefill)
        self.prompt_format = prompt_format
        self.tokenizer = tokenizer
        self.doc_tokens = doc_tokens
        self.extra_body = dict(extra_body or {})
        self.limiter = RateLimiter(float(rate_limit_rps))
        self.breaker = Breaker(breaker_threshold(self.concurrency))  # a judge that is down: stop sending
        self._opener = openai_answers.opener_for(self.base_url)  # loopback traffic never goes through a proxy
        self.path = "/chat/completions" if endpoint == "chat" else "/completions"
        self.retry_log = RetryLog(self.base_url + self.path, {"base_url": self.base_url, "model": model, "endpoint": endpoint,
                                  "timeout_s": self.timeout_s, "concurrency": self.concurrency, "api_key_env": api_key_env})
        self.model_id = openai_id(self)

    def __repr__(self) -> str:  # the key itself is never held, only the variable's name
        return f"OpenAIAnnotator(model={self.model!r}, base_url={self.base_url!r}, endpoint={self.endpoint!r}, api_key_env={self.api_key_env!r})"

    def annotate(self, texts: list[str], rubric: Rubric, on_answer: AnswerHook | None = None) -> AnnotationResult:
        """Scores of ``texts``; ``on_answer(i, answer)`` (see :data:`~classifiers.annotation.base.AnswerHook`)
        hears of each document's answer as soon as it is final, so a caller can keep it if the batch
        is cut short (Ctrl-C, SIGTERM)."""
        started = time.time()
        self.breaker.probe()  # a server that failed an earlier batch is asked again, once a cool-down has passed
        truncate = self._truncate()
        bodies = [self._body(rubric, rubric.prepare(t, self.doc_tokens, truncate)) for t in texts]

        def one(item: tuple[int, dict[str, Any]]) -> _Answer:
            answer = self._annotate_one(item[1], rubric)
            if on_answer is not None:
                score = None if answer.score is None or not math.isfinite(answer.score) else float(answer.score)
                on_answer(item[0], Answer(score, answer.raw, answer.failure, answer.tokens_in, answer.tokens_out))
            return answer

        with concurrent.futures.ThreadPoolExecutor(self.concurrency) as pool:
            answers = list(pool.map(one, enumerate(bodies)))
        stats = AnnotationStats(
            documents=len(texts),
            requests=sum(a.requests for a in answers),
            retries=sum(len(a.retried) for a in answers),
            tokens_in=sum(a.tokens_in for a in answers),
            tokens_out=sum(a.tokens_out for a in answers),
            seconds=time.time() - started,
        )
        failures = [a.failure for a in answers]
        stats.count_failures(failures)
        stats.count_retries(r for a in answers for r in a.retried)
        scores = np.asarray([np.nan if a.score is None else a.score for a in answers], dtype="float64")
        return AnnotationResult(
            scores, [a.raw for a in answers], failures, stats,
            tokens_in=[a.tokens_in for a in answers], tokens_out=[a.tokens_out for a in answers],
        )

    # -- requests ---------------------------------------------------------------------------

    def _annotate_one(self, body: dict[str, Any], rubric: Rubric) -> _Answer:
        total = _Answer(None, "", None)
        for attempt in range(self.parse_retries + 1):
            try:
                response, attempts = self._post(body, total.retried)
            except RequestFailed as exc:
                total.requests += exc.attempts  # 0 attempts: not sent, the breaker was open
                total.failure, total.raw = exc.reason, exc.detail  # the server's answer, for the failure message
                return total
            total.requests += attempts
            total.tokens_in += usage_tokens(response, "prompt_tokens")
            total.tokens_out += usage_tokens(response, "completion_tokens")
            try:
                score, raw, failure = read_answer(response, rubric, self.endpoint, self.prefill)
            except (KeyError, IndexError, TypeError, ValueError, AttributeError, ArithmeticError):  # not a completion
                score, raw, failure = None, json.dumps(response)[:2000], "bad_response"
            total.score, total.raw, total.failure = score, raw, failure
            if failure is None or (failure == "truncated" and self.temperature == 0):  # cut again at the same place
                return total
            log.debug("unusable answer (%s), attempt %d", failure, attempt + 1)
            if attempt < self.parse_retries:
                total.retried.append(failure)  # asked again
        return total

    def _post(self, body: dict[str, Any], retried: list[str]) -> tuple[dict[str, Any], int]:
        """POST with retries; returns (JSON response, attempts made); the reason of each retry is
        added to ``retried``."""
        data = json.dumps(body).encode("utf-8")
        headers = {"Content-Type": "application/json"}
        key = os.environ.get(self.api_key_env or "", "")
        if key:
            headers["Authorization"] = f"Bearer {key}"
        for attempt in range(self.max_retries + 1):
            tripped = self.breaker.tripped()
            if tripped is not None:
                del retried[len(retried) - min(attempt, 1):]  # the retry planned was not sent
                raise RequestFailed(tripped[0], attempt, tripped[1])
            self.limiter.wait()
            wait_at_least: float | None = None
            reply = b""
            try:
                req = urllib.request.Request(self.base_url + self.path, data=data, headers=headers, method="POST")
                with self._opener.open(req, timeout=self.timeout_s) as resp:
                    reply = resp.read()
                    answer = json.loads(reply.decode("utf-8"))
                if isinstance(answer, dict):
                    self.breaker.answered()
                    self.retry_log.answered()
                    return answer, attempt + 1
                reason, retryable, detail = "bad_response", True, f"not a JSON object: {excerpt(reply)}"
            except urllib.error.HTTPError as exc:
                reason, detail = f"http_{exc.code}", f"HTTP {exc.code}: {error_body(exc)}"
                wait_at_least = retry_after(exc.headers.get("Retry-After") if exc.headers else None)
                retryable = exc.code in RETRY_STATUS
            except TimeoutError:
                reason, retryable, detail = "timeout", True, f"no answer within {self.timeout_s:g} s"
            except urllib.error.URLError as exc:
                timed_out = isinstance(exc.reason, (TimeoutError, socket.timeout))
                reason, retryable = ("timeout" if timed_out else "connection_error"), True
                detail = f"no answer within {self.timeout_s:g} s" if timed_out else excerpt(str(exc.reason))
            except (ConnectionError, http.client.HTTPException) as exc:
                reason, retryable, detail = "connection_error", True, excerpt(f"{type(exc).__name__}: {exc}")
            except (UnicodeDecodeError, json.JSONDecodeError) as exc:  # an HTTP 200 whose body is not JSON text
                reason, retryable, detail = "bad_response", True, f"{type(exc).__name__} reading {excerpt(reply)}"
            if not retryable or attempt == self.max_retries:
                # said in full for the first of each reason and when the breaker opens, then counted (retry_log)
                in_a_row = self.breaker.failed(reason, detail)
                self.retry_log.failed(reason, detail, attempt + 1, in_a_row, self.breaker.threshold)
                raise RequestFailed(reason, attempt + 1, detail)
            delay = backoff_delay(attempt, self.backoff_s, self.backoff_max_s, wait_at_least, self.retry_after_max_s)
            retried.append(reason)
            self.retry_log.retried(reason, detail, attempt, delay)
            time.sleep(delay)
        raise AssertionError("unreachable")

    # -- prompts and answers ----------------------------------------------------------------

    def _truncate(self) -> Callable[[str, int], str]:
        if self.tokenizer == "chars":
            return truncate_chars
        from curation.tokens import load_tokenizer

        return truncate_with(load_tokenizer(self.tokenizer))

    def _body(self, rubric: Rubric, doc: str) -> dict[str, Any]:
        user = rubric.user.replace("{document}", doc)
        messages = [{"role": "system", "content": rubric.system}, {"role": "user", "content": user}]
        n_answer = 2 if rubric.scale[1] >= 10 else 1  # "10" is two tokens in most vocabularies
        body: dict[str, Any] = {"model": self.model, "temperature": self.temperature}
        if self.endpoint == "completions":
            body.update(prompt=self._render(messages) + rubric.answer_prefix + " ", max_tokens=n_answer)
            if self.logprobs:
                body["logprobs"] = self.top_logprobs
        else:
            body.update(messages=messages, max_tokens=self.max_tokens)
            if self.prefill:
                body["messages"] = [*messages, {"role": "assistant", "content": rubric.answer_prefix + " "}]
                body.update(max_tokens=n_answer, continue_final_message=True, add_generation_prompt=False)
            if self.logprobs:
                body.update(logprobs=True, top_logprobs=self.top_logprobs)
        body.update(self.extra_body)
        return body

    def _render(self, messages: list[dict[str, str]]) -> str:
        if self.prompt_format == "plain":
            return "\n\n".join(m["content"] for m in messages) + "\n\n"
        if self.prompt_format == "chatml":
            turns = "".join(f"<|im_start|>{m['role']}\n{m['content']}<|im_end|>\n" for m in messages)
            return turns + "<|im_start|>assistant\n"
        return _hf_template(self.prompt_format[3:])(messages)


@functools.lru_cache(maxsize=4)
def _hf_template(folder: str) -> Callable[[list[dict[str, str]]], str]:
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(folder)
    return lambda messages: tok.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
