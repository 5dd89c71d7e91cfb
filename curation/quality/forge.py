"""Rules and a score for issue, pull-request and commit records (``issues_prs_commits``).

GLM-4.5 model-filters the issues, pull requests and commits it trains on. What is filtered here,
first rule that fires wins:

- ``bot_author``: the record's author is a bot (a ``[bot]`` suffix, a ``-bot``/``bot-`` name or
  one of :data:`BOT_AUTHORS`: dependabot, renovate, github-actions, …);
- ``auto_generated``: a merge commit (``Merge pull request #N …``, ``Merge branch '…'``, two
  parents), a commit or PR whose changed files are all lockfiles (``package-lock.json``,
  ``Cargo.lock``, ``go.sum`` …), or a version bump: a bump/release title whose diff changes
  version strings only (or a PR titled ``Bump x from a to b``);
- ``empty_thread``: an issue or PR with fewer than ``min_words`` words once its title, the
  thread's header lines (``opened by``, ``commented on``, ``Merged by``) and template material
  (HTML comments, headings, check-box lines, labels left blank, placeholders, the stock sentences
  of GitHub's issue templates) are taken out; a commit without a diff;
- ``low_forge_score``: :func:`forge_score` below the stage's ``min_score``.

The score is no learned model: a logistic of five hand-set weights on features one can read
(:data:`WEIGHTS`), so each ledger row says why. Checked on the labelled records of
``sample_data/_gen_issues.py`` (synthetic) and on hand-written cases in the tests; no real
issue, PR or commit data was available to fit or check it against.

>>> forge_flags({"kind": "pull_request", "author": "dependabot[bot]", "title": "Bump x"}, "")
('bot_author', 'author dependabot[bot]')
>>> forge_flags({"kind": "commit", "message": "Merge branch 'main' into dev"}, "commit 1\\n")[0]
'auto_generated'
"""

from __future__ import annotations

import math
import re
from typing import Any

#: Lower-cased names of well-known bot accounts (GitHub Apps show as ``name[bot]``, caught anyway).
BOT_AUTHORS = (
    "dependabot", "dependabot-preview", "renovate", "renovate-bot", "github-actions", "greenkeeper",
    "snyk-bot", "codecov", "codecov-io", "mergify", "pre-commit-ci", "allcontributors", "imgbot",
    "stale", "depfu", "whitesource-bolt-for-github", "netlify", "vercel", "sonarcloud", "coveralls",
    "deepsource-autofix", "semantic-release-bot", "k8s-ci-robot", "bors", "copybara-service",
)
LOCKFILES = (
    "package-lock.json", "yarn.lock", "pnpm-lock.yaml", "npm-shrinkwrap.json", "cargo.lock", "go.sum",
    "poetry.lock", "pipfile.lock", "composer.lock", "gemfile.lock", "uv.lock", "pdm.lock", "mix.lock",
    "podfile.lock", "packages.lock.json", "flake.lock",
)
#: Stock sentences of GitHub's default issue and PR templates (lower-cased, punctuation kept).
TEMPLATE_LINES = (
    "a clear and concise description of what the bug is.", "steps to reproduce the behavior:",
    "a clear and concise description of what you expected to happen.",
    "if applicable, add screenshots to help explain your problem.", "add any other context about the problem here.",
    "is your feature request related to a problem? please describe.", "describe the solution you'd like",
    "a clear and concise description of what you want to happen.", "describe alternatives you've considered",
    "add any other context or screenshots about the feature request here.", "please describe the changes.",
    "describe the bug", "to reproduce", "expected behavior", "expected behaviour", "screenshots", "additional context",
    "1. go to '...'", "2. click on '....'", "3. scroll down to '....'", "4. see error",
)
#: The score's weights: ``sigmoid(bias + Σ weight · feature)``; features in :func:`forge_features`.
WEIGHTS = {"bias": -1.5, "log_words": 0.9, "participants": 0.5, "has_code": 1.0, "unfilled_template": -3.0, "url_frac": -8.0}
#: Words people wrote from which a thread's leftover template lines cost its score nothing (below, in proportion).
FILLED_WORDS = 20

