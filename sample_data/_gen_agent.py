"""``agent/agent.jsonl``: agent trajectories as text, with ``<|system|>``, ``<|user|>``,
``<|assistant|>`` and ``<|tool|>`` turns and ``<tool_call>{json}</tool_call>`` calls.

Kinds: ``code`` (fix an issue from ``_tasks`` in a sample repository: explore, read files, grep,
patch, run tests that fail then pass), ``data`` (Python run for real on pyinventory's CSV),
``research`` (search and fetch generated web pages, then summarise) and ``ops`` (shell diagnosis).
The long ones (10k-30k tokens) read many files or pages.
"""

from __future__ import annotations

import contextlib
import io
import json
import random
import re

from _common import CITIES, rng_for
from _gen_code import repo_files
from _tasks import TASKS, apply, diff
from _web_articles import article
from _web_banks import TOPICS

CODE_TOOLS = [
    {"name": "list_files", "description": "List files under a directory.", "parameters": {"path": "string"}},
    {"name": "read_file", "description": "Read a file with line numbers.", "parameters": {"path": "string"}},
    {"name": "grep", "description": "Search for a regular expression in the repository.", "parameters": {"pattern": "string"}},
    {"name": "apply_patch", "description": "Apply a unified diff.", "parameters": {"patch": "string"}},
    {"name": "run", "description": "Run a shell command in the repository root.", "parameters": {"command": "string"}},
]
TEST_COMMANDS = {"acme-labs/pyinventory": "python -m pytest -v", "acme-labs/mlkit": "python -m pytest -v",
                 "northwind/webdash": "npx jest", "gopher-co/gosvc": "go test ./...", "ferrous/rustkv": "cargo test",
                 "pixelworks/cimg": "make test", "pixelworks/geom": "cmake --build build && ctest --test-dir build",
                 "acme-labs/ledger": "mvn -q test", "acme-labs/shtools": "bats test/"}


def turn(role: str, content: str) -> str:
    return f"<|{role}|>\n{content.rstrip()}\n"


def call(name: str, **arguments) -> str:
    return f"<tool_call>{json.dumps({'name': name, 'arguments': arguments}, ensure_ascii=False)}</tool_call>"


def numbered(text: str) -> str:
    return "\n".join(f"{i:>5}\t{line}" for i, line in enumerate(text.splitlines(), 1))


def grep(files: dict[str, str], pattern: str) -> str:
    hits = [f"{p}:{i}:{line}" for p, t in sorted(files.items()) for i, line in enumerate(t.splitlines(), 1)
            if re.search(pattern, line)]
    return "\n".join(hits[:40]) + (f"\n... {len(hits) - 40} more matches" if len(hits) > 40 else "")


def test_report(repo: str, files: dict[str, str], failing: str | None, error: str) -> str:
    """A plausible runner output listing the repository's real test names."""
    lines, n = [], 0
    for path, text in sorted(files.items()):
        if repo.endswith(("pyinventory", "mlkit")) and path.startswith("tests/"):
            names = re.findall(r"^def (test_\w+)", text, re.M)
            lines += [f"{path}::{t} {'FAILED' if t == failing else 'PASSED'}" for t in names]
        elif repo.endswith("gosvc") and path.endswith("_test.go"):
            names = re.findall(r"^func (Test\w+)", text, re.M)
            pkg = "example.com/gosvc/" + path.rsplit("/", 1)[0]
            bad = failing in names
            lines += [f"--- {'FAIL' if t == failing else 'PASS'}: {t} (0.00s)" for t in names]
            lines.append(f"{'FAIL' if bad else 'ok  '}\t{pkg}\t0.0{len(names)}s")
        elif repo.endswith("rustkv") and path.endswith(".rs"):
            names = re.findall(r"#\[test\]\s*fn (\w+)", text)
            mod = path.replace("src/", "").replace(".rs", "").replace("/", "::")
            lines += [f"test {mod}::{t} ... {'FAILED' if t == failing else 'ok'}" for t in names]
        elif repo.endswith("webdash") and path.startswith("test/"):
            names = re.findall(r"test\('([^']+)'", text)
            lines.append(f"{'FAIL' if failing in names else 'PASS'} {path}")
            lines += [f"  {'x' if t == failing else 'v'} {t} ({(len(t) % 7) + 1} ms)" for t in names]
        elif repo.endswith("ledger") and path.endswith("Test.java"):
            names = re.findall(r"void (\w+)\(\)", text)
            bad = int(failing in names)
            lines.append(f"[INFO] Tests run: {len(names)}, Failures: {bad}, Errors: 0, Skipped: 0 - in {path.split('/')[-1][:-5]}")
        elif repo.endswith("shtools") and path.endswith(".bats"):
            for t in re.findall(r'@test "([^"]+)"', text):
                n += 1
                lines.append(f"{'not ok' if t == failing else 'ok'} {n} {t}")
        else:
            continue
    if repo.endswith(("cimg", "geom")):
        lines = [f"{'FAILED' if failing else 'ok'}"] if repo.endswith("cimg") else [
            f"{i}/{8} Test #{i}: {t} {'***Failed' if t == failing else '   Passed'}"
            for i, t in enumerate(["test_polygon", "test_vec2", "test_circle", "test_rect", "test_square",
                                   "test_ellipse", "test_righttriangle", "test_regularhexagon"], 1)]
    if failing:
        lines += ["", f"FAILURE in {failing}:", error]
    return "\n".join(lines)


