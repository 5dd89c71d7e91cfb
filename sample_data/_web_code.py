"""Code-related web pages: tutorials, Q&A threads and docs with ``<pre><code>`` blocks, and a few
pages that only use inline ``<code>``. The extracted ``text`` flattens the code (indentation lost)."""

from __future__ import annotations

import random

from _common import esc, person

# (title, language, intro, code blocks, explanation)
SNIPPETS = [
    ("Reading a CSV file with Python's csv module", "python",
     "The standard library's csv module handles quoting and delimiters for you, so there is rarely a reason to split lines by hand.",
     ['import csv\n\n\ndef read_rows(path):\n    """Yield each row of a CSV file as a dict."""\n    with open(path, newline="", encoding="utf-8") as f:\n        reader = csv.DictReader(f)\n        for row in reader:\n            yield row\n\n\nfor row in read_rows("orders.csv"):\n    print(row["customer"], row["total"])\n',
      'import csv\n\nwith open("out.csv", "w", newline="") as f:\n    writer = csv.writer(f)\n    writer.writerow(["name", "score"])\n    for name, score in [("ada", 91), ("bob", 78)]:\n        writer.writerow([name, score])\n'],
     "Passing newline='' matters on Windows, where the csv module would otherwise write blank lines between rows."),
    ("List comprehensions versus loops", "python",
     "A list comprehension builds a list in one expression and is usually faster and clearer than appending in a loop.",
     ['squares = []\nfor n in range(10):\n    if n % 2 == 0:\n        squares.append(n * n)\n',
      'squares = [n * n for n in range(10) if n % 2 == 0]\nprint(squares)  # [0, 4, 16, 36, 64]\n\n# a dict comprehension works the same way\nlengths = {word: len(word) for word in ["alpha", "beta", "gamma"]}\n'],
     "Keep comprehensions short; if you need nested conditions, a regular loop is easier to read."),
    ("Parsing command-line arguments with argparse", "python",
     "argparse generates help text and error messages from a declarative description of your options.",
     ['import argparse\n\n\ndef main():\n    parser = argparse.ArgumentParser(description="Resize images in a folder.")\n    parser.add_argument("folder", help="folder with the images")\n    parser.add_argument("--width", type=int, default=800, help="target width in pixels")\n    parser.add_argument("-v", "--verbose", action="store_true")\n    args = parser.parse_args()\n    if args.verbose:\n        print(f"resizing images in {args.folder} to {args.width}px")\n\n\nif __name__ == "__main__":\n    main()\n'],
     "Running the script with --help prints a usage line built from these declarations."),
    ("Writing your first decorator", "python",
     "A decorator is a function that takes a function and returns a new one, usually wrapping the original with extra behaviour.",
     ['import functools\nimport time\n\n\ndef timed(func):\n    @functools.wraps(func)\n    def wrapper(*args, **kwargs):\n        start = time.perf_counter()\n        try:\n            return func(*args, **kwargs)\n        finally:\n            elapsed = time.perf_counter() - start\n            print(f"{func.__name__} took {elapsed:.3f}s")\n    return wrapper\n\n\n@timed\ndef slow_sum(n):\n    return sum(range(n))\n'],
     "functools.wraps copies the name and docstring of the wrapped function, which keeps tracebacks and help() readable."),
    ("Context managers and the with statement", "python",
     "Context managers guarantee that clean-up code runs, even when an exception is raised inside the block.",
     ['from contextlib import contextmanager\nimport os\n\n\n@contextmanager\ndef working_directory(path):\n    previous = os.getcwd()\n    os.chdir(path)\n    try:\n        yield path\n    finally:\n        os.chdir(previous)\n\n\nwith working_directory("/tmp"):\n    print(os.listdir("."))\n'],
     "The code after yield is the exit step; putting it in a finally block makes it run even if the body fails."),
    ("Dataclasses: less boilerplate for simple classes", "python",
     "The dataclass decorator writes __init__, __repr__ and __eq__ for you from type-annotated fields.",
     ['from dataclasses import dataclass, field\n\n\n@dataclass(frozen=True)\nclass Point:\n    x: float\n    y: float\n\n    def distance_to(self, other: "Point") -> float:\n        return ((self.x - other.x) ** 2 + (self.y - other.y) ** 2) ** 0.5\n\n\n@dataclass\nclass Route:\n    name: str\n    stops: list[Point] = field(default_factory=list)\n'],
     "Never use a mutable default such as [] directly; field(default_factory=list) creates a fresh list per instance."),
    ("Running tasks concurrently with asyncio.gather", "python",
     "asyncio.gather schedules several coroutines at once and waits for all of them.",
     ['import asyncio\n\n\nasync def fetch(name, delay):\n    await asyncio.sleep(delay)\n    return f"{name} done after {delay}s"\n\n\nasync def main():\n    results = await asyncio.gather(\n        fetch("a", 1.0),\n        fetch("b", 0.5),\n        fetch("c", 0.2),\n    )\n    for line in results:\n        print(line)\n\n\nasyncio.run(main())\n'],
     "The total run time is about one second, the longest delay, rather than the sum of all three."),
    ("Extracting dates with regular expressions", "python",
     "Named groups make regular expressions much easier to read and maintain.",
     ['import re\n\nDATE = re.compile(r"(?P<year>\\d{4})-(?P<month>\\d{2})-(?P<day>\\d{2})")\n\ntext = "Released 2023-04-18, patched 2023-05-02."\nfor match in DATE.finditer(text):\n    print(match.group("year"), match.group("month"), match.group("day"))\n'],
     "Compile a pattern once at module level if you use it in a loop."),
    ("Testing a function with pytest parametrize", "python",
     "pytest.mark.parametrize runs one test body against a table of inputs and expected outputs.",
     ['import pytest\n\nfrom mypkg.text import slugify\n\n\n@pytest.mark.parametrize(\n    "title, expected",\n    [\n        ("Hello World", "hello-world"),\n        ("  spaces  ", "spaces"),\n        ("Ünïcode", "unicode"),\n    ],\n)\ndef test_slugify(title, expected):\n    assert slugify(title) == expected\n'],
     "Each row shows up as a separate test in the report, so a failure points at the exact input."),
    ("Working with paths using pathlib", "python",
     "pathlib replaces most uses of os.path with an object-oriented API.",
     ['from pathlib import Path\n\nroot = Path("project")\nfor path in sorted(root.rglob("*.py")):\n    lines = path.read_text(encoding="utf-8").splitlines()\n    print(f"{path.relative_to(root)}: {len(lines)} lines")\n\nconfig = root / "config" / "settings.toml"\nif not config.exists():\n    config.parent.mkdir(parents=True, exist_ok=True)\n    config.write_text("debug = false\\n")\n'],
     "The / operator joins path segments and works the same on every operating system."),
    ("Caching expensive calls with lru_cache", "python",
     "functools.lru_cache memoises a function so repeated calls with the same arguments return instantly.",
     ['from functools import lru_cache\n\n\n@lru_cache(maxsize=None)\ndef fib(n: int) -> int:\n    if n < 2:\n        return n\n    return fib(n - 1) + fib(n - 2)\n\n\nprint(fib(80))\nprint(fib.cache_info())\n'],
     "Arguments must be hashable, so lists need to be converted to tuples before calling a cached function."),
    ("Counting things with collections.Counter", "python",
     "Counter is a dict subclass for counting hashable objects.",
     ['from collections import Counter, defaultdict\n\nwords = "the cat sat on the mat with the hat".split()\ncounts = Counter(words)\nprint(counts.most_common(2))  # [(\'the\', 3), (\'cat\', 1)]\n\nby_letter = defaultdict(list)\nfor word in words:\n    by_letter[word[0]].append(word)\n'],
     "defaultdict avoids the usual check for a missing key before appending."),
    ("Setting up logging properly", "python",
     "Libraries should create a module-level logger and leave configuration to the application.",
     ['import logging\n\nlogger = logging.getLogger(__name__)\n\n\ndef process(items):\n    logger.info("processing %d items", len(items))\n    for item in items:\n        if not item:\n            logger.warning("skipping empty item")\n            continue\n        logger.debug("item %r", item)\n\n\nif __name__ == "__main__":\n    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")\n    process(["a", "", "b"])\n'],
     "Passing arguments instead of an f-string lets logging skip formatting when the level is disabled."),
    ("A small SQLite database from Python", "python",
     "sqlite3 ships with Python and is ideal for small tools and tests.",
     ['import sqlite3\n\nconn = sqlite3.connect("notes.db")\nconn.execute(\n    "CREATE TABLE IF NOT EXISTS notes (id INTEGER PRIMARY KEY, body TEXT NOT NULL)"\n)\nwith conn:\n    conn.execute("INSERT INTO notes (body) VALUES (?)", ("buy milk",))\nfor row in conn.execute("SELECT id, body FROM notes ORDER BY id"):\n    print(row)\nconn.close()\n'],
     "Always use ? placeholders rather than string formatting to avoid SQL injection."),
    ("Binary search without off-by-one errors", "python",
     "Binary search is simple in principle and notoriously easy to get wrong.",
     ['def lower_bound(items, target):\n    """Index of the first element >= target."""\n    lo, hi = 0, len(items)\n    while lo < hi:\n        mid = (lo + hi) // 2\n        if items[mid] < target:\n            lo = mid + 1\n        else:\n            hi = mid\n    return lo\n\n\nassert lower_bound([1, 3, 3, 5], 3) == 1\n',
      'import bisect\n\nprint(bisect.bisect_left([1, 3, 3, 5], 3))  # 1\n'],
     "Using a half-open interval [lo, hi) keeps the loop condition and updates consistent."),
    ("Generators and lazy pipelines", "python",
     "Generators produce values on demand, which keeps memory use flat for large inputs.",
     ['def read_lines(path):\n    with open(path) as f:\n        for line in f:\n            yield line.rstrip("\\n")\n\n\ndef non_empty(lines):\n    return (line for line in lines if line.strip())\n\n\ntotal = sum(1 for _ in non_empty(read_lines("big.log")))\nprint(total)\n'],
     "Each stage pulls one line at a time from the previous one; nothing is loaded into memory all at once."),
    ("Type hints for everyday code", "python",
     "Type hints document intent and let tools such as mypy catch mistakes before runtime.",
     ['from typing import Iterable, Optional\n\n\ndef average(values: Iterable[float]) -> Optional[float]:\n    total, count = 0.0, 0\n    for v in values:\n        total += v\n        count += 1\n    return total / count if count else None\n'],
     "Optional[float] says the function may return None, which forces callers to handle the empty case."),
    ("Debouncing input events in JavaScript", "javascript",
     "Debouncing delays a function until events have stopped arriving for a given time.",
     ['function debounce(fn, wait) {\n  let timer = null;\n  return function (...args) {\n    clearTimeout(timer);\n    timer = setTimeout(() => fn.apply(this, args), wait);\n  };\n}\n\nconst search = document.querySelector("#search");\nsearch.addEventListener("input", debounce((e) => {\n  console.log("searching for", e.target.value);\n}, 300));\n'],
     "Without debouncing, a search box would send a request on every keystroke."),
    ("Fetching JSON with async/await", "javascript",
     "fetch returns a promise, and async/await makes the control flow read top to bottom.",
     ['async function loadUsers() {\n  const response = await fetch("/api/users");\n  if (!response.ok) {\n    throw new Error(`HTTP ${response.status}`);\n  }\n  const users = await response.json();\n  return users.filter((u) => u.active);\n}\n\nloadUsers()\n  .then((users) => console.log(users.length))\n  .catch((err) => console.error(err));\n'],
     "fetch only rejects on network errors, so check response.ok for HTTP errors yourself."),
    ("A safer bash script header", "bash",
     "A few options at the top of a script turn silent failures into loud ones.",
     ['#!/usr/bin/env bash\nset -euo pipefail\nIFS=$\'\\n\\t\'\n\nlog() { printf \'%s %s\\n\' "$(date +%H:%M:%S)" "$*" >&2; }\n\nfor f in "$@"; do\n  if [[ ! -f "$f" ]]; then\n    log "missing: $f"\n    exit 1\n  fi\n  wc -l "$f"\ndone\n'],
     "set -u makes the script fail on undefined variables, and pipefail makes a pipeline fail if any command in it fails."),
    ("Grouping and filtering in SQL", "sql",
     "WHERE filters rows before grouping; HAVING filters groups after aggregation.",
     ['SELECT customer_id,\n       COUNT(*)        AS orders,\n       SUM(total)      AS revenue\nFROM orders\nWHERE created_at >= DATE \'2024-01-01\'\nGROUP BY customer_id\nHAVING COUNT(*) >= 3\nORDER BY revenue DESC\nLIMIT 10;\n'],
     "Putting the date condition in WHERE lets the database use an index before it aggregates."),
    ("Handling errors in Go", "go",
     "Go returns errors as values; wrapping them with context makes logs far more useful.",
     ['package main\n\nimport (\n\t"fmt"\n\t"os"\n)\n\nfunc readConfig(path string) ([]byte, error) {\n\tdata, err := os.ReadFile(path)\n\tif err != nil {\n\t\treturn nil, fmt.Errorf("read config %s: %w", path, err)\n\t}\n\treturn data, nil\n}\n\nfunc main() {\n\tif _, err := readConfig("app.yaml"); err != nil {\n\t\tfmt.Fprintln(os.Stderr, err)\n\t\tos.Exit(1)\n\t}\n}\n'],
     "The %w verb keeps the original error so callers can still test it with errors.Is."),
    ("Iterating over a HashMap in Rust", "rust",
     "Rust's HashMap can be iterated by reference, by mutable reference or by value.",
     ['use std::collections::HashMap;\n\nfn main() {\n    let mut stock: HashMap<&str, u32> = HashMap::new();\n    stock.insert("apples", 12);\n    stock.insert("pears", 4);\n\n    for (item, count) in stock.iter_mut() {\n        *count += 1;\n        println!("{item}: {count}");\n    }\n    *stock.entry("plums").or_insert(0) += 5;\n}\n'],
     "The entry API inserts a default and returns a mutable reference in one lookup."),
    ("Reading a file line by line in Java", "java",
     "Files.lines returns a lazily populated stream that must be closed.",
     ['import java.io.IOException;\nimport java.nio.file.Files;\nimport java.nio.file.Path;\nimport java.util.stream.Stream;\n\npublic class CountErrors {\n    public static void main(String[] args) throws IOException {\n        try (Stream<String> lines = Files.lines(Path.of("server.log"))) {\n            long errors = lines.filter(l -> l.contains("ERROR")).count();\n            System.out.println(errors + " errors");\n        }\n    }\n}\n'],
     "The try-with-resources block closes the underlying file handle when the stream is done."),
    ("Sorting with key functions", "python",
     "sorted accepts a key function, which is both faster and simpler than a comparison function.",
     ['from operator import itemgetter\n\npeople = [\n    {"name": "Ada", "age": 36},\n    {"name": "Grace", "age": 45},\n    {"name": "Alan", "age": 41},\n]\nby_age = sorted(people, key=itemgetter("age"))\nby_name_desc = sorted(people, key=lambda p: p["name"], reverse=True)\n'],
     "Python's sort is stable, so sorting twice by different keys gives a multi-level ordering."),
    ("Reading JSON safely", "python",
     "json.load raises a JSONDecodeError with a line and column, which you can turn into a helpful message.",
     ['import json\nimport sys\n\n\ndef load_config(path):\n    try:\n        with open(path, encoding="utf-8") as f:\n            return json.load(f)\n    except json.JSONDecodeError as exc:\n        sys.exit(f"{path}:{exc.lineno}:{exc.colno}: {exc.msg}")\n'],
     "Reporting file, line and column makes configuration errors quick to fix."),
]

