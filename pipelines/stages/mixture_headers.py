"""``mixture``'s repository headers against the run's tokenizer (the stage's preflight).

``repo_header`` / ``file_header`` open every repository-level document and file with a special
token (Qwen2.5-Coder's ``<|repo_name|>`` / ``<|file_sep|>`` by default). Written in a tokenizer
that lacks that token, the marker is plain text (7 ids of SmolLM2's tokenizer each) and the
trainer never sees the format the recipe promises, with nothing said. So every special-token
marker of a header's literal text (``<|name|>`` or ``<name>``; not the ``{repo}`` / ``{path}``
placeholders) must be one token of the tokenizer; a header without such markup is plain text on
purpose and is left alone.
"""

from __future__ import annotations

import json
import re
import string
from typing import Any

from curation.config import ConfigError

#: A special-token marker: ``<|repo_name|>`` (Qwen) or ``<reponame>`` (StarCoder, SmolLM2).
MARKER = re.compile(r"<\|[^<>|\s]+\|>|<[A-Za-z][A-Za-z0-9_]*>")
#: header key → (its placeholder, what its token marks, how the tokenizer's own such tokens are named)
HEADERS = {
    "repo_header": ("repo", "repository", re.compile(r"repo")),
    "file_header": ("path", "file", re.compile(r"^file")),
}


def header_markers(header: str) -> list[str]:
    """The special-token markers of ``header``'s literal text, in order (a placeholder's value is not looked at).

    >>> header_markers("<|repo_name|>{repo}\\n"), header_markers("<file_sep>{path}\\n")
    (['<|repo_name|>'], ['<file_sep>'])
    >>> header_markers("# repository {repo} <{path}>\\n"), header_markers("{{<|x|>}}{path}")
    ([], ['<|x|>'])
    """
    return [m for literal, *_ in string.Formatter().parse(header) for m in MARKER.findall(literal)]


def own_tokens(tokenizer: Any, names: re.Pattern[str]) -> list[str]:
    """The tokenizer's added tokens whose name (markup, ``_`` and case aside) matches ``names``, by id.

    >>> from curation.tokens import load_tokenizer
    >>> own_tokens(load_tokenizer("qwen"), HEADERS["repo_header"][2]), own_tokens(load_tokenizer("qwen"), HEADERS["file_header"][2])
    (['<|repo_name|>'], ['<|file_sep|>'])
    """
    out = []
    for _, tok in sorted(tokenizer.get_added_tokens_decoder().items()):
        text = tok.content
        if MARKER.fullmatch(text) and names.search(text.strip("<|>").replace("_", "").lower()):
            out.append(text)
    return out


def check_headers(cfg: Any) -> None:
    """Refuse (ConfigError, exit 2) a header whose special-token marker is not one token of
    ``cfg.tokenizer``; the error names the tokenizer's own repository / file tokens when it has some."""
    from curation.tokens import encode, load_tokenizer

    for key, (field, what, names) in HEADERS.items():
        header = getattr(cfg, key)
        markers = header_markers(header)
        counts = [len(ids) for ids in encode(markers, cfg.tokenizer)] if markers else []
        for marker, n in zip(markers, counts, strict=True):
            if n == 1:
                continue
            said = (
                f"mixture.{key} = {header!r}: its marker {marker!r} is {n} tokens of tokenizer {cfg.tokenizer!r}, not one, "
                f"so every {what} header would reach the trainer as plain text"
            )
            own = own_tokens(load_tokenizer(cfg.tokenizer), names)
            if own:
                fix = (
                    f"the tokenizer's {what} token{'s are' if len(own) > 1 else ' is'} {', '.join(own)}: "
                    f"set mixture.{key}={_yaml(header.replace(marker, own[0]))}"
                )
            else:
                plain = f"# {what}: {{{field}}}\n"
                fix = (
                    f"the tokenizer has no {what} token: set mixture.{key} to plain text without <|…|> or <…> markers "
                    f"(e.g. mixture.{key}={_yaml(plain)})"
                )
            raise ConfigError(
                f"{said}; {fix}, or set mixture.tokenizer (and ingest.tokenizer) to a tokenizer that has {marker}"
            )


def _yaml(text: str) -> str:
    """``text`` as a YAML double-quoted value, as a recipe or an override writes it (``\\n`` for a line break)."""
    return json.dumps(text, ensure_ascii=False)