_BOT_NAME = re.compile(r"(\[bot\]$|-bot$|^bot-|-robot$)")
_MERGE = re.compile(r"^merge (pull request #\d+|branch '|branches '|remote-tracking branch '|tag '|commit '|[0-9a-f]{7,40} into )", re.I)
_BUMP = re.compile(r"\b(bumps?|bumped|release[ds]?|prepare release)\b|\bversion (bump|to)\b|^v?\d+\.\d+(\.\d+)?$", re.I)
_DEP_PR = re.compile(r"^(chore(\(deps[^)]*\))?:\s*)?(bump|update) \S+ (from|requirement from) \S+ to \S+", re.I)
_VERSION = re.compile(r"\d+\.\d+(\.\d+)?")
_HEADER = re.compile(r"^(\S+#\d+ opened by @|@\S+ commented on |@\S+ wants to merge |merged by @|review by @|closed by @|commit [0-9a-f]{7,40}$|author: |date: )", re.I)
_COMMENT = re.compile(r"<!--.*?-->", re.S)
_CHECKBOX = re.compile(r"^\s*[-*] \[[ xX]\]\s*")
_LABEL = re.compile(r"^[-*]?\s*[\w .()/&-]{1,40}:$")  # "- Python version:" left blank
_PLACEHOLDER = re.compile(r"^<[^>]{1,40}>$")  # "<paste here>"
_DIFF_PATH = re.compile(r"^diff --git a/(\S+) b/", re.M)
_WORD = re.compile(r"\w+")
_URL = re.compile(r"https?://\S+")
_MENTION = re.compile(r"(?:^|\n)@([\w-]+(?:\[bot\])?) (?:commented|wants to merge)|(?:review|merged) by @([\w-]+(?:\[bot\])?)", re.I)


def is_bot(name: str | None, bots: tuple[str, ...] = BOT_AUTHORS) -> bool:
    """``dependabot[bot]``, ``renovate``, ``ci-bot`` → True; ``rbotha`` → False."""
    n = str(name or "").strip().lower().lstrip("@")
    return bool(n) and (n in bots or n.removesuffix("[bot]") in bots or bool(_BOT_NAME.search(n)))


def changed_files(meta: dict[str, Any], text: str) -> list[str]:
    """Paths a commit or PR changes: ``meta.files`` (``[{path, …}]`` or names), else ``diff --git`` lines."""
    files = meta.get("files")
    if isinstance(files, list) and files:
        return [str(f.get("path", "")) if isinstance(f, dict) else str(f) for f in files]
    return _DIFF_PATH.findall(text or "")


def diff_lines(meta: dict[str, Any], text: str) -> list[str]:
    """The added and removed lines of the record's diff (without ``+++``/``---`` headers)."""
    files = meta.get("files")
    if isinstance(files, list) and files and all(isinstance(f, dict) for f in files):
        body = "\n".join(str(f.get("diff", "")) for f in files)
    elif "\ndiff --git " in (text or "") or "\n@@ " in (text or ""):
        body = text
    else:
        return []  # a thread's "- [ ]" lists are no diff
    return [ln[1:] for ln in body.splitlines() if ln[:1] in ("+", "-") and not ln.startswith(("+++", "---"))]


def content_lines(text: str, title: str) -> tuple[list[str], int]:
    """``(lines people wrote, boilerplate line count)``: the thread without its title, header
    lines, separators, HTML comments and headings; check-box lines, labels left blank
    (``- Python version:``), placeholders (``<paste here>``) and the stock template sentences
    count as boilerplate."""
    kept, boiler = [], 0
    for raw in _COMMENT.sub("\n", text or "").splitlines():
        line = raw.strip()
        if not line or line == "---":
            continue
        low = line.lower()
        bare = _CHECKBOX.sub("", line).strip("*_ ").lower()
        if (line.startswith("#") and (not title or title.lower() in low or len(_WORD.findall(line)) <= 6)) or _HEADER.match(line):
            continue  # the title line and section headings say nothing of their own
        if bare in TEMPLATE_LINES or low in TEMPLATE_LINES or _CHECKBOX.match(line) or _LABEL.match(line) or _PLACEHOLDER.match(line):
            boiler += 1
            continue
        kept.append(line)
    return kept, boiler


