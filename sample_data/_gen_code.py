"""``code/code.jsonl.gz``: every file of ten small repositories, one record per file.

``meta.tags`` says what a file was written to exercise (``generated``, ``minified``, ``data``,
``encoded_blob``, ``poor_quality``, ``vendored_copy``, ``test``, ``markup_only``); ``language`` is
left out on about a fifth of the records so detection by extension is needed.
"""

from __future__ import annotations

import fnmatch
import os

from _code_c import cimg, geom
from _code_go import gosvc
from _code_handbook import handbook
from _code_java import ledger
from _code_js import webdash
from _code_mlkit import mlkit
from _code_python import pyinventory
from _code_rust import rustkv
from _code_shell import LOG_SH, shtools
from _common import rng_for

REPOS = [
    ("acme-labs/pyinventory", pyinventory), ("acme-labs/mlkit", mlkit), ("northwind/webdash", webdash),
    ("gopher-co/gosvc", lambda rng: gosvc(rng, LOG_SH)), ("ferrous/rustkv", rustkv), ("pixelworks/cimg", cimg),
    ("pixelworks/geom", geom), ("acme-labs/ledger", ledger), ("acme-labs/shtools", shtools),
    ("acme-labs/handbook", handbook),
]

EXT_LANGUAGE = {
    ".py": "Python", ".js": "JavaScript", ".ts": "TypeScript", ".go": "Go", ".rs": "Rust", ".c": "C", ".h": "C",
    ".cpp": "C++", ".hpp": "C++", ".java": "Java", ".sh": "Shell", ".bats": "Shell", ".md": "Markdown",
    ".json": "JSON", ".yaml": "YAML", ".yml": "YAML", ".csv": "CSV", ".xml": "XML", ".svg": "SVG", ".html": "HTML",
    ".css": "CSS", ".toml": "TOML", ".proto": "Protocol Buffer", ".properties": "Java Properties", ".cfg": "INI",
    ".lock": "TOML", ".mod": "Go Module", ".sum": "Text",
}
NAME_LANGUAGE = {"Makefile": "Makefile", "Dockerfile": "Dockerfile", "CMakeLists.txt": "CMake", ".shellcheckrc": "INI"}

# (repo, glob on path) -> tag
TAGS = [
    ("acme-labs/pyinventory", "inventory/_version.py", "generated"),
    ("acme-labs/pyinventory", "inventory/schema_gen.py", "generated"),
    ("northwind/webdash", "package-lock.json", "generated"),
    ("gopher-co/gosvc", "api/v1/*.pb.go", "generated"),
    ("ferrous/rustkv", "Cargo.lock", "generated"),
    ("ferrous/rustkv", "src/generated.rs", "generated"),
    ("pixelworks/cimg", "src/font_data.c", "generated"),
    ("acme-labs/ledger", "*/LedgerProtos.java", "generated"),
    ("northwind/webdash", "dist/app.min.js", "minified"),
    ("acme-labs/pyinventory", "data/products.csv", "data"),
    ("acme-labs/mlkit", "data/samples.json", "data"),
    ("acme-labs/mlkit", "configs/experiment.yaml", "data"),
    ("acme-labs/ledger", "*/accounts.xml", "data"),
    ("northwind/webdash", "package-lock.json", "data"),
    ("acme-labs/mlkit", "mlkit/assets.py", "encoded_blob"),
    ("acme-labs/pyinventory", "inventory/reports/legacy_report.py", "poor_quality"),
    ("acme-labs/mlkit", "scripts/exp_*.py", "poor_quality"),
    ("northwind/webdash", "legacy/*.js", "poor_quality"),
    ("gopher-co/gosvc", "internal/legacy/*.go", "poor_quality"),
    ("pixelworks/cimg", "src/legacy/*.c", "poor_quality"),
    ("acme-labs/ledger", "*/OldCsvExporter.java", "poor_quality"),
    ("acme-labs/shtools", "bin/old_backup.sh", "poor_quality"),
    ("acme-labs/mlkit", "mlkit/_vendor/retry.py", "vendored_copy"),
    ("gopher-co/gosvc", "scripts/lib/log.sh", "vendored_copy"),
    ("pixelworks/geom", "third_party/cimg/util.h", "vendored_copy"),
    ("acme-labs/handbook", "index.html", "markup_only"),
    ("acme-labs/handbook", "layouts/*.html", "markup_only"),
]


def language(path: str) -> str | None:
    name = os.path.basename(path)
    if name in NAME_LANGUAGE:
        return NAME_LANGUAGE[name]
    return EXT_LANGUAGE.get(os.path.splitext(name)[1])


def tags(repo: str, path: str) -> list[str]:
    out = [tag for r, pattern, tag in TAGS if r == repo and fnmatch.fnmatch(path, pattern)]
    name = os.path.basename(path)
    if ({"test", "tests"} & set(path.split("/")[:-1]) or name.startswith("test_") or name.endswith(".bats")
            or fnmatch.fnmatch(name, "*_test.*") or fnmatch.fnmatch(name, "*.test.*") or name.endswith("Test.java")):
        out.append("test")
    return sorted(set(out))


def repo_files(seed: int) -> dict[str, list[tuple[str, str]]]:
    """Every repository's ``(path, text)`` files; reused by the issue and agent generators."""
    return {repo: make(rng_for(seed, f"code:{repo}")) for repo, make in REPOS}


def generate(seed: int) -> list[dict]:
    rng = rng_for(seed, "code:records")
    records = []
    for repo, files in repo_files(seed).items():
        for path, text in sorted(files):
            rec = {"id": f"code-{len(records) + 1:05d}", "source": "code", "repo": repo, "path": path, "text": text}
            lang = language(path)
            if lang and rng.random() >= 0.2:
                rec["language"] = lang
            rec["meta"] = {"tags": tags(repo, path)}
            records.append(rec)
    return records
