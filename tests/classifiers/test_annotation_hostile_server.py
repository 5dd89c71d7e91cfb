"""A judge whose server misbehaves within HTTP 200s and its retries: log-probabilities that are no
probabilities (above 0, NaN, -inf, the written token missing), ``Retry-After`` in seconds above the
back-off cap and as an HTTP date, and connections dropped among answers. Against a small
OpenAI-compatible server on 127.0.0.1 (the markers of a document say how it answers)."""

from __future__ import annotations

import email.utils
import json
import re
import threading
import time
from http.server import BaseHTTPRequestHandler
from typing import Any

import numpy as np
import pytest

from classifiers.annotation import diagnose
from classifiers.annotation.openai import OpenAIAnnotator
from classifiers.rubrics import get_rubric
from tests.helpers import serve_loopback

EDU = get_rubric("edu")


class HostileServer:
    """``[[lp:V]]``: the score 5 written, its top log-probabilities ``{"5": V, "0": -1.0}`` (V may be
    ``1000``, ``NaN``, ``-Infinity``, ``missing``); ``[[ra:H]]``: a 429 with ``Retry-After: H`` the first
    time (``H`` = ``date+N``: an HTTP date N seconds ahead); ``[[reset]]``: the connection closed
    without an answer. ``times`` records when each document's requests arrived."""

    def __init__(self) -> None:
        self.times: dict[str, list[float]] = {}
        self.lock = threading.Lock()

    def __enter__(self) -> HostileServer:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802 (http.server API)
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
                status, payload, headers = server.answer(self.path, body)
                if status == 0:  # a dropped connection: no status line at all
                    self.close_connection = True
                    return
                data = json.dumps(payload).encode()  # NaN and Infinity as Python writes them (vLLM's JSON does too)
                self.send_response(status)
                for k, v in {**headers, "Content-Type": "application/json", "Content-Length": str(len(data))}.items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)

        self.httpd, self.url = serve_loopback(Handler)
        return self

    def __exit__(self, *exc: Any) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def answer(self, path: str, body: dict[str, Any]) -> tuple[int, Any, dict[str, str]]:
        prompt = body.get("prompt") or "\n".join(m["content"] for m in body["messages"])
        doc = re.search(r"<document>\n(.*)\n</document>", prompt, re.DOTALL).group(1)
        with self.lock:
            self.times.setdefault(doc, []).append(time.monotonic())
            first = len(self.times[doc]) == 1
        if "[[reset]]" in doc:
            return 0, None, {}
        ra = re.search(r"\[\[ra:([^\]]+)\]\]", doc)
        if ra and first:
            value = ra.group(1)
            if value.startswith("date+"):
                value = email.utils.formatdate(time.time() + float(value[5:]), usegmt=True)
            return 429, {"error": {"message": "slow down"}}, {"Retry-After": value}
        lp = re.search(r"\[\[lp:([^\]]+)\]\]", doc)
        value = float(lp.group(1)) if lp and lp.group(1) != "missing" else -0.05
        top = {"0": -1.0} | ({} if lp and lp.group(1) == "missing" else {"5": value})
        if not lp:
            top = {"5": -0.05, "4": -3.0}
        if path.endswith("/completions") and "prompt" in body:
            return 200, {"choices": [{"text": "5", "logprobs": {"tokens": ["5"], "top_logprobs": [top]}}]}, {}
        tokens = [("5", top)] if body.get("continue_final_message") else [
            ("Fine.\n", {}), ("Educational", {}), (" score", {}), (":", {}), (" ", {}), ("5", top)]
        content = [{"token": t, "logprob": -0.1, "top_logprobs": [{"token": k, "logprob": v} for k, v in tp.items()]}
                   for t, tp in tokens]
        message = {"role": "assistant", "content": "".join(t for t, _ in tokens)}
        return 200, {"choices": [{"message": message, "logprobs": {"content": content}}]}, {}


def judge(url: str, **kw: Any) -> OpenAIAnnotator:
    return OpenAIAnnotator(**{"model": "m", "base_url": url, "tokenizer": "chars", "backoff_s": 0.01, "backoff_max_s": 0.05,
                              "max_retries": 1, "timeout_s": 5.0} | kw)


BROKEN = ["[[lp:1000]]", "[[lp:NaN]]", "[[lp:-Infinity]]", "[[lp:missing]]"]


