import json

import numpy as np

from curation.mixture.repo_concat import RepoHeaders, concat_repo
from curation.mixture.repo_deps import dependency_order, file_deps
from curation.mixture.repo_threads import concat_threads, format_commit, format_record, related_order


def words(texts: list[str]) -> np.ndarray:
    return np.array([len(t.split()) for t in texts], dtype=np.int64)


PY_REPO = {
    "tests/test_core.py": "from pkg.core import run\n\ndef test_run():\n    assert run()\n",
    "pkg/__init__.py": "from .core import run\n",
    "pkg/core.py": "from pkg import util\nfrom .models import Model\n\ndef run():\n    return util.helper(Model())\n",
    "pkg/util.py": "import os\n\ndef helper(x):\n    return x\n",
    "pkg/models.py": "class Model:\n    pass\n",
    "README.md": "# pkg\nA demo.\n",
    "setup.cfg": "[metadata]\nname = pkg\n",
}


def test_python_files_follow_the_files_they_import_readme_first():
    order = dependency_order(list(PY_REPO), list(PY_REPO.values()))
    assert order[0] == "README.md"
    pos = {p: i for i, p in enumerate(order)}
    assert pos["pkg/util.py"] < pos["pkg/core.py"]
    assert pos["pkg/models.py"] < pos["pkg/core.py"]
    assert pos["pkg/core.py"] < pos["pkg/__init__.py"]
    assert pos["pkg/core.py"] < pos["tests/test_core.py"]
    assert sorted(order) == sorted(PY_REPO)


def test_js_ts_and_go_imports_are_resolved():
    files = {
        "src/index.ts": "import { a } from './lib/a';\nexport * from './lib/b.js';\n",
        "src/lib/a.ts": "import b from './b';\nexport const a = b;\n",
        "src/lib/b.ts": "export default 1;\n",
        "web/app.js": "const u = require('../web/util');\nimport('./lazy.mjs');\n",
        "web/util/index.js": "module.exports = {};\n",
        "web/lazy.mjs": "export const x = 1;\n",
        "go.mod": "module example.com/tool\n\ngo 1.21\n",
        "main.go": 'package main\n\nimport (\n\t"fmt"\n\t"example.com/tool/internal/store"\n)\n',
        "internal/store/store.go": 'package store\n\nimport "example.com/tool/internal/codec"\n',
        "internal/codec/codec.go": "package codec\n",
    }
    deps = file_deps(list(files), list(files.values()))
    assert deps["src/index.ts"] == {"src/lib/a.ts", "src/lib/b.ts"}
    assert deps["src/lib/a.ts"] == {"src/lib/b.ts"}
    assert deps["web/app.js"] == {"web/util/index.js", "web/lazy.mjs"}
    assert deps["main.go"] == {"internal/store/store.go"}
    assert deps["internal/store/store.go"] == {"internal/codec/codec.go"}
    order = dependency_order(list(files), list(files.values()))
    pos = {p: i for i, p in enumerate(order)}
    assert pos["internal/codec/codec.go"] < pos["internal/store/store.go"] < pos["main.go"]
    assert pos["src/lib/b.ts"] < pos["src/lib/a.ts"] < pos["src/index.ts"]


def test_c_includes_rust_mods_and_path_order_for_other_files():
    files = {
        "b.txt": "b", "a.txt": "a",
        "src/main.c": '#include "util.h"\n#include <stdio.h>\n',
        "src/util.h": "int f(void);\n",
        "src/lib.rs": "mod parser;\npub mod ast;\n",
        "src/parser.rs": "use crate::ast;\n",
        "src/ast/mod.rs": "pub struct Node;\n",
    }
    deps = file_deps(list(files), list(files.values()))
    assert deps["src/main.c"] == {"src/util.h"}
    assert deps["src/lib.rs"] == {"src/parser.rs", "src/ast/mod.rs"}
    order = dependency_order(list(files), list(files.values()))
    assert order.index("a.txt") < order.index("b.txt")
    assert order.index("src/util.h") < order.index("src/main.c")


def test_import_cycles_do_not_lose_files():
    files = {"a.py": "import b\n", "b.py": "import a\n", "c.py": "import a\n"}
    order = dependency_order(list(files), list(files.values()))
    assert sorted(order) == ["a.py", "b.py", "c.py"] and order[-1] == "c.py"


def test_concatenation_has_headers_and_splits_at_file_boundaries():
    paths = list(PY_REPO)
    texts = list(PY_REPO.values())
    n_tokens = words(texts).tolist()
    ids = [f"id{i}" for i in range(len(paths))]
    whole = concat_repo("org/pkg", paths, texts, n_tokens, ids, max_tokens=10_000, count=words)
    assert len(whole) == 1
    doc = whole[0]
    assert doc.text.startswith("<|repo_name|>org/pkg\n<|file_sep|>README.md\n# pkg")
    assert doc.text.index("<|file_sep|>pkg/util.py") < doc.text.index("<|file_sep|>pkg/core.py")
    assert sorted(doc.members) == sorted(ids)
    parts = concat_repo("org/pkg", paths, texts, n_tokens, ids, max_tokens=25, count=words, headers=RepoHeaders("R {repo}\n", "F {path}\n"))
    assert len(parts) > 1
    assert all(p.n_tokens <= 25 for p in parts)
    assert [m for p in parts for m in p.members] == doc.members  # same order, cut only between files
    for p in parts:
        assert p.text.startswith("R org/pkg\n")
        assert p.text.count("F ") == len(p.members)
    assert len({p.doc_id for p in parts}) == len(parts)


