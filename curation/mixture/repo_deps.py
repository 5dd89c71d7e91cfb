"""Import dependencies between the files of one repository, and the order they give.

The README comes first, then every file after the files it imports where the language allows it
(Python, JavaScript/TypeScript, Go, C/C++ ``#include "…"``, Rust ``mod``), path order otherwise
and to break ties and cycles (:mod:`curation.mixture.repo_concat` joins the files in this order).

>>> files = {"README.md": "# demo", "app.py": "import util\\nutil.f()", "util.py": "def f(): pass"}
>>> [files_path for files_path in dependency_order(list(files), list(files.values()))]
['README.md', 'util.py', 'app.py']
"""

from __future__ import annotations

import heapq
import posixpath
import re
from collections.abc import Sequence

_PY_IMPORT = re.compile(r"^[ \t]*import[ \t]+([\w.]+(?:[ \t]*,[ \t]*[\w.]+)*)", re.M)
_PY_FROM = re.compile(r"^[ \t]*from[ \t]+(\.*)([\w.]*)[ \t]+import[ \t]+(?:\(([^)]*)\)|([\w., \t*]+))", re.M)
_JS_SPEC = re.compile(
    r"""(?:\bfrom\s*|\bimport\s*\(?\s*|\brequire\s*\(\s*|\bexport\s*\*\s*from\s*)['"]([^'"\n]+)['"]"""
)
_GO_BLOCK = re.compile(r"^import\s*\((.*?)\)", re.M | re.S)
_GO_SINGLE = re.compile(r'^import\s+(?:[\w.]+\s+)?"([^"]+)"', re.M)
_GO_SPEC = re.compile(r'"([^"]+)"')
_GO_MODULE = re.compile(r"^module\s+(\S+)", re.M)
_C_INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*"([^"]+)"', re.M)
_RUST_MOD = re.compile(r"^[ \t]*(?:pub(?:\([^)]*\))?[ \t]+)?mod[ \t]+(\w+)[ \t]*;", re.M)

JS_EXTS = (".ts", ".tsx", ".js", ".jsx", ".mjs", ".cjs", ".mts", ".cts", ".d.ts")
C_EXTS = (".c", ".h", ".cc", ".cpp", ".cxx", ".hpp", ".hh", ".hxx")



def _ext(path: str) -> str:
    base = path.rsplit("/", 1)[-1]
    if base.endswith(".d.ts"):
        return ".d.ts"
    return "." + base.rsplit(".", 1)[-1].lower() if "." in base else ""


def is_readme(path: str) -> bool:
    return path.rsplit("/", 1)[-1].lower().startswith("readme")


class _Index:
    """Lookups over a repository's paths for import resolution."""

    def __init__(self, paths: Sequence[str]) -> None:
        self.paths = set(paths)
        self.py_suffix: dict[str, list[str]] = {}
        self.dirs: dict[str, list[str]] = {}
        self.by_base: dict[str, list[str]] = {}
        for p in sorted(paths):
            d = posixpath.dirname(p)
            self.by_base.setdefault(posixpath.basename(p), []).append(p)
            if p.endswith(".go"):
                self.dirs.setdefault(d, []).append(p)
            if p.endswith(".py"):
                mod = p[:-3]
                if mod.endswith("/__init__") or mod == "__init__":
                    mod = posixpath.dirname(mod)
                parts = [x for x in mod.split("/") if x]
                for i in range(len(parts)):
                    self.py_suffix.setdefault(".".join(parts[i:]), []).append(p)
        self.go_modules: list[tuple[str, str]] = []

    def py_module(self, dotted: str, near: str) -> str | None:
        cands = self.py_suffix.get(dotted)
        if not cands:
            return None
        if len(cands) == 1:
            return cands[0]
        # Ambiguous suffix: prefer the candidate sharing the longest directory prefix with the importer.
        return max(cands, key=lambda c: (len(posixpath.commonprefix([c, near])), -len(c)))