def forge_flags(meta: dict[str, Any], text: str, bots: tuple[str, ...] = BOT_AUTHORS, min_words: int = 3) -> tuple[str | None, str | None]:
    """``(reason, evidence)`` of the first rule that fires (module docstring), or ``(None, None)``."""
    kind = str(meta.get("kind") or "issue")
    author = _login(meta.get("author") or meta.get("user")) or _author_line(text)
    if is_bot(author, bots):
        return "bot_author", f"author {author}"
    title = str(meta.get("title") or meta.get("message") or "").strip()
    first = title.splitlines()[0] if title else ""
    if kind == "commit" and (_MERGE.match(first) or len(meta.get("parents") or []) > 1):
        return "auto_generated", "merge commit"
    if kind == "pull_request" and _DEP_PR.match(first):
        return "auto_generated", "dependency bump pull request"
    files = changed_files(meta, text)
    if files and all(f.rsplit("/", 1)[-1].lower() in LOCKFILES for f in files):
        return "auto_generated", "lockfile-only change"
    changed = [ln for ln in diff_lines(meta, text) if ln.strip()]
    if _BUMP.search(first) and changed and all(_VERSION.search(ln) for ln in changed):
        return "auto_generated", "version bump"
    if kind == "commit":
        return (None, None) if changed or files else ("empty_thread", "commit without a diff")
    lines, _ = content_lines(text, first)
    words = sum(len(_WORD.findall(ln)) for ln in lines if not _MENTION.search("\n" + ln))
    if words < min_words:
        return "empty_thread", f"{words} words besides title and template"
    return None, None


def forge_features(meta: dict[str, Any], text: str) -> dict[str, float]:
    """The score's inputs: words people wrote, distinct human participants, code or diff present,
    unfilled template, share of URL words.

    ``unfilled_template`` judges what people wrote, not the template they wrote it in: the share of
    template lines (:func:`content_lines`) times ``1 − words / FILLED_WORDS`` (0 from 20 words on).
    A template with a real description keeps its score; one with a label or two filled in
    (``- OS: Linux``) loses it."""
    title = str(meta.get("title") or meta.get("message") or "").strip()
    lines, boiler = content_lines(text, title.splitlines()[0] if title else "")
    words = sum(len(_WORD.findall(ln)) for ln in lines)
    unfilled = max(0.0, 1.0 - words / FILLED_WORDS) * boiler / max(boiler + len(lines), 1)
    people = {a or b for a, b in _MENTION.findall(text or "")} | {_login(meta.get("author") or meta.get("user")) or ""}
    people = {p.lower() for p in people if p and not is_bot(p)}
    tokens = (text or "").split()
    return {
        "log_words": math.log1p(words),
        "participants": float(min(len(people), 3)),
        "has_code": float("```" in (text or "") or bool(diff_lines(meta, text))),
        "unfilled_template": unfilled,
        "url_frac": len(_URL.findall(text or "")) / max(len(tokens), 1),
    }


def forge_terms(features: dict[str, float]) -> dict[str, float]:
    """Each feature's contribution ``weight · value`` to the score's logit, and the bias: what a
    ``low_forge_score`` ledger row shows.

    >>> forge_terms({"log_words": 0.0, "participants": 1.0, "has_code": 0.0, "unfilled_template": 0.5, "url_frac": 0.0})
    {'bias': -1.5, 'log_words': 0.0, 'participants': 0.5, 'has_code': 0.0, 'unfilled_template': -1.5, 'url_frac': 0.0}
    """
    return {"bias": WEIGHTS["bias"], **{k: WEIGHTS[k] * v + 0.0 for k, v in features.items()}}  # + 0.0: no -0.0


def forge_score(features: dict[str, float]) -> float:
    """``sigmoid(bias + Σ weight · feature)`` with :data:`WEIGHTS`, in [0, 1]."""
    return 1.0 / (1.0 + math.exp(-sum(forge_terms(features).values())))


def _login(value: Any) -> str | None:
    """An author as a name: a string, or the ``login``/``name`` of a GitHub API user object."""
    if isinstance(value, dict):
        value = value.get("login") or value.get("name")
    return str(value) if value else None


def _author_line(text: str) -> str | None:
    m = re.search(r"^Author: ([^<\n]+?)\s*(<|$)", text or "", re.M)
    return m.group(1) if m else None
