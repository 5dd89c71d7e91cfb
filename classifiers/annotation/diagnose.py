"""Why a judge's requests or answers failed, said in one line: how many and how, what the server
answered, and what to change.

A stage that annotates through a judge reads its failures back (reason and raw answer per
document; a request that failed in transport keeps the server's error body or the socket's
message as its raw answer) and hands them here. ``edu_score`` raises the message as a
ServiceError (exit 10) above ``max_transport_failures`` and logs it as a warning below.

>>> counts, examples = summarise(["connection_error", None, "connection_error"], ["[Errno 111] Connection refused", "", ""])
>>> counts, describe(counts, examples)
({'connection_error': 2}, 'connection_error=2 (e.g. [Errno 111] Connection refused)')
>>> likely_fix(counts, examples, {"base_url": "http://127.0.0.1:9/v1"}, answered=0)
'nothing answers at http://127.0.0.1:9/v1: start the server (e.g. `vllm serve MODEL`) or fix annotator_base_url'
>>> likely_fix({"http_404": 1}, {}, {"base_url": "http://gpu-node:8000", "model": "m"}, answered=0)
'the server has no /chat/completions there: add /v1 to the base URL (annotator_base_url=http://gpu-node:8000/v1)'
"""

from __future__ import annotations

import json
import os
import urllib.parse
import urllib.request
from collections.abc import Iterable
from typing import Any

from classifiers.annotation.cache import CACHEABLE_FAILURES
from classifiers.annotation.openai_answers import opener_for
from classifiers.annotation.pacing import NOT_SENT, server_answer
from curation.errors import brief


def summarise(failures: Iterable[str | None], raw: Iterable[str | None]) -> tuple[dict[str, int], dict[str, str]]:
    """(reason → documents, reason → the first non-empty raw answer of that reason), most frequent
    first; a request the breaker did not send gives the answer it quotes, the last one sent."""
    counts: dict[str, int] = {}
    examples: dict[str, str] = {}
    unsent: dict[str, str] = {}
    for reason, answer in zip(failures, raw, strict=True):
        if reason is None or reason != reason:  # None or NaN: an answer that was read
            continue
        counts[reason] = counts.get(reason, 0) + 1
        text = " ".join(str(answer or "").split())
        into = unsent if text.startswith(NOT_SENT) else examples
        text = server_answer(text)
        if text and reason not in into:
            into[reason] = text[:200] + ("…" if len(text) > 200 else "")
    return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))), {**unsent, **examples}


def is_transport(reason: str) -> bool:
    """A failure of the request (no answer, an error status, a body that is no completion), not of the answer."""
    return reason not in CACHEABLE_FAILURES


def describe(counts: dict[str, int], examples: dict[str, str], limit: int = 3) -> str:
    """``reason=n (e.g. answer)`` for the ``limit`` most frequent reasons, one line."""
    parts = [f"{r}={n}" + (f" (e.g. {examples[r]})" if r in examples else "") for r, n in list(counts.items())[:limit]]
    more = len(counts) - limit
    return ", ".join(parts) + (f" and {more} more reason(s)" if more > 0 else "")


def stopped(failures: Iterable[str | None], raw: Iterable[str | None]) -> bool:
    """Whether the judge stopped answering: requests were left unsent because enough in a row had
    failed for good with no answer in between (the breaker of :mod:`~classifiers.annotation.pacing`)."""
    return any(f is not None and f == f and str(r or "").startswith(NOT_SENT) for f, r in zip(failures, raw, strict=True))