INLINE = [
    ("How do I undo the last git commit?",
     "If the commit has not been pushed, run <code>git reset --soft HEAD~1</code>. Your changes stay staged, so you can fix them and commit again. To throw the changes away completely, use <code>git reset --hard HEAD~1</code>, but be careful: uncommitted work is lost. If the commit is already on a shared branch, prefer <code>git revert &lt;sha&gt;</code>, which adds a new commit that undoes it."),
    ("What is the difference between == and is in Python?",
     "<code>==</code> compares values by calling <code>__eq__</code>, while <code>is</code> checks whether two names refer to the same object. Use <code>is</code> only for singletons such as <code>None</code>: write <code>if x is None</code>, not <code>if x == None</code>. Small integers and short strings may appear to work with <code>is</code> because of interning, but that is an implementation detail."),
    ("Why does npm install change package-lock.json?",
     "<code>npm install</code> may update the lock file when <code>package.json</code> allows newer versions. In CI use <code>npm ci</code> instead: it installs exactly what the lock file says and fails if the two files disagree. Commit <code>package-lock.json</code> so every machine gets the same dependency tree."),
    ("How can I see which process is using a port on Linux?",
     "Run <code>ss -ltnp</code> to list listening TCP sockets with the owning process, or <code>lsof -i :8080</code> for one port. You may need <code>sudo</code> to see processes owned by other users. Once you have the PID, <code>kill PID</code> asks the process to stop gracefully."),
]