@pytest.mark.parametrize("mode", [{}, {"endpoint": "completions"}, {"prefill": True}], ids=["chat", "completions", "prefill"])
def test_a_distribution_that_does_not_hold_the_written_score_gives_the_written_score(mode):
    """A logprob of 1000 crashed the stage (OverflowError, exit 70); a NaN, -inf or missing one for the
    written '5' left p('0') alone: 'Educational score: 5' was stored as 0.0, as a real score."""
    with HostileServer() as srv:
        res = judge(srv.url, **mode).annotate([f"text {m}" for m in BROKEN] + ["text"], EDU)
    assert res.failures == [None] * 5
    assert res.scores[:4].tolist() == [5.0] * 4
    p5, p4 = np.exp(-0.05), np.exp(-3.0)  # a valid distribution still gives the expected value
    assert res.scores[4] == pytest.approx((5 * p5 + 4 * p4) / (p5 + p4))


def test_retry_after_above_the_backoff_cap_and_as_an_http_date_is_waited():
    """Retry-After was capped at backoff_max_s (30 s by default: a 429 asking for 100 s failed for good
    after retries 30 s apart), and an HTTP date was ignored."""
    docs = ["a [[ra:1.0]]", "b [[ra:date+2]]", "c [[ra:100]]"]
    with HostileServer() as srv:
        res = judge(srv.url, retry_after_max_s=1.5).annotate(docs, EDU)
    assert res.failures == [None, None, None] and res.stats.retries == 3
    gap = {d: srv.times[d][1] - srv.times[d][0] for d in docs}
    assert gap[docs[0]] >= 0.95  # seconds, over backoff_max_s = 0.05
    assert gap[docs[1]] >= 0.9  # an HTTP date (whole seconds) 2 s ahead
    assert 1.4 <= gap[docs[2]] < 5  # capped at retry_after_max_s


def test_connections_dropped_among_answers_are_not_a_server_that_stopped():
    """'the server stopped answering after N answer(s)' was said for any connection error once some
    answers had come, though the server answered between and after them."""
    interleaved = ["a", "b [[reset]]", "c", "d [[reset]]", "e", "f"]
    with HostileServer() as srv:
        res = judge(srv.url, max_retries=0, concurrency=1).annotate(interleaved, EDU)
        died = judge(srv.url, max_retries=0, concurrency=1).annotate(["a", "b"] + [f"x{i} [[reset]]" for i in range(10)], EDU)
    counts, examples = diagnose.summarise(res.failures, res.raw)
    assert counts == {"connection_error": 2} and not diagnose.stopped(res.failures, res.raw)
    hint = diagnose.likely_fix(counts, examples, {"base_url": srv.url}, answered=4, stopped=diagnose.stopped(res.failures, res.raw))
    assert "stopped answering" not in hint and hint.startswith("2 request(s) got no connection (refused or reset) and 4 were answered")
    counts, examples = diagnose.summarise(died.failures, died.raw)
    assert diagnose.stopped(died.failures, died.raw)  # 8 in a row failed, the last 2 were not sent
    hint = diagnose.likely_fix(counts, examples, {"base_url": srv.url}, answered=2, stopped=True)
    assert hint.startswith("the server stopped answering after 2 answer(s)")


def test_the_retry_and_vllm_engine_settings_reach_the_backends():
    """edu_score could not raise backoff_max_s (nor its Retry-After cap), and its vllm judge got only model and doc_tokens."""
    from classifiers.annotation import get_annotator
    from classifiers.annotation.settings import AnnotatorSettings
    from classifiers.annotation.vllm import VLLMAnnotator

    settings = AnnotatorSettings(model="m", backoff_s=2.0, backoff_max_s=60.0, retry_after_max_s=900.0, tensor_parallel_size=8,
                                 max_model_len=8192, gpu_memory_utilization=0.9, top_logprobs=10)
    http = get_annotator(settings.backend_config("openai"))
    assert (http.backoff_s, http.backoff_max_s, http.retry_after_max_s) == (2.0, 60.0, 900.0)
    engine = VLLMAnnotator(**{k: v for k, v in settings.backend_config("vllm").items() if k != "backend"})
    assert engine.engine_args == ("m", 8, 8192, 0.9, "auto") and engine.top_logprobs == 10
