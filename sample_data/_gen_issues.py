"""``issues_prs_commits/issues_prs_commits.jsonl``: issues, pull requests and commits of the sample
repositories. Related items link up: each task of ``_tasks`` gives an issue, the PR that fixes it
(``meta.fixes``) and that PR's commits (``meta.pull_request``, chained by ``meta.parent``) whose
``meta.files`` hold unified diffs against the files in ``code.jsonl.gz``. Standalone issues, PRs
and direct commits fill in the rest, and nine records the recipe's ``forge_filter`` drops
(:func:`filtered_records`: bot authors, template-only and empty issues, merge and lockfile-only
commits, a link-only issue).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import random

from _common import GITHUB_USERS, rng_for
from _gen_code import repo_files
from _tasks import TASKS, apply, diff

EXTRA_ISSUES = [
    ("acme-labs/pyinventory", "Export products as JSON", "It would help our storefront sync if `list-products` could print JSON (`--format json`).", "open"),
    ("acme-labs/pyinventory", "SqliteStore is slow for bulk imports", "Importing data/products.csv row by row takes minutes. Could `insert` accept many rows in one transaction?", "open"),
    ("acme-labs/mlkit", "Add a random forest?", "Would a small random forest built on DecisionTreeClassifier fit the scope of this project?", "closed"),
    ("acme-labs/mlkit", "Question: how do I scale features for k-means?", "I get very different clusters depending on the units of my columns. What is the recommended way?", "closed"),
    ("northwind/webdash", "Dark theme colours are unreadable in the Heatmap widget", "With `theme: dark` the lowest bucket is almost black on black.", "open"),
    ("northwind/webdash", "Remove legacy/dashboard-old.js", "The old admin page was retired last quarter; the legacy dashboard can go.", "open"),
    ("gopher-co/gosvc", "Graceful shutdown on SIGTERM", "Kubernetes sends SIGTERM and the server drops in-flight requests. We should use `http.Server.Shutdown`.", "open"),
    ("gopher-co/gosvc", "Regenerate protobuf files with protoc-gen-go v1.34", "The generated code header says v1.34.1 but CI uses v1.33; please align.", "closed"),
    ("ferrous/rustkv", "Support MGET", "Fetching many keys costs one round trip each. `MGET k1 k2 ...` would help.", "open"),
    ("ferrous/rustkv", "Persist data across restarts", "Is an append-only file planned? Right now a restart loses everything.", "open"),
    ("pixelworks/cimg", "Gaussian blur", "Box blur leaves visible artefacts on gradients. A separable Gaussian kernel would look better.", "open"),
    ("pixelworks/geom", "convex_hull with duplicate points", "Does `convex_hull` handle repeated input points? The docs do not say.", "closed"),
    ("acme-labs/ledger", "Support multiple currencies in TransferService", "Transfers between EUR and USD accounts currently throw. Could we pass an exchange rate?", "open"),
    ("acme-labs/shtools", "healthcheck.sh: configurable timeout", "Some internal services take more than 10 s to answer; the timeout in `http_status` should be an option.", "open"),
    ("acme-labs/handbook", "Travel page: add per-diem rates", "People keep asking what the daily allowance is for each country.", "closed"),
]
COMMENTS = ["Thanks for the report, I can reproduce this.", "Good idea; a PR would be welcome.",
            "Closing as answered; feel free to reopen.", "I ran into this too on the latest main.",
            "This is on the roadmap for the next minor release.", "Could you share the exact command you ran?"]

# (repo, path, old, new, message): small real edits used for standalone PRs and direct commits
SMALL_EDITS = [
    ("acme-labs/pyinventory", "pyproject.toml", 'version = "0.4.1"', 'version = "0.4.2"', "Release 0.4.2"),
    ("northwind/webdash", "package.json", '"version": "1.3.0"', '"version": "1.3.1"', "chore: release 1.3.1"),
    ("ferrous/rustkv", "Cargo.toml", 'version = "0.3.0"', 'version = "0.3.1"', "Bump version to 0.3.1"),
    ("acme-labs/ledger", "pom.xml", "<version>1.4.2</version>", "<version>1.4.3</version>", "[release] 1.4.3"),
    ("acme-labs/mlkit", "setup.cfg", "version = 0.2.0", "version = 0.2.1", "release: 0.2.1"),
    ("gopher-co/gosvc", "go.mod", "google.golang.org/grpc v1.63.2", "google.golang.org/grpc v1.64.0", "deps: bump grpc to v1.64.0"),
    ("acme-labs/pyinventory", ".github/workflows/ci.yml", "python-version: '3.11'", "python-version: '3.12'", "ci: test on Python 3.12"),
    ("pixelworks/cimg", "Makefile", "-O2 -Wall -Wextra", "-O2 -Wall -Wextra -Wpedantic", "build: enable -Wpedantic"),
    ("acme-labs/shtools", "Makefile", "shellcheck bin/*.sh lib/*.sh install.sh", "shellcheck -x bin/*.sh lib/*.sh install.sh", "lint: follow sourced files"),
    ("pixelworks/geom", "README.md", "simple shapes.", "simple shapes (circle, rectangle, ellipse, triangle, hexagon).", "docs: list the shapes in the README"),
    ("acme-labs/mlkit", "README.md", "do not copy from them.", "do not copy from them; they predate the `mlkit.models` API.", "docs: explain why scripts/ is frozen"),
    ("northwind/webdash", "README.md", "do not edit it by hand.", "do not edit it by hand; run `npm run build` instead.", "docs: how to rebuild the bundle"),
    ("acme-labs/handbook", "docs/style-guide.md", "- One idea per paragraph.", "- One idea per paragraph.\n- Prefer lists for steps.", "style guide: prefer lists for steps"),
    ("acme-labs/ledger", "src/main/resources/application.properties", "ledger.overdraft.allowed=false", "ledger.overdraft.allowed=false\nledger.audit.enabled=true", "config: enable audit log by default"),
    ("ferrous/rustkv", "README.md", "a Bloom filter for fast negative lookups.", "a Bloom filter for fast negative lookups. Not for production use.", "README: add a warning"),
    ("gopher-co/gosvc", "Dockerfile", "FROM golang:1.22 AS build", "FROM golang:1.22.3 AS build", "docker: pin Go patch version"),
    ("acme-labs/pyinventory", "README.md", "## Tests\n", "## Tests\n\nThe CI runs on every push and pull request.\n", "docs: mention CI"),
    ("acme-labs/shtools", ".shellcheckrc", "external-sources=true", "external-sources=true\nenable=require-variable-braces", "shellcheck: require braces"),
]


TEMPLATE_BODY = """**Describe the bug**
A clear and concise description of what the bug is.