def _tutorial(rng: random.Random, spec: tuple) -> list[tuple]:
    title, lang, intro, codes, expl = spec
    blocks: list[tuple] = [("h1", title), ("byline", f"By {person(rng)} · {rng.randint(3, 15)} min read"), ("p", intro)]
    lead_ins = ["Here is a minimal example:", "Consider the following code:", "A typical version looks like this:"]
    for i, code in enumerate(codes):
        blocks.append(("p", lead_ins[(i + rng.randint(0, 2)) % 3]))
        blocks.append(("pre", code, lang))
    blocks.append(("p", expl))
    blocks.append(("h2", "Summary"))
    blocks.append(("p", f"{intro.split('.')[0]}. Try the example yourself, change one thing at a time, and read the "
                        f"documentation for the details that this short {lang} tutorial leaves out."))
    return blocks


def _qa(rng: random.Random, spec: tuple) -> list[tuple]:
    title, lang, intro, codes, expl = spec
    asker, answerer = person(rng), person(rng)
    question = f"{title}? I'm trying to get this working but I'm not sure I'm doing it the idiomatic way. This is what I have so far:"
    votes = rng.randint(2, 900)
    blocks: list[tuple] = [
        ("h1", title), ("p", f"Asked by {asker} · viewed {rng.randint(100, 90000)} times"), ("p", question),
        ("pre", codes[-1], lang), ("p", "Is there a cleaner way, or any pitfall I should know about?"),
        ("h2", f"{rng.randint(1, 6)} Answers"), ("p", f"{votes} votes · accepted answer by {answerer}"),
        ("p", f"{intro} Your approach is close. {expl}"), ("pre", codes[0], lang),
        ("p", "Hope this helps. Edit: fixed a typo in the example."),
    ]
    return blocks


