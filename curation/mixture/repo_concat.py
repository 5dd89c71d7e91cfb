"""Repository-level code documents: files of one repository in dependency order, split at file boundaries.

The files come in :func:`curation.mixture.repo_deps.dependency_order` (README first, then each
file after the files it imports). They are joined with a repository header and a path header per
file (Qwen2.5-Coder's ``<|repo_name|>`` / ``<|file_sep|>`` by default) and cut at file boundaries
into documents of at most ``max_tokens`` tokens (a single larger file stays whole; packing cuts it).
A file without a path (``""``) gets an empty path header, never a made-up one.
"""

from __future__ import annotations

import dataclasses
import hashlib
import re
from collections import Counter
from collections.abc import Callable, Sequence

import numpy as np

from curation.mixture.repo_deps import dependency_order

TokenCounter = Callable[[list[str]], np.ndarray]

_OPENS_WITH_BREAK = re.compile(r"[^\S\r\n]*[\r\n]")


@dataclasses.dataclass(frozen=True)
class RepoHeaders:
    """Header strings; ``{repo}`` and ``{path}`` are filled in."""

    repo: str = "<|repo_name|>{repo}\n"
    file: str = "<|file_sep|>{path}\n"


@dataclasses.dataclass
class BuiltDoc:
    """A document built from several inputs (a repository slice, an issue thread)."""

    doc_id: str
    text: str
    n_tokens: int
    repo: str | None
    members: list[str]


def built_id(kind: str, repo: str, k: int) -> str:
    """Stable id of the k-th document built from ``repo``."""
    return f"{kind}-{hashlib.sha1(repo.encode()).hexdigest()[:16]}-{k:04d}"


def concat_repo(
    repo: str,
    paths: Sequence[str],
    texts: Sequence[str],
    n_tokens: Sequence[int],
    doc_ids: Sequence[str],
    *,
    max_tokens: int,
    count: TokenCounter,
    headers: RepoHeaders = RepoHeaders(),
) -> list[BuiltDoc]:
    """The repository's files in :func:`dependency_order`, cut at file boundaries into ≤ ``max_tokens``.

    ``n_tokens`` is counted without re-tokenizing the files: each default header starts with a
    special token, which the tokenizer never merges across, and ends with a line break, so a
    document's count is the sum of its headers' and files' counts — except where a file opens with
    a line break, which would merge with the header's; those few blocks are counted whole. Headers
    of the recipe's own (``mixture.repo_header`` / ``file_header``) promise neither, so their
    documents are counted whole once built (a header without its line break merged its path with the
    file's first word: 39 tokens fewer than the shard recorded in a 6,956-token document).
    """
    keys = unique_paths(paths)
    pos = {p: i for i, p in enumerate(keys)}
    order = [pos[p] for p in dependency_order(keys, list(texts))]
    repo_head = headers.repo.format(repo=repo)
    file_heads = [headers.file.format(path=keys[i] if paths[i] else "") for i in order]
    joint = [j for j, i in enumerate(order) if _OPENS_WITH_BREAK.match(texts[i])]
    counts = count([repo_head, *file_heads, *(file_heads[j] + texts[order[j]] for j in joint)])
    repo_tokens = int(counts[0])
    costs = [int(counts[1 + j]) + int(n_tokens[i]) for j, i in enumerate(order)]
    for k, j in enumerate(joint):
        costs[j] = int(counts[1 + len(order) + k])
    docs: list[BuiltDoc] = []
    parts: list[str] = []
    members: list[str] = []
    total = repo_tokens

    def emit() -> None:
        docs.append(BuiltDoc(built_id("repo", repo, len(docs)), repo_head + "".join(parts), total, repo, list(members)))

    for j, i in enumerate(order):
        if members and total + costs[j] > max_tokens:
            emit()
            parts, members, total = [], [], repo_tokens
        parts.append(file_heads[j] + texts[i])
        members.append(doc_ids[i])
        total += costs[j]
    if members:
        emit()
    return docs if headers == RepoHeaders() else recount(docs, count)


def unique_paths(paths: Sequence[str]) -> list[str]:
    """One key per file for the dependency order: a path's second file is ``path~2`` (its header
    too); files without a path (``""``) get keys ``""``, ``~2`` … and keep their empty header.

    >>> unique_paths(["a.py", "a.py", "", ""])
    ['a.py', 'a.py~2', '', '~2']
    """
    seen: Counter[str] = Counter()
    out = []
    for p in paths:
        seen[p] += 1
        out.append(p if seen[p] == 1 else f"{p}~{seen[p]}")
    return out


def recount(docs: list[BuiltDoc], count: TokenCounter) -> list[BuiltDoc]:
    """Exact token counts of the built texts (the split used the sum of the parts, which BPE merges
    across a boundary can shift by a token or two)."""
    if docs:
        for d, n in zip(docs, count([d.text for d in docs]), strict=True):
            d.n_tokens = int(n)
    return docs