def likely_fix(counts: dict[str, int], examples: dict[str, str], config: dict[str, Any], answered: int,
               stopped: bool = False) -> str:
    """What to change for the transport failures in ``counts`` (``config``: the judge's backend settings;
    ``stopped``: see :func:`stopped`; failures among answers are not a server that stopped)."""
    base = str(config.get("base_url", "")).rstrip("/")
    hints: list[str] = []
    for reason in counts:
        if reason == "connection_error" and "unknown url type" in examples.get(reason, ""):  # urllib's words for no http://
            hints.append(f"annotator_base_url = {base!r} is not an http:// or https:// URL, so no request was sent: set "
                         f"annotator_base_url=http://{base.split('://', 1)[-1].lstrip('/')} (the server's /v1 root)")
        elif reason == "connection_error" and answered:
            n = counts[reason]
            hints.append(f"the server stopped answering after {answered} answer(s): check that it still runs at {base}" if stopped
                         else f"{n} request(s) got no connection (refused or reset) and {answered} were answered: the server "
                         f"at {base} drops connections, or went down late in the batch; check that it still runs and see its log "
                         "(a restart? a proxy's connection limit?), lower annotator_concurrency or raise annotator_max_retries")
        elif reason == "connection_error":
            hints.append(f"nothing answers at {base}: start the server (e.g. `vllm serve MODEL`) or fix annotator_base_url")
        elif reason == "timeout":
            hints.append(f"no answer within annotator_timeout_s = {float(config.get('timeout_s', 0)):g} s: raise it, or lower "
                         f"annotator_concurrency (now {config.get('concurrency', '?')}) if the server is overloaded")
        elif reason == "http_404":
            hints.append(_not_found(base, config))
        elif reason in ("http_401", "http_403"):
            env = config.get("api_key_env") or "OPENAI_API_KEY"
            state = "set" if os.environ.get(env) else "not set"
            hints.append(f"the server refused the key: put the right one in ${env} (annotator_api_key_env; it is {state} here)")
        elif reason == "http_429":
            hints.append("the server is rate-limiting: lower annotator_concurrency, set annotator_rate_limit_rps, or raise "
                         "annotator_max_retries")
        elif reason.startswith("http_5"):
            hints.append("the server failed while answering: see its log (out of memory? the model crashed?)")
        elif reason.startswith("http_"):
            hints.append("the server refused the request: check annotator_model and annotator_endpoint against it")
        elif reason == "bad_response":
            hints.append(f"what answers at {base} is not an OpenAI-compatible server (its body is no completion): check "
                         f"annotator_base_url (the server's /v1 root) and annotator_endpoint ({config.get('endpoint', 'chat')})")
    return "; ".join(dict.fromkeys(hints)) or "see the server's log"


def _not_found(base: str, config: dict[str, Any]) -> str:
    """A 404: a base URL without ``/v1``, or a model the server does not serve (it lists them at ``/models``)."""
    route = "/chat/completions" if config.get("endpoint", "chat") == "chat" else "/completions"
    if not urllib.parse.urlparse(base).path.rstrip("/").endswith("/v1"):
        return f"the server has no {route} there: add /v1 to the base URL (annotator_base_url={base}/v1)"
    model = config.get("model")
    served = served_models(base, config.get("api_key_env"))
    if served and model not in served:
        return f"the server serves {brief(served)}, not {model!r}: set annotator_model to one of them"
    return f"the server has no {base}{route}: check annotator_base_url and annotator_endpoint"


def served_models(base_url: str, api_key_env: str | None = None, timeout_s: float = 5.0) -> list[str] | None:
    """The model ids an OpenAI-compatible server lists at ``GET {base_url}/models``; None if it does not answer so."""
    url = base_url.rstrip("/") + "/models"
    headers = {}
    key = os.environ.get(api_key_env or "", "")
    if key:
        headers["Authorization"] = f"Bearer {key}"
    try:
        with opener_for(url).open(urllib.request.Request(url, headers=headers), timeout=timeout_s) as resp:
            data = json.loads(resp.read().decode("utf-8"))
        return [str(m["id"]) for m in data["data"] if isinstance(m, dict) and "id" in m]
    except (OSError, ValueError, KeyError, TypeError):  # urllib's errors are OSErrors; a body that is no model list
        return None


def unreadable_fix(counts: dict[str, int], rubric: Any, config: dict[str, Any] | None = None) -> str:
    """What to check when the judge answered but its answers cannot be read with ``rubric``
    (``config``: the judge's backend settings).

    >>> from classifiers.rubrics import get_rubric
    >>> unreadable_fix({"truncated": 3}, get_rubric("edu"), {"max_tokens": 256})
    'answers were cut at annotator_max_tokens = 256 before their score line: raise annotator_max_tokens (a reasoning model needs 1024 or more; the cache key changes with it), or set annotator_prefill=true for a one-token answer'
    """
    lo, hi = rubric.scale
    if set(counts) == {"truncated"}:
        return (f"answers were cut at annotator_max_tokens = {(config or {}).get('max_tokens', 256)} before their score line: "
                "raise annotator_max_tokens (a reasoning model needs 1024 or more; the cache key changes with it), or set "
                "annotator_prefill=true for a one-token answer")
    what = []
    if "truncated" in counts:
        what.append(f"answers cut by max_tokens need a higher annotator_max_tokens (now {(config or {}).get('max_tokens', 256)})")
    if "no_final_score" in counts or "empty_response" in counts:
        what.append(f"an answer must end with the line '{rubric.answer_prefix} N'")
    if "out_of_range" in counts:
        what.append(f"N must be on the rubric's scale {lo}–{hi} (written N or N/{hi})")
    if "no_score_mass" in counts:
        what.append(f"the token after '{rubric.answer_prefix}' must be a score {lo}–{hi}")
    return (f"{'; '.join(what)}: check annotator_model (an instruction-tuned model that follows the prompt?), the rubric "
            f"({rubric.name}: its prompt and answer line) and annotator_endpoint")
