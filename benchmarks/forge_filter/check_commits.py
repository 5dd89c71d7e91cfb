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
a title, are judged as issues/PRs: an unfilled template should go.
"""

from __future__ import annotations

import argparse
import collections
import json
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


def templates(git_dir: str) -> dict[str, str | None]:
    """``{template path: reason or None}`` for the repository's unfilled Markdown templates."""
    names = subprocess.run(["git", f"--git-dir={git_dir}", "ls-tree", "-r", "--name-only", "HEAD"], capture_output=True, text=True, check=True).stdout
    out: dict[str, str | None] = {}
    for path in names.splitlines():
        if not (path.startswith(".github/") and "template" in path.lower() and path.endswith(".md")):
            continue
        body = subprocess.run(["git", f"--git-dir={git_dir}", "show", f"HEAD:{path}"], capture_output=True, text=True, check=True).stdout
        if body.startswith("---"):  # YAML front matter of an issue template
            body = body.split("---", 2)[-1]
        kind = "pull_request" if "pull_request" in path.lower() else "issue"
        meta = {"kind": kind, "title": "Title", "author": "someone"}
        text = f"# Title\n\norg/repo#1 opened by @someone on 2024-01-01\n\n{body.strip()}"
        reason, _ = forge_flags(meta, text)
        if reason is None and forge_score(forge_features(meta, text)) < 0.5:
            reason = "low_forge_score"
        out[path] = reason
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("git_dirs", nargs="+")
    ap.add_argument("--commits", type=int, default=3000)
    ap.add_argument("--min-score", type=float, default=0.5)
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
        rep["unfilled_templates"] = templates(git_dir)
        report[git_dir] = rep
        print(json.dumps({git_dir: rep}, indent=1, ensure_ascii=False), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
