"""Issues, pull requests and commits of one repository as one context, commits in a diff-like format.

Records come from ``issues_prs_commits`` documents: ``text`` plus ``meta`` with ``kind``
(issue | pull_request | commit), ``number``, ``title``, and for commits ``sha``, ``author``,
``date``, ``message`` and ``files`` (``[{path, diff}]``). Related records are put together: each
issue is followed by the pull requests that reference it (``#N`` in the title/body or a
``fixes``/``issue`` field), each pull request by its commits; the rest in number / date order.
The context is cut at record boundaries into documents of at most ``max_tokens``.

>>> rec = {"kind": "commit", "sha": "abc123", "author": "Ann", "date": "2024-01-02",
...        "message": "Fix parser", "files": [{"path": "p.py", "diff": "@@ -1 +1 @@\\n-a\\n+b"}]}
>>> print(format_commit(rec, ""))
commit abc123
Author: Ann
Date:   2024-01-02
<BLANKLINE>
    Fix parser
<BLANKLINE>
diff --git a/p.py b/p.py
--- a/p.py
+++ b/p.py
@@ -1 +1 @@
-a
+b
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from curation.mixture.repo_concat import BuiltDoc, TokenCounter, built_id, recount

_REF = re.compile(r"(?<![\w/])#(\d+)\b")
KIND_ALIASES = {"issue": "issue", "issues": "issue", "pull_request": "pull_request", "pr": "pull_request",
                "pull": "pull_request", "pull-request": "pull_request", "commit": "commit"}
SEPARATOR = "\n\n"


def parse_meta(meta: Any) -> dict[str, Any]:
    """``meta`` as a dict (JSON string, dict or null)."""
    if isinstance(meta, dict):
        return meta
    if isinstance(meta, str) and meta:
        try:
            value = json.loads(meta)
        except json.JSONDecodeError:
            return {}
        return value if isinstance(value, dict) else {}
    return {}


def record_kind(meta: dict[str, Any], text: str) -> str:
    kind = str(meta.get("kind") or meta.get("type") or "").lower()
    if kind in KIND_ALIASES:
        return KIND_ALIASES[kind]
    if meta.get("sha") or text.startswith("commit "):
        return "commit"
    return "issue"


def _ints(value: Any) -> list[int]:
    if value is None:
        return []
    values = value if isinstance(value, (list, tuple)) else [value]
    out = []
    for v in values:
        m = re.search(r"\d+", str(v))
        if m:
            out.append(int(m.group()))
    return out


def references(meta: dict[str, Any], text: str) -> list[int]:
    """Numbers this record points at: explicit fields first, then ``#N`` mentions."""
    refs: list[int] = []
    for key in ("pr", "pull_request", "pr_number", "fixes", "closes", "resolves", "issue", "issues", "linked_issues", "references", "refs"):
        refs += _ints(meta.get(key))
    body = " ".join(str(x) for x in (meta.get("title"), meta.get("message"), text) if x)
    refs += [int(n) for n in _REF.findall(body)]
    seen: set[int] = set()
    return [r for r in refs if not (r in seen or seen.add(r))]


def format_commit(meta: dict[str, Any], text: str) -> str:
    """A commit as ``git show`` prints it: header, indented message, one diff per file."""
    lines = [f"commit {meta.get('sha') or meta.get('hash') or ''}".rstrip()]
    if meta.get("author"):
        lines.append(f"Author: {meta['author']}")
    if meta.get("date"):
        lines.append(f"Date:   {meta['date']}")
    message = str(meta.get("message") or text or "").strip("\n")
    lines.append("")
    lines += [f"    {m}" if m else "" for m in message.split("\n")]
    for f in meta.get("files") or []:
        if not isinstance(f, dict):
            continue
        path = f.get("path") or f.get("filename") or f.get("file") or ""
        diff = str(f.get("diff") or f.get("patch") or "").strip("\n")
        lines += ["", f"diff --git a/{path} b/{path}"]
        if not diff.startswith("---"):
            lines += [f"--- a/{path}", f"+++ b/{path}"]
        if diff:
            lines.append(diff)
    return "\n".join(lines)