**To Reproduce**
Steps to reproduce the behavior:
1. Go to '...'
2. Click on '....'
3. Scroll down to '....'
4. See error

**Expected behavior**
A clear and concise description of what you expected to happen.

**Additional context**
Add any other context about the problem here."""
LOCK_BEFORE = '{\n  "name": "webdash",\n  "lockfileVersion": 3,\n  "packages": {\n    "node_modules/chart.js": {\n      "version": "4.4.0",\n      "integrity": "sha512-AAAA"\n    }\n  }\n}\n'


def filtered_records(rng: random.Random, clocks: dict, next_number) -> list[dict]:  # noqa: ANN001 - the caller's closure
    """Records the recipe's ``forge_filter`` drops: bot authors, empty or template-only threads,
    merge and lockfile-only commits, and a link-only issue (low score)."""
    out: list[dict] = []
    repo, clock = "acme-labs/pyinventory", clocks["acme-labs/pyinventory"]
    lock = ('[[package]]\nname = "requests"\nversion = "2.31.0"\n', '[[package]]\nname = "requests"\nversion = "2.32.0"\n')
    pr = next_number(repo)
    bump = commit_record(repo, sha(repo, "dependabot"), "Bump requests from 2.31.0 to 2.32.0", "dependabot[bot]", clock.tick(), {"poetry.lock": lock}, pr)
    out.append(bump)
    body = ("Bumps [requests](https://github.com/psf/requests) from 2.31.0 to 2.32.0.\n\nDependabot will resolve any conflicts "
            "with this PR as long as you don't alter it yourself. You can also trigger a rebase manually by commenting `@dependabot rebase`.")
    out.append({"source": "issues_prs_commits", "repo": repo, "text": f"# Bump requests from 2.31.0 to 2.32.0 (#{pr})\n\n{body}",
                "meta": {"kind": "pull_request", "number": pr, "title": "Bump requests from 2.31.0 to 2.32.0", "author": "dependabot[bot]",
                         "created_at": clock.tick(0, 1), "merged": False, "commits": [bump["meta"]["sha"]]}})
    repo, clock = "northwind/webdash", clocks["northwind/webdash"]
    dash = ("This issue lists Renovate updates and detected dependencies.\n\n## Open\n\n"
            "- [ ] <!-- rebase-branch=renovate/chart.js-4.x -->Update dependency chart.js to v4.4.1\n- [ ] <!-- rebase-all-open-prs -->Click to rebase all open PRs")
    out.append(issue_record(rng, repo, next_number(repo), "Dependency Dashboard", dash, "renovate[bot]", clock.tick(), "open", clock))
    lock_after = LOCK_BEFORE.replace("4.4.0", "4.4.1").replace("AAAA", "BBBB")
    out.append(commit_record(repo, sha(repo, "lock"), "Update package-lock.json", rng.choice(GITHUB_USERS), clock.tick(),
                             {"package-lock.json": (LOCK_BEFORE, lock_after)}, None))
    repo, clock = "gopher-co/gosvc", clocks["gopher-co/gosvc"]
    out.append(bare_issue(repo, next_number(repo), "Bug", TEMPLATE_BODY, rng.choice(GITHUB_USERS), clock.tick()))
    out.append(commit_record(repo, sha(repo, "badge"), "Update coverage badge", "github-actions[bot]", clock.tick(),
                             {".github/badges/coverage.json": ('{"coverage": "81%"}\n', '{"coverage": "83%"}\n')}, None))
    repo, clock = "ferrous/rustkv", clocks["ferrous/rustkv"]
    out.append(bare_issue(repo, next_number(repo), "crash", "", rng.choice(GITHUB_USERS), clock.tick()))
    out.append(commit_record(repo, sha(repo, "merge"), "Merge branch 'main' into feature/mget", rng.choice(GITHUB_USERS), clock.tick(),
                             {"CHANGELOG.md": ("## 0.3.1\n", "## 0.3.1\n\n- MGET (work in progress)\n")}, None))
    repo, clock = "acme-labs/handbook", clocks["acme-labs/handbook"]
    spam = "Best deals https://deals.example/a https://deals.example/b https://deals.example/c https://deals.example/d"
    out.append(bare_issue(repo, next_number(repo), "Great handbook", spam, rng.choice(GITHUB_USERS), clock.tick()))
    return out


def bare_issue(repo: str, number: int, title: str, body: str, author: str, when: str) -> dict:
    """An issue nobody answered."""
    text = f"# {title}\n\n{repo}#{number} opened by @{author} on {when}" + (f"\n\n{body}" if body else "")
    return {"source": "issues_prs_commits", "repo": repo, "text": text,
            "meta": {"kind": "issue", "number": number, "title": title, "author": author, "created_at": when, "state": "open"}}


class Clock:
    """Monotonic fake timestamps per repository."""

    def __init__(self, rng: random.Random) -> None:
        self.rng, self.now = rng, dt.datetime(2023, 3, 1, 9, 0, 0)

    def tick(self, lo_h: int = 2, hi_h: int = 96) -> str:
        self.now += dt.timedelta(hours=self.rng.randint(lo_h, hi_h), minutes=self.rng.randint(0, 59))
        return self.now.strftime("%Y-%m-%dT%H:%M:%SZ")


def sha(*parts: str) -> str:
    return hashlib.sha1("\x00".join(parts).encode()).hexdigest()


def commit_record(repo: str, parent: str, message: str, author: str, when: str, changes: dict, pr: int | None) -> dict:
    files = [{"path": p, "diff": diff(p, before, after)} for p, (before, after) in changes.items()]
    digest = sha(repo, parent, message, *[f["diff"] for f in files])
    body = "\n".join(f"    {line}" if line else "" for line in message.splitlines())
    text = (f"commit {digest}\nAuthor: {author} <{author}@users.noreply.github.com>\nDate:   {when}\n\n{body}\n\n"
            + "".join(f"diff --git a/{f['path']} b/{f['path']}\n{f['diff']}" for f in files))
    meta = {"kind": "commit", "sha": digest, "title": message.splitlines()[0], "author": author, "created_at": when,
            "message": message, "files": files, "parent": parent}
    if pr is not None:
        meta["pull_request"] = pr
    return {"source": "issues_prs_commits", "repo": repo, "text": text, "meta": meta}


def issue_record(rng: random.Random, repo: str, number: int, title: str, body: str, author: str, when: str,
                 state: str, clock: Clock) -> dict:
    thread = [f"# {title}\n\n{repo}#{number} opened by @{author} on {when}\n\n{body}"]
    for _ in range(rng.randint(0, 3)):
        thread.append(f"@{rng.choice(GITHUB_USERS)} commented on {clock.tick(1, 30)}:\n\n{rng.choice(COMMENTS)}")
    return {"source": "issues_prs_commits", "repo": repo, "text": "\n\n---\n\n".join(thread),
            "meta": {"kind": "issue", "number": number, "title": title, "author": author, "created_at": when, "state": state}}


def pr_record(rng: random.Random, repo: str, number: int, title: str, description: str, author: str, when: str,
              fixes: int | None, shas: list[str], clock: Clock) -> dict:
    reviewer = rng.choice([u for u in GITHUB_USERS if u != author])
    text = (f"# {title} (#{number})\n\n@{author} wants to merge {len(shas)} commit{'s' if len(shas) > 1 else ''} into main\n\n"
            f"{description}" + (f"\n\nFixes #{fixes}" if fixes else "")
            + f"\n\n---\n\nReview by @{reviewer} on {clock.tick(1, 20)}: "
            + rng.choice(["Looks good, thanks!", "LGTM after the test passes in CI.", "Nice and small. Approved.",
                          "One nit inline, otherwise approved."])
            + f"\n\n---\n\nMerged by @{reviewer} on {clock.tick(1, 10)}")
    meta = {"kind": "pull_request", "number": number, "title": title, "author": author, "created_at": when,
            "merged": True, "commits": shas}
    if fixes:
        meta["fixes"] = fixes
    return {"source": "issues_prs_commits", "repo": repo, "text": text, "meta": meta}


def generate(seed: int) -> list[dict]:
    rng = rng_for(seed, "issues")
    repos = {r: dict(f) for r, f in repo_files(seed).items()}
    clocks = {r: Clock(rng) for r in repos}
    heads = {r: sha(r, "initial import") for r in repos}
    numbers = {r: 60 for r in repos}
    items: list[dict] = []

    def next_number(repo: str) -> int:
        numbers[repo] += rng.randint(1, 4)
        return numbers[repo]

    for task in TASKS:
        repo, clock = task["repo"], clocks[task["repo"]]
        reporter, fixer = rng.sample(GITHUB_USERS, 2)
        items.append(issue_record(rng, repo, task["number"], task["title"], task["body"], reporter, clock.tick(), "closed", clock))
        changed = apply(task, repos[repo])
        repos[repo].update({p: after for p, (_, after) in changed.items()})  # later diffs build on this commit
        test_path = task["test"][0]
        fix = {p: v for p, v in changed.items() if p != test_path}
        pr = next_number(repo)
        split = rng.random() < 0.6
        commits = ([(f"Add regression test for #{task['number']}", {test_path: changed[test_path]}),
                    (f"Fix: {task['title']}\n\nFixes #{task['number']}.", fix)] if split else
                   [(f"Fix #{task['number']}: {task['title']}\n\nIncludes a regression test.", changed)])
        shas = []
        for message, files in commits:
            rec = commit_record(repo, heads[repo], message, fixer, clock.tick(1, 8), files, pr)
            heads[repo] = rec["meta"]["sha"]
            shas.append(heads[repo])
            items.append(rec)
        desc = (f"This fixes the problem reported in #{task['number']}. The change is in "
                + ", ".join(f"`{p}`" for p in fix) + f", with a regression test in `{test_path}`.")
        items.append(pr_record(rng, repo, pr, f"Fix: {task['title']}", desc, fixer, clock.tick(0, 3), task["number"], shas, clock))
    for repo, title, body, state in EXTRA_ISSUES:
        items.append(issue_record(rng, repo, next_number(repo), title, body, rng.choice(GITHUB_USERS), clocks[repo].tick(), state, clocks[repo]))
    for i, (repo, path, old, new, message) in enumerate(SMALL_EDITS):
        before = repos[repo][path]
        if before.count(old) != 1:
            raise ValueError(f"{repo}:{path}: anchor {old!r} found {before.count(old)} times")
        after = before.replace(old, new)
        repos[repo][path] = after
        clock, author = clocks[repo], rng.choice(GITHUB_USERS)
        as_pr = i % 2 == 0
        pr = next_number(repo) if as_pr else None
        rec = commit_record(repo, heads[repo], message, author, clock.tick(), {path: (before, after)}, pr)
        heads[repo] = rec["meta"]["sha"]
        items.append(rec)
        if as_pr:
            items.append(pr_record(rng, repo, pr, message, f"Small change to `{path}`.", author, clock.tick(0, 2), None, [heads[repo]], clock))
    items += filtered_records(rng, clocks, next_number)
    items.sort(key=lambda r: (r["repo"], r["meta"]["created_at"]))
    return [{"id": f"ipc-{n + 1:04d}", **rec} for n, rec in enumerate(items)]
