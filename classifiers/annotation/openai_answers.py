"""Reading an OpenAI-compatible server's answer: the score from the rubric's answer line, or the
expected score over the score token's top log-probabilities (see :mod:`classifiers.annotation.openai`);
and what it said when it failed (an error status's message, a body that is no completion), kept
short and on one line so a failure message can quote it."""

from __future__ import annotations

import http.client
import json
import math
import re
import urllib.error
import urllib.parse
import urllib.request
from typing import Any

from classifiers.annotation.base import expected_score, logprobs_to_probs
from classifiers.rubrics import Rubric


def read_answer(response: dict[str, Any], rubric: Rubric, endpoint: str, prefill: bool) -> tuple[float | None, str, str | None]:
    """``(score, raw answer, failure)`` of one response of the ``chat`` or ``completions`` endpoint."""
    choice = response["choices"][0]
    if endpoint == "completions":
        text = choice.get("text") or ""
        lp = choice.get("logprobs") or {}
        steps = [dict(s or {}) for s in (lp.get("top_logprobs") or [])]
        chosen = list(lp.get("tokens") or [])
        return _from_steps(text, steps, chosen, rubric, prefixed=True)
    text = (choice.get("message") or {}).get("content") or ""
    content = ((choice.get("logprobs") or {}).get("content")) or []
    steps = [{t["token"]: t["logprob"] for t in (c.get("top_logprobs") or [])} for c in content]
    chosen = [c.get("token", "") for c in content]
    if prefill:
        return _from_steps(text, steps, chosen, rubric, prefixed=True)
    parsed = rubric.parse(text)
    if parsed.failure is not None:
        return None, text, parsed.failure
    step = _score_step(text, chosen)
    if step is not None and step < len(steps):
        p_zero = _p_zero_after_one(steps, chosen, step) if rubric.scale[1] >= 10 else None
        score, _mass = expected_score(logprobs_to_probs(steps[step]), rubric.scale, p_zero)
        if score is not None:
            return score, text, None
    return parsed.score, text, None


#: Hosts reached without a proxy from the environment: a judge served on this machine.
LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1"})


def opener_for(url: str) -> urllib.request.OpenerDirector:
    """A URL opener for requests to ``url``: loopback traffic never goes through an HTTP proxy."""
    handlers = [urllib.request.ProxyHandler({})] if (urllib.parse.urlparse(url).hostname or "") in LOOPBACK else []
    return urllib.request.build_opener(*handlers)


def usage_tokens(response: dict[str, Any], key: str) -> int:
    """A token count of the response's ``usage``, 0 where the server gives none (or something else)."""
    usage = response.get("usage")
    value = usage.get(key) if isinstance(usage, dict) else None
    return int(value) if isinstance(value, (int, float)) and math.isfinite(value) else 0


def excerpt(body: bytes | str, limit: int = 300) -> str:
    """One line of at most ``limit`` characters of a server's body (bytes that are not UTF-8 replaced)."""
    text = body.decode("utf-8", "replace") if isinstance(body, bytes) else str(body)
    text = " ".join(text.split()) or "(empty body)"
    return text if len(text) <= limit else text[:limit] + "…"


def error_body(exc: urllib.error.HTTPError) -> str:
    """What the server said with its error status: the ``message`` of an OpenAI-style error, else the body."""
    try:
        body = exc.read()
    except (OSError, http.client.HTTPException):
        body = b""
    try:
        data = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        return excerpt(body or str(exc.reason))
    error = data.get("error") if isinstance(data, dict) else None
    if isinstance(error, str):
        return excerpt(error)
    for holder in (error, data):  # vLLM: {"message": …}; OpenAI: {"error": {"message": …}}; FastAPI: {"detail": …}
        if isinstance(holder, dict):
            for key in ("message", "detail"):
                if isinstance(holder.get(key), str):
                    return excerpt(holder[key])
    return excerpt(body)


def retry_after(value: str | None) -> float | None:
    """Seconds of a ``Retry-After`` header (None when absent or not a number of seconds)."""
    try:
        seconds = float(value) if value is not None else None
    except ValueError:
        return None
    return seconds if seconds is not None and math.isfinite(seconds) and seconds >= 0 else None


def _from_steps(
    text: str, steps: list[dict[str, float]], chosen: list[str], rubric: Rubric, prefixed: bool
) -> tuple[float | None, str, str | None]:
    """Score of an answer that starts right after the answer prefix."""
    if steps:
        p_zero = _p_zero_after_one(steps, chosen, 0) if rubric.scale[1] >= 10 else None
        score, mass = expected_score(logprobs_to_probs(steps[0]), rubric.scale, p_zero)
        raw = text + "\t" + json.dumps(steps[0], sort_keys=True)
        return (score, raw, None) if score is not None else (None, raw, "no_score_mass")
    parsed = rubric.parse(f"{rubric.answer_prefix} {text.strip()}" if prefixed else text)
    return parsed.score, text, parsed.failure


def _score_step(text: str, chosen: list[str]) -> int | None:
    """Index of the generated token that holds the final score's first digit, if tokens add up to ``text``."""
    matches = list(re.finditer(r"\d+", text))
    m = matches[-1] if matches else None
    if m is None or "".join(chosen) != text:
        return None
    pos = 0
    for i, tok in enumerate(chosen):
        if pos <= m.start() < pos + len(tok):
            return i if tok.strip() and tok.strip()[0].isdigit() else None
        pos += len(tok)
    return None


def _p_zero_after_one(steps: list[dict[str, float]], chosen: list[str], i: int) -> float | None:
    """P("0" | "1") at step ``i + 1`` when the model chose "1" at step ``i`` (0–10 scales)."""
    if i + 1 >= len(steps) or i >= len(chosen) or chosen[i].strip() != "1":
        return None
    nxt = logprobs_to_probs(steps[i + 1])
    return float(sum(p for t, p in nxt.items() if t.strip() == "0"))
