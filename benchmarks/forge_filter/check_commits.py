"""forge_filter's rules and score on the real commit history and issue templates of public repositories.

    python benchmarks/forge_filter/check_commits.py GIT_DIR [GIT_DIR …] [--commits 3000]

Each GIT_DIR is a clone (or bare mirror) of a public repository. Its last ``--commits`` commits
become ``issues_prs_commits`` records the way the sample's are written (``git show``-style text,
``meta.author``/``message``/``files``; ``parents`` withheld, so a merge must be recognised from
its message), and :func:`curation.quality.forge.forge_flags` / ``forge_score`` judge them. The
labels come from git and GitHub, not from the rules' own patterns: **merge** = the commit has two
parents; **bot** = GitHub's ``[bot]`` account suffix. Human, non-merge commits have no label; what
the filter drops among them is listed by reason with examples, to read. Then each repository's
Markdown issue and pull-request templates (``.github/…TEMPLATE…md`` at HEAD), left unfilled under
a title, are judged as issues/PRs: an unfilled template should go. Last, the same templates and
GitHub's stock bug report are filled the way reporters fill them: the first ``k`` words of a real
commit message body (human, non-merge, ≥ 40 words) under the first heading or comment, the rest of
the template left as it is, and a copy with only the environment labels filled (``- Python
version: 3.12.3``): the share of each kept is printed (``--filled 20`` messages per repository).
"""

from __future__ import annotations

import argparse
import collections
import json
import re
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from curation.quality.forge import forge_features, forge_flags, forge_score  # noqa: E402

MAX_DIFF = 20_000


def commits(git_dir: str, n: int) -> list[dict]:
    fmt = "%x1e%x1f%x1e%H%x01%an%x01%P%x01%B%x02"
    out = subprocess.run(["git", f"--git-dir={git_dir}", "log", f"-n{n}", "-p", "--no-color", "--no-renames", f"--format={fmt}"],
                         capture_output=True, check=True).stdout.decode("utf-8", "replace")
    rows = []
    for chunk in out.split("\x1e\x1f\x1e")[1:]:
        head, _, patch = chunk.partition("\x02")
        sha, author, parents, message = head.split("\x01", 3)
        patch = patch.strip("\n")[:MAX_DIFF]
        files = []
        for part in patch.split("diff --git ")[1:]:
            path = part.split("\n", 1)[0].split(" b/")[-1]
            body = part.split("\n", 1)[1] if "\n" in part else ""
            diff = body[body.find("--- "):] if "--- " in body else ""
            files.append({"path": path, "diff": diff})
        message = message.strip()
        body = "\n".join(f"    {ln}" if ln else "" for ln in message.splitlines())
        text = f"commit {sha}\nAuthor: {author}\n\n{body}\n\n" + "".join(f"diff --git a/{f['path']} b/{f['path']}\n{f['diff']}" for f in files)
        meta = {"kind": "commit", "sha": sha, "title": message.splitlines()[0] if message else "", "author": author,
                "message": message, "files": files}
        rows.append({"meta": meta, "text": text, "merge": len(parents.split()) > 1, "bot": author.lower().endswith("[bot]")})
    return rows


#: GitHub's stock bug-report template (the one ``forge.TEMPLATE_LINES`` knows), as a reporter gets it.
STOCK_BUG_REPORT = """**Describe the bug**
A clear and concise description of what the bug is.

**To Reproduce**
Steps to reproduce the behavior:
1. Go to '...'
2. Click on '....'
3. Scroll down to '....'
4. See error

**Expected behavior**
A clear and concise description of what you expected to happen.

**Environment**
- OS:
- Python version:

**Additional context**
Add any other context about the problem here."""
WORDS = (3, 5, 10, 20, 40)


def template_files(git_dir: str) -> dict[str, str]:
    """``{path: body}`` of the repository's Markdown issue and PR templates at HEAD (front matter cut)."""
    names = subprocess.run(["git", f"--git-dir={git_dir}", "ls-tree", "-r", "--name-only", "HEAD"], capture_output=True, text=True, check=True).stdout
    out = {}
    for path in names.splitlines():
        if path.startswith(".github/") and "template" in path.lower() and path.endswith(".md"):
            body = subprocess.run(["git", f"--git-dir={git_dir}", "show", f"HEAD:{path}"], capture_output=True, text=True, check=True).stdout
            out[path] = body.split("---", 2)[-1].strip() if body.startswith("---") else body.strip()  # YAML front matter
    return out