def code_trajectory(rng: random.Random, task: dict, files: dict[str, str], long: bool) -> str:
    repo, name, number = task["repo"], task["repo"].split("/")[1], task["number"]
    changed = apply(task, files)
    fix_paths = [p for p, _, _ in task["edits"]]
    test_path = task["test"][0]
    system = (f"You are a software engineering agent working in a checkout of {repo} at /workspace/{name}. Use the tools "
              f"to inspect and change the code; run the tests before you finish.\n\nTools:\n"
              + json.dumps(CODE_TOOLS, indent=1))
    out = [turn("system", system), turn("user", f"Issue #{number}: {task['title']}\n\n{task['body']}\n\nPlease fix this and add a regression test.")]
    out.append(turn("assistant", "I'll start by looking at the repository layout.\n" + call("list_files", path=".")))
    out.append(turn("tool", "\n".join(sorted(files))))
    to_read = ["README.md", *fix_paths, test_path]
    if long:
        exts = {p.rsplit(".", 1)[-1] for p in fix_paths}
        same = [p for p in sorted(files) if p.rsplit(".", 1)[-1] in exts and p not in to_read and len(files[p]) < 9000]
        other = [p for p in sorted(files) if p not in same and p not in to_read and len(files[p]) < 9000]
        rng.shuffle(same)
        rng.shuffle(other)
        extra = same + other
        budget = rng.randint(45000, 80000)
        for p in extra:
            if sum(len(files[q]) for q in to_read) > budget:
                break
            to_read.insert(-2, p)
    seen = []
    for p in dict.fromkeys(to_read):
        why = ("Reading the README for conventions." if p == "README.md" else
               f"Now the file the issue points at, {p}." if p in fix_paths else
               f"And the existing tests in {p}." if p == test_path else
               rng.choice([f"Checking {p} for related code.", f"{p} may use the same helper; reading it.",
                           f"Looking at {p} to understand how callers use this."]))
        out.append(turn("assistant", why + "\n" + call("read_file", path=p)))
        out.append(turn("tool", numbered(files[p])))
        seen.append(p)
        if len(seen) == 2:
            out.append(turn("assistant", f"Let me find every use of `{task['symbol']}`.\n" + call("grep", pattern=re.escape(task["symbol"]))))
            out.append(turn("tool", grep(files, re.escape(task["symbol"]))))
    t_before, t_after = changed[test_path]
    out.append(turn("assistant", "First a regression test that reproduces the problem.\n" + call("apply_patch", patch=diff(test_path, t_before, t_after))))
    out.append(turn("tool", f"Patched {test_path}."))
    command = TEST_COMMANDS[repo]
    state = {**files, test_path: t_after}
    out.append(turn("assistant", call("run", command=command)))
    out.append(turn("tool", test_report(repo, state, task["failing"], task["error"])))
    patch = "".join(diff(p, *changed[p]) for p in dict.fromkeys(fix_paths))
    out.append(turn("assistant", "The new test fails as expected. Now the fix.\n" + call("apply_patch", patch=patch)))
    out.append(turn("tool", "Patched " + ", ".join(dict.fromkeys(fix_paths)) + "."))
    state.update({p: changed[p][1] for p in fix_paths})
    out.append(turn("assistant", call("run", command=command)))
    out.append(turn("tool", test_report(repo, state, None, "")))
    out.append(turn("assistant", f"All tests pass. Summary of the change for issue #{number}:\n\n- {task['title']}: fixed in "
                    + ", ".join(f"`{p}`" for p in dict.fromkeys(fix_paths)) + f".\n- Added a regression test in `{test_path}`.\n\n"
                    f"```diff\n{patch}```"))
    return "".join(out)