def python_deps(path: str, text: str, idx: _Index) -> set[str]:
    """Repository files that a Python file imports (absolute and relative imports)."""
    out: set[str] = set()
    for m in _PY_IMPORT.finditer(text):
        for name in m.group(1).split(","):
            out.update(_longest_module(idx, name.strip(), path))
    for m in _PY_FROM.finditer(text):
        dots, mod, names = m.group(1), m.group(2), m.group(3) or m.group(4) or ""
        imported = [n.split("#")[0].strip().split(" as ")[0].strip() for n in names.replace("\n", ",").split(",")]
        imported = [n for n in imported if n]
        if dots:
            base = posixpath.dirname(path)
            for _ in range(len(dots) - 1):
                base = posixpath.dirname(base)
            pkg = posixpath.join(base, *mod.split(".")) if mod else base
            subs = {c for n in imported for c in (f"{pkg}/{n}.py", f"{pkg}/{n}/__init__.py") if c in idx.paths}
            # names that are submodules: those files, not the package's __init__ (which may import the importer)
            out.update(subs or {c for c in (f"{pkg}.py", f"{pkg}/__init__.py") if c in idx.paths})
            continue
        found = False
        for n in imported:
            hit = idx.py_module(f"{mod}.{n}", path) if n and n != "*" else None
            if hit:
                out.add(hit)
                found = True
        if not found:
            out.update(_longest_module(idx, mod, path))
    out.discard(path)
    return out


def _longest_module(idx: _Index, name: str, path: str) -> set[str]:
    """The repository file of the longest importable prefix of dotted ``name`` (``a.b.c``, then
    ``a.b``, then ``a``) that is a module file, or nothing. A prefix that is a package
    (``a/b/__init__.py``) while ``a.b.c`` is absent is no dependency: ``a.b.c`` is a module this copy
    of the repository lacks, and the package's ``__init__`` often imports the importer (a false cycle).

    >>> idx = _Index(["pkg/__init__.py", "pkg/accessors.py", "tools.py"])
    >>> _longest_module(idx, "pkg.sub", "pkg/accessors.py"), _longest_module(idx, "tools.sub", "x.py")
    (set(), {'tools.py'})
    """
    full = name
    while name:
        hit = idx.py_module(name, path)
        if hit:
            return {hit} if name == full or not hit.endswith("__init__.py") else set()
        name = name.rpartition(".")[0]
    return set()


def js_deps(path: str, text: str, idx: _Index) -> set[str]:
    """Repository files that a JS/TS file imports through relative specifiers."""
    out: set[str] = set()
    for m in _JS_SPEC.finditer(text):
        spec = m.group(1)
        if not spec.startswith("."):
            continue
        target = posixpath.normpath(posixpath.join(posixpath.dirname(path), spec))
        stems = [target]
        if target.endswith((".js", ".jsx", ".mjs", ".cjs")):
            stems.append(target.rsplit(".", 1)[0])  # TS sources imported with their emitted .js name
        for stem in stems:
            hit = _js_file(stem, idx.paths)
            if hit:
                out.add(hit)
                break
    out.discard(path)
    return out


def _js_file(stem: str, paths: set[str]) -> str | None:
    """The first of ``stem``, ``stem`` + an extension, ``stem/index`` + an extension that is a path
    (the names are made only until one is found)."""
    if stem in paths:
        return stem
    for e in JS_EXTS:
        if stem + e in paths:
            return stem + e
    index = stem + "/index"
    for e in JS_EXTS:
        if index + e in paths:
            return index + e
    return None


def go_deps(path: str, text: str, idx: _Index) -> set[str]:
    """Files of the repository packages (directories) that a Go file imports."""
    specs = [s for block in _GO_BLOCK.findall(text) for s in _GO_SPEC.findall(block)]
    specs += _GO_SINGLE.findall(text)
    out: set[str] = set()
    for spec in specs:
        folder = None
        for module, root in idx.go_modules:
            if spec == module or spec.startswith(module + "/"):
                folder = posixpath.normpath(posixpath.join(root, spec[len(module) + 1:])) if spec != module else root
                folder = "" if folder == "." else folder
                break
        if folder is None:  # no go.mod: match the import path's tail to a directory
            parts = spec.split("/")
            for i in range(len(parts)):
                tail = "/".join(parts[i:])
                if tail in idx.dirs:
                    folder = tail
                    break
        if folder is not None:
            out.update(idx.dirs.get(folder, []))
    out.discard(path)
    same_dir = posixpath.dirname(path)
    return {p for p in out if posixpath.dirname(p) != same_dir}


