"""Reading an OpenAI-compatible server's answer: the score from the rubric's answer line, or the
expected score over the score token's top log-probabilities (see :mod:`classifiers.annotation.openai`);
and what it said when it failed (an error status's message, a body that is no completion), kept
short and on one line so a failure message can quote it."""

from __future__ import annotations

import datetime
import email.utils
import http.client
import json
import math
import re
import time
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
        cut = choice.get("finish_reason") == "length" and parsed.failure in ("no_final_score", "empty_response")
        return None, text, "truncated" if cut else parsed.failure  # cut by max_tokens before its score line
    step = _score_step(text, chosen, parsed.written or "", rubric)
    if step is not None and step < len(steps) and chosen[step] in logprobs_to_probs(steps[step]):
        # the distribution speaks for the answer only if the token written has a valid probability in it
        # (a NaN, -inf or missing one left the other digits: "Educational score: 5" read as 0.0)
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


def retry_after(value: str | None, now: float | None = None) -> float | None:
    """Seconds a ``Retry-After`` header asks to wait: a number of seconds or an HTTP date (RFC 9110;
    a date in the past is 0); None when absent or neither.

    >>> retry_after("120"), retry_after("Sun, 06 Nov 1994 08:49:37 GMT", now=784111717.0), retry_after("soon")
    (120.0, 60.0, None)
    """
    if value is None:
        return None
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value.strip())
        except (TypeError, ValueError, IndexError):
            return None
        if when.tzinfo is None:  # an HTTP date is GMT
            when = when.replace(tzinfo=datetime.timezone.utc)
        seconds = max(0.0, when.timestamp() - (time.time() if now is None else now))
    return seconds if math.isfinite(seconds) and seconds >= 0 else None


def _from_steps(
    text: str, steps: list[dict[str, float]], chosen: list[str], rubric: Rubric, prefixed: bool
) -> tuple[float | None, str, str | None]:
    """Score of an answer that starts right after the answer prefix."""
    parsed = rubric.parse(f"{rubric.answer_prefix} {text.strip()}" if prefixed else text)
    written = parsed.written or ""
    if "." in written or (parsed.failure == "out_of_range" and rubric.scale[0] <= float(written) <= rubric.scale[1]):
        return parsed.score, text, parsed.failure  # "2.5" is three tokens; "4/10" on a 0–5 scale is off it
    probs = logprobs_to_probs(steps[0]) if steps else {}
    token = chosen[0] if chosen else text  # one generated token: its text when the server lists no tokens
    if probs and token in probs:  # as for a chat answer: only a distribution that holds the token written
        p_zero = _p_zero_after_one(steps, chosen, 0) if rubric.scale[1] >= 10 else None
        score, mass = expected_score(probs, rubric.scale, p_zero)
        raw = text + "\t" + json.dumps(steps[0], sort_keys=True)
        return (score, raw, None) if score is not None else (None, raw, "no_score_mass")
    if steps and parsed.failure is not None:
        return None, text + "\t" + json.dumps(steps[0], sort_keys=True), "no_score_mass"
    return parsed.score, text, parsed.failure


def _score_step(text: str, chosen: list[str], written: str, rubric: Rubric) -> int | None:
    """Index of the generated token that is the final score, when the score is one integer token.

    The score is the first number after the answer prefix on the answer's last line (the line
    :meth:`Rubric.parse` read), never a denominator ("3/5") or a decimal digit ("2.5"). Its
    distribution gives Σ k·p(k) only when one token holds the whole integer ("10" may be "1"
    then "0" on a 0–10 scale: see :func:`_p_zero_after_one`); a score written in several tokens
    ("2.5") is read as written.

    >>> from classifiers.rubrics import get_rubric
    >>> EDU = get_rubric("edu")
    >>> _score_step("Fine.\\nEducational score: 3/5", ["Fine.\\n", "Educational", " score", ":", " ", "3", "/", "5"], "3", EDU)
    5
    >>> _score_step("Educational score: 2.5", ["Educational", " score", ":", " ", "2", ".", "5"], "2.5", EDU) is None
    True
    """
    if not written or "." in written or "".join(chosen) != text:
        return None
    end = len(text.rstrip())
    start = text.rfind("\n", 0, end) + 1
    words = re.escape(rubric.answer_prefix.rstrip(":").strip()).replace(r"\ ", r"\s+")
    found = list(re.finditer(words, text[start:end], re.IGNORECASE))
    at = start + (found[-1].end() if found else 0)
    m = re.compile(r"\d+").search(text, at, end)
    if m is None:
        return None
    pos = 0
    for i, tok in enumerate(chosen):
        if pos <= m.start() < pos + len(tok):
            piece = tok.strip()
            whole = piece.startswith(m.group(0)) and not any(c.isdigit() for c in piece[len(m.group(0)):])
            ten = m.group(0) == "10" and piece == "1" and rubric.scale[1] >= 10
            return i if (whole or ten) and pos + len(tok) - len(tok.lstrip()) == m.start() else None
        pos += len(tok)
    return None


def _p_zero_after_one(steps: list[dict[str, float]], chosen: list[str], i: int) -> float | None:
    """P("0" | "1") at step ``i + 1`` when the model chose "1" at step ``i`` (0–10 scales)."""
    if i + 1 >= len(steps) or i >= len(chosen) or chosen[i].strip() != "1":
        return None
    nxt = logprobs_to_probs(steps[i + 1])
    return float(sum(p for t, p in nxt.items() if t.strip() == "0"))