def format_record(kind: str, meta: dict[str, Any], text: str) -> str:
    """The record's text in the context: commits in diff form (when they carry files), others with a title line."""
    if kind == "commit":
        if text.startswith("commit ") and "diff --git" in text:
            return text
        return format_commit(meta, text) if (meta.get("files") or meta.get("sha")) else text
    title = meta.get("title")
    number = meta.get("number")
    label = "Issue" if kind == "issue" else "Pull request"
    head = f"{label} #{number}: {title}" if number is not None and title else None
    first_line = text.lstrip().split("\n", 1)[0]
    if head is None or str(title) in first_line:  # the text already opens with its title
        return text
    return f"{head}\n\n{text}"


def related_order(kinds: Sequence[str], numbers: Sequence[int | None], refs: Sequence[list[int]], dates: Sequence[str]) -> list[int]:
    """Indices ordered issue → its pull requests → their commits; the rest by number, then date.

    >>> related_order(["commit", "pull_request", "issue"], [None, 5, 3], [[5], [3], []], ["", "", ""])
    [2, 1, 0]
    """
    n = len(kinds)
    by_number = {num: i for i, num in enumerate(numbers) if num is not None and kinds[i] != "commit"}
    rank = {"issue": 0, "pull_request": 1, "commit": 2}
    parent: dict[int, int] = {}
    for i in range(n):
        cands = [by_number[r] for r in refs[i] if r in by_number and by_number[r] != i]
        cands = [c for c in cands if rank[kinds[c]] < rank[kinds[i]]]
        if cands:  # the closest kind above (a commit's pull request before its issue)
            parent[i] = max(cands, key=lambda c: (rank[kinds[c]], -cands.index(c)))
    children: dict[int, list[int]] = {}
    for i, p in parent.items():
        children.setdefault(p, []).append(i)

    def key(i: int) -> tuple:
        num = numbers[i]
        return (rank[kinds[i]], num if num is not None else 1 << 62, str(dates[i]), i)

    order: list[int] = []
    seen: set[int] = set()

    def visit(i: int) -> None:
        if i in seen:
            return
        seen.add(i)
        order.append(i)
        for c in sorted(children.get(i, []), key=key):
            visit(c)

    for i in sorted((i for i in range(n) if i not in parent), key=key):
        visit(i)
    for i in sorted(range(n), key=key):  # records only reachable through a cycle
        visit(i)
    return order


def concat_threads(
    repo: str,
    texts: Sequence[str],
    metas: Sequence[Any],
    n_tokens: Sequence[int],
    doc_ids: Sequence[str],
    *,
    max_tokens: int,
    count: TokenCounter,
    header: str = "<|repo_name|>{repo}\n",
) -> list[BuiltDoc]:
    """The repository's issues, pull requests and commits as contexts of at most ``max_tokens``."""
    parsed = [parse_meta(m) for m in metas]
    kinds = [record_kind(m, t) for m, t in zip(parsed, texts, strict=True)]
    numbers = [_ints(m.get("number"))[0] if _ints(m.get("number")) else None for m in parsed]
    refs = [references(m, t) for m, t in zip(parsed, texts, strict=True)]
    dates = [str(m.get("date") or m.get("created_at") or "") for m in parsed]
    order = related_order(kinds, numbers, refs, dates)
    blocks = [format_record(kinds[i], parsed[i], texts[i]) for i in order]
    changed = [j for j, i in enumerate(order) if blocks[j] != texts[i]]
    head = header.format(repo=repo)
    extra = count([head, SEPARATOR, *(blocks[j] for j in changed)])
    head_tokens, sep_tokens = int(extra[0]), int(extra[1])
    costs = [int(n_tokens[i]) for i in order]
    for k, j in enumerate(changed):
        costs[j] = int(extra[2 + k])
    docs: list[BuiltDoc] = []
    parts: list[str] = []
    members: list[str] = []
    total = head_tokens

    def emit() -> None:
        docs.append(BuiltDoc(built_id("threads", repo, len(docs)), head + SEPARATOR.join(parts), total, repo, list(members)))

    for j, i in enumerate(order):
        cost = costs[j] + (sep_tokens if parts else 0)
        if members and total + cost > max_tokens:
            emit()
            parts, members, total = [], [], head_tokens
            cost = costs[j]
        parts.append(blocks[j])
        members.append(doc_ids[i])
        total += cost
    if members:
        emit()
    return recount(docs, count)
