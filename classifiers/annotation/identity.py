"""What names a judge in its annotation cache key: the model's content, not its folder's name, and
the server an HTTP judge asks.

Fine-tuning writes folders named ``final`` or ``checkpoint-1000`` and files named ``model.gguf``;
a key made of the name alone gave a second model the first one's cached answers. The fingerprint
reads a little of each file — small files (configs, tokenizers) whole, large ones (weights) as
their size and 16 slices of 64 KiB spread over the file — so it costs about 1 MiB per weights
file, never a pass over gigabytes, and it depends on content only: two machines with the same
model agree on it (a modification time would differ between copies).

>>> import tempfile, pathlib
>>> a, b = pathlib.Path(tempfile.mkdtemp()), pathlib.Path(tempfile.mkdtemp())
>>> _ = (a / "config.json").write_text("{}"), (b / "config.json").write_text('{"layers": 2}')
>>> model_fingerprint(a) == model_fingerprint(b), len(model_fingerprint(a))
(False, 12)
>>> server_of("https://user:secret@api.example.com:443/v1/")
'https://api.example.com:443/v1'

An HTTP judge's id (:func:`openai_id`) names every setting that changes its answers: the model,
how it is asked, how the document is cut to its budget and how many score tokens are weighed.
"""

from __future__ import annotations

import json
import urllib.parse
from pathlib import Path
from typing import Any

from classifiers.scorer import model_fingerprint as content_fingerprint

#: Files up to this size are hashed whole; larger ones (weights) are sampled.
SMALL_FILE = 1 << 20


def model_fingerprint(path: str | Path) -> str:
    """12 hex digits naming the content of a model file or folder (see the module docstring):
    :func:`classifiers.scorer.model_fingerprint`, its weights sampled."""
    return content_fingerprint(Path(path).resolve(), sample_above=SMALL_FILE)[:12]


def server_of(base_url: str) -> str:
    """``base_url`` as it goes into a cache key and a log: no user name or password, no trailing slash."""
    parts = urllib.parse.urlsplit(base_url.strip())
    host = parts.hostname or ""
    netloc = f"[{host}]" if ":" in host else host
    if parts.port is not None:
        netloc += f":{parts.port}"
    return urllib.parse.urlunsplit((parts.scheme, netloc, parts.path, parts.query, "")).rstrip("/")


#: An HTTP judge's defaults that its id leaves unsaid, so answers cached under the shorter id stay usable.
QUIET_DEFAULTS = {"tokenizer": "qwen", "top_logprobs": 20}


def openai_id(judge: Any) -> str:
    """The cache id of an :class:`~classifiers.annotation.openai.OpenAIAnnotator`: model, endpoint,
    scoring mode, temperature, ``max_tokens`` (where the answer may reason), prompt format,
    document budget and ``tokenizer`` (how the document is cut), ``top_logprobs`` (the score tokens
    weighed), ``extra_body`` and the server (two may serve one model name); every setting but
    those of pacing, retries and ``parse_retries``."""
    mode = "completions" if judge.endpoint == "completions" else ("chat-prefill" if judge.prefill else "chat")
    top = f":top{judge.top_logprobs}" if judge.top_logprobs != QUIET_DEFAULTS["top_logprobs"] else ""
    probs = f":logprobs{top}" if judge.logprobs else ""
    cut = f":max{judge.max_tokens}" if mode == "chat" else ""
    budget = f":doc{judge.doc_tokens}" if judge.doc_tokens else ""
    tokenizer = f":tok{judge.tokenizer}" if judge.tokenizer != QUIET_DEFAULTS["tokenizer"] else ""
    extra = f":{json.dumps(judge.extra_body, sort_keys=True)}" if judge.extra_body else ""
    return (
        f"openai:{judge.model}:{mode}{probs}:t{judge.temperature:g}{cut}:{judge.prompt_format}"
        f"{budget}{tokenizer}{extra}@{server_of(judge.base_url)}"
    )