DATA_QUESTIONS = [
    ("Which product category holds the most units in stock?",
     "import csv\nfrom collections import Counter\n\nunits = Counter()\nwith open('data/products.csv') as f:\n    for row in csv.DictReader(f):\n        units[row['category']] += int(row['quantity'])\nfor cat, n in units.most_common():\n    print(f'{cat:10} {n:8,}')\n"),
    ("How many products are out of stock, per warehouse city?",
     "import csv\nfrom collections import Counter\n\nempty = Counter()\nwith open('data/products.csv') as f:\n    for row in csv.DictReader(f):\n        if int(row['quantity']) == 0:\n            empty[row['warehouse']] += 1\nprint('total', sum(empty.values()))\nfor city, n in sorted(empty.items()):\n    print(city, n)\n"),
    ("What is the average unit price per category, and which is the most expensive?",
     "import csv\nfrom collections import defaultdict\n\nprices = defaultdict(list)\nwith open('data/products.csv') as f:\n    for row in csv.DictReader(f):\n        prices[row['category']].append(float(row['price']))\nmeans = {c: sum(v) / len(v) for c, v in prices.items()}\nfor c, m in sorted(means.items(), key=lambda kv: -kv[1]):\n    print(f'{c:10} {m:8.2f}  (n={len(prices[c])})')\n"),
    ("List the ten SKUs with the highest stock value (quantity x price).",
     "import csv\n\nwith open('data/products.csv') as f:\n    rows = list(csv.DictReader(f))\nrows.sort(key=lambda r: -int(r['quantity']) * float(r['price']))\nfor r in rows[:10]:\n    print(r['sku'], r['category'], r['quantity'], r['price'], round(int(r['quantity']) * float(r['price']), 2))\n"),
    ("What is the total stock value in each warehouse city?",
     "import csv\nfrom collections import defaultdict\n\nvalue = defaultdict(float)\nwith open('data/products.csv') as f:\n    for row in csv.DictReader(f):\n        value[row['warehouse']] += int(row['quantity']) * float(row['price'])\nfor city, v in sorted(value.items(), key=lambda kv: -kv[1]):\n    print(f'{city:14} {v:14,.2f}')\n"),
    ("Show a histogram of quantities in buckets of 50 units.",
     "import csv\nfrom collections import Counter\n\nbuckets = Counter()\nwith open('data/products.csv') as f:\n    for row in csv.DictReader(f):\n        buckets[int(row['quantity']) // 50 * 50] += 1\nfor lo in sorted(buckets):\n    print(f'{lo:3}-{lo + 49:3} {buckets[lo]:5} ' + '#' * (buckets[lo] // 10))\n"),
]


def run_python(code: str, csv_text: str) -> str:
    """Execute the agent's (our own) analysis code on the in-memory CSV and capture its output."""
    buf = io.StringIO()
    fake_open = lambda path, *a, **k: io.StringIO(csv_text)  # noqa: E731
    with contextlib.redirect_stdout(buf):
        exec(compile(code, "<agent>", "exec"), {"open": fake_open, "__name__": "__agent__"})
    return buf.getvalue()


def data_trajectory(rng: random.Random, question: str, code: str, csv_text: str) -> str:
    tools = [{"name": "python", "description": "Run Python 3 code; stdout is returned.", "parameters": {"code": "string"}}]
    output = run_python(code, csv_text)
    head = "\n".join(csv_text.splitlines()[:6])
    first = output.strip().splitlines()[0]
    return "".join([
        turn("system", "You are a data analysis assistant with a Python sandbox. The working directory contains data/products.csv.\n\nTools:\n" + json.dumps(tools, indent=1)),
        turn("user", question),
        turn("assistant", "Let me look at the file first.\n" + call("python", code="print(open('data/products.csv').read()[:400])")),
        turn("tool", head),
        turn("assistant", "Columns are id, sku, category, quantity, price and warehouse. Computing it now.\n" + call("python", code=code)),
        turn("tool", output),
        turn("assistant", f"Here is the result:\n\n```\n{output.rstrip()}\n```\n\nThe first line, `{first}`, answers the question directly; "
                          f"the rest gives the full breakdown. The data covers {len(csv_text.splitlines()) - 1:,} products."),
    ])