def judge(path: str, body: str, min_score: float = 0.5) -> str | None:
    """The reason the filter gives a thread of ``body`` under a title, or None (kept)."""
    meta = {"kind": "pull_request" if "pull_request" in path.lower() else "issue", "title": "Title", "author": "someone"}
    text = f"# Title\n\norg/repo#1 opened by @someone on 2024-01-01\n\n{body}"
    reason, _ = forge_flags(meta, text)
    return "low_forge_score" if reason is None and forge_score(forge_features(meta, text)) < min_score else reason


def fill(body: str, words: str) -> str:
    """``body`` with ``words`` after its first heading or HTML comment (at the top without one)."""
    lines = body.splitlines()
    at = next((i + 1 for i, ln in enumerate(lines) if ln.lstrip().startswith(("#", "**")) or ln.rstrip().endswith("-->")), 0)
    return "\n".join([*lines[:at], words, *lines[at:]])


def filled(files: dict[str, str], rows: list[dict], n: int) -> dict[str, float]:
    """Share of threads kept: each template filled with the first k words of ``n`` real commit message
    bodies, and with its environment labels only."""
    bodies = [" ".join(r["meta"]["message"].split("\n", 1)[-1].split()) for r in rows if not r["merge"] and not r["bot"]]
    bodies = [b for b in bodies if len(b.split()) >= 40][:n]
    files = {**files, "stock bug report": STOCK_BUG_REPORT}
    out = {f"{k} words": sum(judge(p, fill(t, " ".join(b.split()[:k]))) is None for p, t in files.items() for b in bodies)
           / max(len(files) * len(bodies), 1) for k in WORDS}
    labels = {p: re.sub(r"(?m)^(\s*[-*] *(Python|OS|Flask|pydantic)[\w ]*:)\s*$", r"\1 3.12.3", t, flags=re.I) for p, t in files.items()}
    out["environment labels only"] = sum(judge(p, t) is None for p, t in labels.items() if t != files[p]) / max(sum(t != files[p] for p, t in labels.items()), 1)
    return {k: round(v, 3) for k, v in out.items()}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("git_dirs", nargs="+")
    ap.add_argument("--commits", type=int, default=3000)
    ap.add_argument("--min-score", type=float, default=0.5)
    ap.add_argument("--filled", type=int, default=20, help="real commit messages per repository to fill the templates with")
    a = ap.parse_args()
    report: dict = {}
    for git_dir in a.git_dirs:
        rows = commits(git_dir, a.commits)
        for r in rows:
            r["reason"], r["evidence"] = forge_flags(r["meta"], r["text"])
            r["score"] = forge_score(forge_features(r["meta"], r["text"]))
            if r["reason"] is None and r["score"] < a.min_score:
                r["reason"] = "low_forge_score"
        groups = {"bot": [r for r in rows if r["bot"]], "merge (human)": [r for r in rows if r["merge"] and not r["bot"]],
                  "human, not merge": [r for r in rows if not r["merge"] and not r["bot"]]}
        rep = {"commits": len(rows)}
        for name, g in groups.items():
            rep[name] = {"n": len(g), "dropped": sum(r["reason"] is not None for r in g),
                         "by_reason": dict(collections.Counter(r["reason"] for r in g if r["reason"]))}
        human = groups["human, not merge"]
        rep["human_dropped_examples"] = {reason: [r["meta"]["title"][:70] for r in human if r["reason"] == reason][:8]
                                         for reason in rep["human, not merge"]["by_reason"]}
        rep["merge_kept_examples"] = [r["meta"]["title"][:70] for r in groups["merge (human)"] if r["reason"] is None][:5]
        files = template_files(git_dir)
        rep["unfilled_templates"] = {p: judge(p, t, a.min_score) for p, t in files.items()}
        rep["filled_templates_kept"] = filled(files, rows, a.filled)
        report[git_dir] = rep
        print(json.dumps({git_dir: rep}, indent=1, ensure_ascii=False), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