def _docs(rng: random.Random, spec: tuple) -> list[tuple]:
    title, lang, intro, codes, expl = spec
    return [
        ("h1", title), ("p", f"Documentation · version {rng.randint(1, 4)}.{rng.randint(0, 12)}"), ("p", intro),
        ("h2", "Example"), ("pre", codes[0], lang), ("h2", "Notes"), ("p", expl),
        ("ul", ["See also: the standard library reference.", "Changed in this version: clearer error messages."]),
    ]


def code_pages(rng: random.Random) -> list[dict]:
    """Pages with ``<pre><code>`` blocks (tutorial / Q&A / docs styles) plus inline-``<code>``-only pages."""
    sites = [("DevNotes", "devnotes.example.com"), ("Stack Answers", "stackanswers.example.org"),
             ("The Docs Hub", "docshub.example.dev")]
    out = []
    for i, spec in enumerate(SNIPPETS):
        style = i % 3
        blocks = (_tutorial, _qa, _docs)[style](rng, spec)
        site, domain = sites[style]
        out.append({"title": spec[0], "site": site, "domain": domain, "blocks": blocks, "topic": f"code:{spec[1]}"})
    for title, body in INLINE:
        blocks = [("h1", title), ("p", f"Asked by {person(rng)}"), ("p_html", esc("I keep running into this. ") + body),
                  ("p", "Thanks, that solved it.")]
        out.append({"title": title, "site": "Stack Answers", "domain": "stackanswers.example.org",
                    "blocks": blocks, "topic": "code:inline"})
    return out