def research_trajectory(rng: random.Random, topic: dict, pages: int) -> str:
    tools = [{"name": "web_search", "description": "Search the web.", "parameters": {"query": "string"}},
             {"name": "fetch_url", "description": "Fetch a page as text.", "parameters": {"url": "string"}}]
    docs = [article(rng, topic, rng.randint(700, 1400)) for _ in range(pages)]
    query = f"{topic['nouns'][0]} {rng.choice(CITIES)} latest"
    results = "\n".join(f"{i}. {d['title']} - https://{d['domain']}/{i}\n   {d['blocks'][2][1][:160]}..." for i, d in enumerate(docs, 1))
    out = [turn("system", "You are a research assistant. Search, read sources, and answer with citations like [1].\n\nTools:\n" + json.dumps(tools, indent=1)),
           turn("user", f"Can you give me an overview of what is happening with {topic['nouns'][0]}? Read several sources."),
           turn("assistant", call("web_search", query=query)), turn("tool", results)]
    facts = []
    for i, d in enumerate(docs, 1):
        out.append(turn("assistant", f"Reading result {i}.\n" + call("fetch_url", url=f"https://{d['domain']}/{i}")))
        text = "\n\n".join(b[1] if isinstance(b[1], str) else "\n".join(b[1]) for b in d["blocks"])
        out.append(turn("tool", text))
        sentences = [s for b in d["blocks"] if b[0] == "p" for s in re.split(r"(?<=\.) ", b[1]) if any(c.isdigit() for c in s)]
        if sentences:
            facts.append(f"- {rng.choice(sentences)} [{i}]")
    out.append(turn("assistant", f"Overview of {topic['nouns'][0]} from {len(docs)} sources:\n\n" + "\n".join(facts)
                    + "\n\nThe sources agree on the general direction but differ on the numbers, which come from different places and years; treat them as local examples rather than national figures."))
    return "".join(out)


def ops_trajectory(rng: random.Random) -> str:
    tools = [{"name": "shell", "description": "Run a command on the server.", "parameters": {"command": "string"}}]
    used = rng.randint(91, 99)
    logs = {"journal": rng.randint(4, 12), "nginx": rng.randint(1, 6), "app": rng.randint(6, 20), "postgresql": rng.randint(1, 3)}
    host = f"{rng.choice(['web', 'api', 'worker'])}-{rng.randint(1, 9)}"
    du = "\n".join(f"{v}.{rng.randint(0, 9)}G\t/var/log/{k}" for k, v in sorted(logs.items(), key=lambda kv: -kv[1]))
    big = max(logs, key=logs.get)
    return "".join([
        turn("system", f"You are an operations assistant with shell access to {host}.\n\nTools:\n" + json.dumps(tools, indent=1)),
        turn("user", f"Disk alerts on {host} again. Can you find out what is filling it and free some space safely?"),
        turn("assistant", call("shell", command="df -h /")),
        turn("tool", f"Filesystem      Size  Used Avail Use% Mounted on\n/dev/nvme0n1p1   50G   {used // 2}G  {50 - used // 2}G  {used}% /"),
        turn("assistant", f"Root is {used}% full. Checking the usual suspects.\n" + call("shell", command="sudo du -sh /var/log/* | sort -rh | head")),
        turn("tool", du),
        turn("assistant", f"/var/log/{big} is the largest. Let me see whether old files are being rotated.\n"
                          + call("shell", command=f"ls -lh /var/log/{big} | tail -5")),
        turn("tool", "\n".join(f"-rw-r----- 1 syslog adm {rng.randint(100, 900)}M {m} {rng.randint(1, 28)} {big}.{i}.log"
                               for i, m in enumerate(["Jan", "Feb", "Mar", "Apr", "May"], 1))),
        turn("assistant", "Rotated files are kept uncompressed. Compressing anything older than two days is safe and reversible.\n"
                          + call("shell", command=f"sudo find /var/log/{big} -name '*.log' -mtime +2 -exec gzip -9 {{}} +  && df -h /")),
        turn("tool", f"Filesystem      Size  Used Avail Use% Mounted on\n/dev/nvme0n1p1   50G   {used // 2 - logs[big] // 2}G  {50 - used // 2 + logs[big] // 2}G  {used - logs[big]}% /"),
        turn("assistant", f"Usage is down from {used}% to {used - logs[big]}%. The root cause is that logrotate for `{big}` "
                          "has `compress` disabled; I recommend enabling `compress` and `delaycompress` in /etc/logrotate.d so this does not recur."),
    ])


def generate(seed: int) -> list[dict]:
    rng = rng_for(seed, "agent")
    repos = {r: dict(f) for r, f in repo_files(seed).items()}
    csv_text = repos["acme-labs/pyinventory"]["data/products.csv"]
    items = []
    for i, task in enumerate(TASKS):
        long = i % 2 == 0
        items.append(("code", long, code_trajectory(rng, task, repos[task["repo"]], long)))
    for question, code in DATA_QUESTIONS:
        items.append(("data", False, data_trajectory(rng, question, code, csv_text)))
    for i in range(5):
        pages = 12 if i < 2 else rng.randint(2, 4)
        items.append(("research", pages > 4, research_trajectory(rng, TOPICS[(i * 4) % len(TOPICS)], pages)))
    for _ in range(4):
        items.append(("ops", False, ops_trajectory(rng)))
    rng.shuffle(items)
    return [{"id": f"agent-{n + 1:04d}", "source": "agent", "text": text, "meta": {"kind": kind, "long": long}}
            for n, (kind, long, text) in enumerate(items)]
