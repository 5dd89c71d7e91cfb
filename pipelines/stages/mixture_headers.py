"""``mixture``'s repository headers against the run's tokenizer (the stage's preflight).

``repo_header`` / ``file_header`` open every repository-level document and file with a special
token (Qwen2.5-Coder's ``<|repo_name|>`` / ``<|file_sep|>`` by default). Written in a tokenizer
that lacks that token, the marker is plain text (7 ids of SmolLM2's tokenizer each) and the
trainer never sees the format the recipe promises, with nothing said. So every special-token
marker of a header's literal text (``<|name|>``, or a ``<name>`` that names a repository or file
token, ``<repo_name>`` / ``<file_sep>``; not the ``{repo}`` / ``{path}`` placeholders) must be one
token of the tokenizer; a header without such markup (``# {repo}``, ``<b>{path}</b>``) is plain
text on purpose and is left alone. The end-of-document text (``<|endoftext|>``) is refused with
its reason: a document's text never holds it as a token. A header holding a backslash and an ``n``
(the shell ate the quotes of ``"…\\n"``) gets a warning.
"""

from __future__ import annotations

import json
import logging
import re
import shlex
import string
from typing import Any

from curation.config import ConfigError

log = logging.getLogger(__name__)

#: A special-token marker: ``<|repo_name|>`` (Qwen) or ``<reponame>`` (StarCoder, SmolLM2).
MARKER = re.compile(r"<\|[^<>|\s]+\|>|<[A-Za-z][A-Za-z0-9_]*>")
#: header key → (its placeholder, what its token marks, how the tokenizer's own such tokens are named)
HEADERS = {
    "repo_header": ("repo", "repository", re.compile(r"repo")),
    "file_header": ("path", "file", re.compile(r"^file")),
}


def header_markers(header: str) -> list[str]:
    """The special-token markers of ``header``'s literal text, in order (a placeholder's value is not
    looked at): every ``<|…|>``, and a ``<…>`` that names a repository or file token; other ``<…>``
    (HTML's ``<b>``) are plain text.

    >>> header_markers("<|repo_name|>{repo}\\n"), header_markers("<file_sep>{path}\\n")
    (['<|repo_name|>'], ['<file_sep>'])
    >>> header_markers("# repository {repo} <{path}>\\n"), header_markers("{{<|x|>}}{path}"), header_markers("<b>{path}</b>")
    ([], ['<|x|>'], [])
    """
    found = [m for literal, *_ in string.Formatter().parse(header) for m in MARKER.findall(literal)]
    return [m for m in found if m.startswith("<|") or any(_names(m, names) for *_, names in HEADERS.values())]


def _names(marker: str, names: re.Pattern[str]) -> bool:
    """Whether ``marker``'s name (markup, ``_`` and case aside) is one that ``names`` matches."""
    return bool(names.search(marker.strip("<|>").replace("_", "").lower()))


def own_tokens(tokenizer: Any, names: re.Pattern[str]) -> list[str]:
    """The tokenizer's added tokens whose name (markup, ``_`` and case aside) matches ``names``, by id.

    >>> from curation.tokens import load_tokenizer
    >>> own_tokens(load_tokenizer("qwen"), HEADERS["repo_header"][2]), own_tokens(load_tokenizer("qwen"), HEADERS["file_header"][2])
    (['<|repo_name|>'], ['<|file_sep|>'])
    """
    out = []
    for _, tok in sorted(tokenizer.get_added_tokens_decoder().items()):
        text = tok.content
        if MARKER.fullmatch(text) and _names(text, names):
            out.append(text)
    return out


def check_headers(cfg: Any) -> None:
    """Refuse (ConfigError, exit 2) a header whose special-token marker is not one token of
    ``cfg.tokenizer``, or that holds the end-of-document text; the error names the tokenizer's own
    repository / file tokens when it has some, and the setting as a shell takes it. A header
    holding a backslash and an ``n`` is warned about (it is allowed, but rarely meant)."""
    from curation.tokens import EOD_TEXT, encode, load_tokenizer

    for key, (field, what, names) in HEADERS.items():
        header = getattr(cfg, key)
        if "\\n" in header:
            log.warning(
                "mixture.%s = %r holds a backslash and an n, not a line break, so every %s header reaches the "
                'trainer with those two characters (a shell drops the double quotes of mixture.%s="…\\n"); '
                "for a line break give %s",
                key,
                header,
                what,
                key,
                setting(key, header.replace("\\n", "\n")),
            )
        markers = header_markers(header)
        if EOD_TEXT in markers:
            raise ConfigError(
                f"mixture.{key} = {header!r} holds the end-of-document text {EOD_TEXT}: a document's text never "
                f"carries it as a token (it is encoded as plain text, so each document ends in the one EOD the "
                f"export appends); leave it out: set {setting(key, header.replace(EOD_TEXT, ''))}"
            )
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
                    f"set {setting(key, header.replace(marker, own[0]))}"
                )
            else:
                plain = f"# {what}: {{{field}}}\n"
                fix = (
                    f"the tokenizer has no {what} token: set mixture.{key} to plain text without special-token "
                    f"markers (e.g. {setting(key, plain)})"
                )
            raise ConfigError(
                f"{said}; {fix}, or set mixture.tokenizer (and ingest.tokenizer) to a tokenizer that has {marker}"
            )


def setting(key: str, header: str) -> str:
    """The override that sets ``mixture.<key>`` to ``header``, as a shell takes it: a YAML
    double-quoted value (``\\n`` for a line break) inside single quotes, so that neither the shell nor
    the override's YAML changes it.

    >>> print(setting("repo_header", "<repo_name>{repo}\\n"))
    'mixture.repo_header="<repo_name>{repo}\\n"'
    >>> import shlex; from curation.config import parse_override
    >>> parse_override(shlex.split(setting("file_header", "it's {path}\\n"))[0])
    (['mixture', 'file_header'], "it's {path}\\n")
    """
    return shlex.quote(f"mixture.{key}={json.dumps(header, ensure_ascii=False)}")