def c_deps(path: str, text: str, idx: _Index) -> set[str]:
    """Headers included with quotes, resolved next to the file, else by unique file name."""
    out: set[str] = set()
    for spec in _C_INCLUDE.findall(text):
        local = posixpath.normpath(posixpath.join(posixpath.dirname(path), spec))
        if local in idx.paths:
            out.add(local)
            continue
        cands = [p for p in idx.by_base.get(posixpath.basename(spec), []) if p.endswith(spec)]
        if len(cands) == 1:
            out.add(cands[0])
    out.discard(path)
    return out


def rust_deps(path: str, text: str, idx: _Index) -> set[str]:
    """Module files declared with ``mod name;`` (name.rs or name/mod.rs next to the file)."""
    base = posixpath.dirname(path)
    stem = posixpath.basename(path)[:-3]
    if stem not in ("lib", "main", "mod"):
        base = posixpath.join(base, stem)
    out = set()
    for name in _RUST_MOD.findall(text):
        for c in (posixpath.join(base, f"{name}.rs"), posixpath.join(base, name, "mod.rs")):
            if c in idx.paths:
                out.add(c)
                break
    return out


def file_deps(paths: Sequence[str], texts: Sequence[str]) -> dict[str, set[str]]:
    """path → the repository files it imports (empty where the language is not handled)."""
    idx = _Index(paths)
    for p, t in zip(paths, texts, strict=True):
        if posixpath.basename(p) == "go.mod":
            m = _GO_MODULE.search(t)
            if m:
                root = posixpath.dirname(p)
                idx.go_modules.append((m.group(1), root))
    idx.go_modules.sort(key=lambda x: -len(x[0]))
    deps: dict[str, set[str]] = {}
    for p, t in zip(paths, texts, strict=True):
        ext = _ext(p)
        if ext in (".py", ".pyi"):
            deps[p] = python_deps(p, t, idx)
        elif ext in JS_EXTS:
            deps[p] = js_deps(p, t, idx)
        elif ext == ".go":
            deps[p] = go_deps(p, t, idx)
        elif ext in C_EXTS:
            deps[p] = c_deps(p, t, idx)
        elif ext == ".rs":
            deps[p] = rust_deps(p, t, idx)
        else:
            deps[p] = set()
    return deps


def dependency_order(paths: Sequence[str], texts: Sequence[str]) -> list[str]:
    """Paths ordered README first, then each file after the files it imports (path order for ties).

    Import cycles are broken by taking the smallest remaining path.
    """
    deps = file_deps(paths, texts)
    readmes = sorted((p for p in paths if is_readme(p) and "/" not in p), key=lambda p: (len(p), p))
    readme = readmes[:1]
    rest = [p for p in paths if p not in readme]
    in_rest = set(rest)
    pending = {p: deps[p] & in_rest for p in rest}
    users: dict[str, list[str]] = {p: [] for p in rest}
    for p, ds in pending.items():
        for d in ds:
            users[d].append(p)
    ready = [p for p, ds in pending.items() if not ds]
    heapq.heapify(ready)
    remaining = sorted(rest)
    done: set[str] = set()
    order: list[str] = []
    while len(order) < len(rest):
        if not ready:  # a cycle: take the smallest remaining path
            while remaining[0] in done:
                remaining.pop(0)
            heapq.heappush(ready, remaining[0])
        p = heapq.heappop(ready)
        if p in done:
            continue
        done.add(p)
        order.append(p)
        for u in users[p]:
            if u in done:
                continue
            pending[u].discard(p)
            if not pending[u]:
                heapq.heappush(ready, u)
    return readme + order