def test_a_file_larger_than_the_limit_stays_whole():
    parts = concat_repo("r", ["big.py", "s.py"], ["x " * 50, "y"], [50, 1], ["b", "s"], max_tokens=10, count=words)
    assert [p.members for p in parts] == [["b"], ["s"]]


def test_commit_in_diff_like_format():
    meta = {"kind": "commit", "sha": "9f2c1e0", "author": "Ann Lee <ann@example.com>", "date": "2024-03-01T10:00:00Z",
            "message": "Handle empty input\n\nCloses #12", "files": [
                {"path": "src/parse.py", "diff": "@@ -1,2 +1,3 @@\n def parse(s):\n+    if not s: return None\n     return s"},
                {"filename": "README.md", "patch": "--- a/README.md\n+++ b/README.md\n@@ -1 +1 @@\n-old\n+new"}]}
    out = format_commit(meta, "")
    lines = out.split("\n")
    assert lines[:5] == ["commit 9f2c1e0", "Author: Ann Lee <ann@example.com>", "Date:   2024-03-01T10:00:00Z", "", "    Handle empty input"]
    assert "    Closes #12" in lines
    assert "diff --git a/src/parse.py b/src/parse.py\n--- a/src/parse.py\n+++ b/src/parse.py\n@@ -1,2 +1,3 @@" in out
    assert out.count("--- a/README.md") == 1  # a patch with its own headers is not given a second pair
    assert format_record("commit", meta, "Handle empty input") == out


def test_related_records_are_put_together():
    kinds = ["commit", "issue", "pull_request", "issue", "commit", "pull_request"]
    numbers = [None, 3, 7, 1, None, 9]
    refs = [[7], [], [3], [], [], [1]]
    dates = ["2024-01-02", "", "", "", "2024-01-01", ""]
    order = related_order(kinds, numbers, refs, dates)
    # issue 1 → PR 9; issue 3 → PR 7 → its commit; then the unrelated commit.
    assert order == [3, 5, 1, 2, 0, 4]


def test_threads_of_a_repository_become_one_context():
    recs = [
        ("Crash on empty file", {"kind": "issue", "number": 4, "title": "Crash on empty file"}),
        ("This fixes #4 by checking the length.", {"kind": "pull_request", "number": 5, "title": "Check length"}),
        ("", {"kind": "commit", "sha": "abc", "message": "Check length (#5)", "files": [{"path": "a.py", "diff": "+x"}]}),
    ]
    texts = [t for t, _ in recs]
    metas = [json.dumps(m) for _, m in recs]
    docs = concat_threads("org/r", texts, metas, words(texts).tolist(), ["i", "p", "c"], max_tokens=1000, count=words)
    assert len(docs) == 1 and docs[0].members == ["i", "p", "c"]
    text = docs[0].text
    assert text.index("Crash on empty file") < text.index("Pull request #5: Check length") < text.index("commit abc")
    assert "diff --git a/a.py b/a.py" in text
    small = concat_threads("org/r", texts, metas, words(texts).tolist(), ["i", "p", "c"], max_tokens=12, count=words)
    assert len(small) > 1 and [m for d in small for m in d.members] == ["i", "p", "c"]


def test_repository_token_counts_are_exact_with_the_real_tokenizer():
    from curation.tokens import count_tokens

    def qwen(texts: list[str]) -> np.ndarray:
        return count_tokens(texts, "qwen")

    files = {
        "README.md": "\n\n# Title starts after blank lines\n",
        "a.py": "import b\nx = {'k': 1}",  # no final newline, ends with punctuation
        "b.py": "  \n  def f():  \n\treturn 1   ",
        "c.js": "export const c = () => {}\n\n\n",
    }
    texts = list(files.values())
    docs = concat_repo("o/r", list(files), texts, qwen(texts).tolist(), list(files), max_tokens=10_000, count=qwen)
    assert [d.n_tokens for d in docs] == qwen([d.text for d in docs]).tolist()


def test_repository_token_counts_are_exact_with_headers_of_the_recipes_own():
    """A file header without its line break merged the path with the file's first word, so the sum of
    the parts was off (the export then refused the shard); custom headers are counted whole."""
    from curation.tokens import count_tokens

    def qwen(texts: list[str]) -> np.ndarray:
        return count_tokens(texts, "qwen")

    texts = list(PY_REPO.values())
    for headers in (RepoHeaders(file="<|file_sep|>{path}"), RepoHeaders(repo="# {repo}\n", file="## {path}:")):
        docs = concat_repo("o/r", list(PY_REPO), texts, qwen(texts).tolist(), list(PY_REPO), max_tokens=10_000, count=qwen,
                           headers=headers)
        assert [d.n_tokens for d in docs] == qwen([d.text for d in docs]).tolist(), headers
