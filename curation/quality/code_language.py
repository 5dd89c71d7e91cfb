"""Language of a source file from its name, extension and shebang (a small linguist-style table).

Names follow GitHub linguist (``Python``, ``C++``, ``Shell``, ``JSON``…). Every language has a
*kind* as in linguist: ``programming``, ``data`` (JSON, YAML, CSV, XML…), ``markup`` (HTML, CSS)
or ``prose`` (Markdown, reStructuredText); the rules use the kind (data files have their own
limits) and the quality scorers use the *family* (:func:`language_family`).

>>> detect_language("src/main.rs")
'Rust'
>>> detect_language("bin/tool", "#!/usr/bin/env python3\\nprint(1)\\n")
'Python'
>>> detect_language("Makefile"), detect_language("Cargo.lock"), language_kind("YAML")
('Makefile', 'TOML', 'data')
"""

from __future__ import annotations

import re

#: Lower-case extension (with the dot) → language. Extensions linguist finds ambiguous take
#: the common reading: ``.h`` is C (C++ headers are ``.hpp``/``.hh``/``.hxx``), ``.m`` Objective-C.
EXTENSIONS: dict[str, str] = {
    ".py": "Python", ".pyi": "Python", ".pyw": "Python", ".pyx": "Cython", ".pxd": "Cython", ".pxi": "Cython",
    ".js": "JavaScript", ".mjs": "JavaScript", ".cjs": "JavaScript", ".jsx": "JavaScript",
    ".ts": "TypeScript", ".mts": "TypeScript", ".cts": "TypeScript", ".tsx": "TSX",
    ".go": "Go", ".rs": "Rust",
    ".c": "C", ".h": "C",
    ".cc": "C++", ".cpp": "C++", ".cxx": "C++", ".c++": "C++", ".hpp": "C++", ".hh": "C++", ".hxx": "C++",
    ".h++": "C++", ".ipp": "C++", ".tcc": "C++", ".inl": "C++",
    ".java": "Java", ".kt": "Kotlin", ".kts": "Kotlin", ".scala": "Scala", ".groovy": "Groovy", ".gradle": "Groovy",
    ".cs": "C#", ".fs": "F#", ".vb": "Visual Basic .NET", ".swift": "Swift", ".m": "Objective-C", ".mm": "Objective-C++",
    ".rb": "Ruby", ".php": "PHP", ".pl": "Perl", ".pm": "Perl", ".t": "Perl", ".lua": "Lua", ".r": "R",
    ".jl": "Julia", ".hs": "Haskell", ".ml": "OCaml", ".mli": "OCaml", ".ex": "Elixir", ".exs": "Elixir",
    ".erl": "Erlang", ".clj": "Clojure", ".dart": "Dart", ".zig": "Zig", ".nim": "Nim", ".v": "Verilog",
    ".sv": "SystemVerilog", ".vhd": "VHDL", ".vhdl": "VHDL", ".f90": "Fortran", ".f": "Fortran", ".for": "Fortran",
    ".sh": "Shell", ".bash": "Shell", ".zsh": "Shell", ".ksh": "Shell", ".fish": "fish", ".ps1": "PowerShell",
    ".bat": "Batchfile", ".cmd": "Batchfile", ".awk": "Awk", ".sed": "sed",
    ".s": "Assembly", ".asm": "Assembly", ".S": "Assembly", ".wat": "WebAssembly",
    ".sql": "SQL", ".proto": "Protocol Buffer", ".thrift": "Thrift", ".graphql": "GraphQL", ".gql": "GraphQL",
    ".cmake": "CMake", ".mk": "Makefile", ".mak": "Makefile",
    ".html": "HTML", ".htm": "HTML", ".xhtml": "HTML", ".css": "CSS", ".scss": "SCSS", ".sass": "Sass",
    ".less": "Less", ".vue": "Vue", ".svelte": "Svelte",
    ".json": "JSON", ".jsonl": "JSON", ".geojson": "JSON", ".ipynb": "Jupyter Notebook", ".json5": "JSON5",
    ".yaml": "YAML", ".yml": "YAML", ".toml": "TOML", ".ini": "INI", ".cfg": "INI", ".conf": "INI",
    ".csv": "CSV", ".tsv": "TSV", ".xml": "XML", ".xsd": "XML", ".xsl": "XSLT", ".xslt": "XSLT", ".svg": "SVG",
    ".plist": "XML", ".csproj": "XML", ".vcxproj": "XML", ".pom": "XML", ".wsdl": "XML", ".rdf": "XML",
    ".md": "Markdown", ".markdown": "Markdown", ".rst": "reStructuredText", ".txt": "Text", ".tex": "TeX",
    ".adoc": "AsciiDoc", ".org": "Org",
}

#: Exact file names (case-sensitive first, then lower-case) → language.
FILENAMES: dict[str, str] = {
    "Makefile": "Makefile", "makefile": "Makefile", "GNUmakefile": "Makefile", "Kbuild": "Makefile",
    "Dockerfile": "Dockerfile", "Containerfile": "Dockerfile", "CMakeLists.txt": "CMake",
    "Rakefile": "Ruby", "Gemfile": "Ruby", "Vagrantfile": "Ruby", "BUILD": "Starlark", "BUILD.bazel": "Starlark",
    "WORKSPACE": "Starlark", "SConstruct": "Python", "SConscript": "Python",
    ".bashrc": "Shell", ".bash_profile": "Shell", ".zshrc": "Shell", ".profile": "Shell",
    "go.mod": "Go Module", "go.sum": "Go Checksums", "Cargo.lock": "TOML", "Pipfile": "TOML", "Pipfile.lock": "JSON",
    "poetry.lock": "TOML", "package-lock.json": "JSON", "yarn.lock": "YAML", "pnpm-lock.yaml": "YAML",
    "composer.lock": "JSON", "Gemfile.lock": "Text",
}

#: Shebang interpreter → language.
INTERPRETERS: dict[str, str] = {
    "python": "Python", "python2": "Python", "python3": "Python", "pypy": "Python", "pypy3": "Python",
    "sh": "Shell", "bash": "Shell", "dash": "Shell", "zsh": "Shell", "ksh": "Shell", "ash": "Shell",
    "node": "JavaScript", "nodejs": "JavaScript", "deno": "TypeScript", "ts-node": "TypeScript",
    "perl": "Perl", "perl5": "Perl", "ruby": "Ruby", "php": "PHP", "lua": "Lua", "Rscript": "R",
    "awk": "Awk", "gawk": "Awk", "make": "Makefile", "tclsh": "Tcl", "wish": "Tcl", "fish": "fish",
    "pwsh": "PowerShell", "julia": "Julia", "escript": "Erlang", "guile": "Scheme", "osascript": "AppleScript",
}

#: linguist's ``type`` of the languages whose kind is not ``programming``.
KINDS: dict[str, str] = {
    "JSON": "data", "JSON5": "data", "YAML": "data", "TOML": "data", "INI": "data", "CSV": "data", "TSV": "data",
    "XML": "data", "SVG": "data", "Go Checksums": "data", "Go Module": "data", "Jupyter Notebook": "markup",
    "HTML": "markup", "CSS": "markup", "SCSS": "markup", "Sass": "markup", "Less": "markup", "XSLT": "programming",
    "Markdown": "prose", "reStructuredText": "prose", "Text": "prose", "TeX": "markup", "AsciiDoc": "prose",
    "Org": "prose",
}

#: Language → family used by the quality scorers (same comment syntax and block structure).
FAMILIES: dict[str, str] = {
    "Python": "python", "Cython": "python", "Starlark": "python",
    "JavaScript": "javascript", "TypeScript": "javascript", "TSX": "javascript", "Vue": "javascript",
    "Svelte": "javascript",
    "Go": "go", "Rust": "rust", "C": "c", "C++": "c", "Objective-C": "c", "Objective-C++": "c",
    "Java": "java", "Kotlin": "java", "Scala": "java", "Groovy": "java", "C#": "java", "Dart": "java",
    "Swift": "java", "PHP": "java", "Protocol Buffer": "c", "Thrift": "c",
    "Shell": "shell", "fish": "shell", "Makefile": "shell", "Dockerfile": "shell", "Awk": "shell",
    "PowerShell": "shell", "Perl": "perl", "Ruby": "ruby", "Lua": "lua", "R": "r", "Julia": "r", "Tcl": "shell",
    "CMake": "shell",
}

#: Editor modeline names (Emacs ``-*- mode: X -*-``, Vim ``vim: set ft=X``) → language.
MODELINE_NAMES: dict[str, str] = {
    "sh": "Shell", "bash": "Shell", "shell-script": "Shell", "zsh": "Shell", "c++": "C++", "cpp": "C++",
    "c": "C", "python": "Python", "perl": "Perl", "cperl": "Perl", "ruby": "Ruby", "javascript": "JavaScript",
    "js": "JavaScript", "typescript": "TypeScript", "makefile": "Makefile", "make": "Makefile", "go": "Go",
    "rust": "Rust", "java": "Java", "lua": "Lua", "yaml": "YAML", "json": "JSON", "xml": "XML", "html": "HTML",
    "css": "CSS", "cmake": "CMake", "awk": "Awk", "tcl": "Tcl", "objc": "Objective-C", "objective-c": "Objective-C",
}

_SHEBANG = re.compile(r"^#!\s*(\S+)(?:\s+(.*))?$")
_EMACS = re.compile(r"-\*-(?:.*?\bmode:\s*([\w+-]+)|\s*([\w+-]+)\s*)(?:;.*?)?-\*-", re.IGNORECASE)
_VIM = re.compile(r"(?:vim?|ex):\s*(?:set?\s+)?.*?\b(?:ft|filetype|syntax)=([\w+-]+)", re.IGNORECASE)
#: A ``.h`` header is C++ when it uses C++-only syntax (linguist's heuristic for ``.h``).
_CPP_HEADER = re.compile(
    r"^\s*(?:namespace\s+\w|template\s*<|class\s+\w+[^;]*\{|#include\s*<(?:iostream|string|vector|memory|map)>"
    r"|using\s+namespace\b|(?:public|private|protected):\s*$)|\bstd::", re.MULTILINE
)


def detect_language(path: str | None, text: str | None = None) -> str | None:
    """The language of a file (linguist names), or None when neither name nor shebang tells.

    File name first, then extension (``.min.js`` → JavaScript), then a ``#!`` line.

    >>> detect_language("x/y.tar.gz") is None
    True
    >>> detect_language(None, "#!/bin/sh -e\\n")
    'Shell'
    """
    if path:
        name = path.replace("\\", "/").rsplit("/", 1)[-1]
        lang = FILENAMES.get(name) or FILENAMES.get(name.lower())
        if lang:
            return lang
        if name.startswith("Dockerfile."):
            return "Dockerfile"
        dot = name.rfind(".")
        if dot > 0 or (dot == 0 and name.count(".") > 1):
            ext = name[dot:]
            lang = EXTENSIONS.get(ext) or EXTENSIONS.get(ext.lower())
            if lang == "C" and ext == ".h" and text and _CPP_HEADER.search(text[:20000]):
                return "C++"
            if lang:
                return lang
    if text and text.startswith("#!"):
        lang = shebang_language(text.split("\n", 1)[0])
        if lang:
            return lang
    return modeline_language(text) if text else None


def modeline_language(text: str) -> str | None:
    """The language of an Emacs or Vim modeline in the first or last 5 lines.

    >>> modeline_language("// <vector> -*- C++ -*-\\n")
    'C++'
    >>> modeline_language("complete -F _foo foo\\n# ex: filetype=sh\\n")
    'Shell'
    """
    lines = text[:2000].split("\n")[:5] + text[-2000:].split("\n")[-5:]
    for line in lines:
        m = _EMACS.search(line) or _VIM.search(line)
        if m:
            name = next(g for g in m.groups() if g)
            lang = MODELINE_NAMES.get(name.lower())
            if lang:
                return lang
    return None


def shebang_language(first_line: str) -> str | None:
    """The language named by a ``#!`` line (``env`` and its ``-S`` flag are followed).

    >>> shebang_language("#!/usr/bin/env -S python3 -u")
    'Python'
    >>> shebang_language("#!/usr/bin/perl -w")
    'Perl'
    """
    m = _SHEBANG.match(first_line.strip())
    if not m:
        return None
    prog = m.group(1).rsplit("/", 1)[-1]
    args = (m.group(2) or "").split()
    if prog == "env":
        args = [a for a in args if not a.startswith("-") and "=" not in a]
        if not args:
            return None
        prog = args[0].rsplit("/", 1)[-1]
    prog = re.sub(r"[\d.]+$", "", prog) or prog  # python3.11 → python
    return INTERPRETERS.get(prog) or INTERPRETERS.get(prog.lower())


#: Code-fence / highlighter names (``language-py``, ```` ```golang ````) that are neither a modeline name nor an extension.
ALIASES: dict[str, str] = {
    "golang": "Go", "rs": "Rust", "py3": "Python", "python3": "Python", "console": "Shell", "shell": "Shell",
    "shellsession": "Shell", "sh-session": "Shell", "node": "JavaScript", "jsx": "JavaScript", "ts": "TypeScript",
    "csharp": "C#", "cs": "C#", "kotlin": "Kotlin", "kt": "Kotlin", "objectivec": "Objective-C", "docker": "Dockerfile",
    "dockerfile": "Dockerfile", "postgresql": "SQL", "psql": "SQL", "plsql": "SQL", "mysql": "SQL", "toml": "TOML",
    "ini": "INI", "powershell": "PowerShell", "ps": "PowerShell", "scala": "Scala", "swift": "Swift", "php": "PHP",
    "r": "R", "julia": "Julia", "haskell": "Haskell", "elixir": "Elixir", "lua": "Lua", "perl": "Perl", "ruby": "Ruby",
}


def language_from_name(name: str | None) -> str | None:
    """The language of a code-fence or highlighter name (``py``, ``golang``, ``c++``, ``bash``).

    >>> language_from_name("py"), language_from_name("golang"), language_from_name("C++"), language_from_name("text")
    ('Python', 'Go', 'C++', None)
    """
    if not name:
        return None
    key = name.strip().lower()
    if key in ("text", "txt", "plain", "plaintext", "none", "output", "default"):
        return None
    return ALIASES.get(key) or MODELINE_NAMES.get(key) or EXTENSIONS.get(f".{key}") or next(
        (lang for lang in set(EXTENSIONS.values()) if lang.lower() == key), None)


def language_kind(language: str | None) -> str:
    """``programming`` | ``data`` | ``markup`` | ``prose`` (``unknown`` for None)."""
    if language is None:
        return "unknown"
    return KINDS.get(language, "programming")


def tier_group(language: str | None) -> str:
    """The group a rare language's tier cuts fall back to: its family, or its kind when not code
    (a kind in :data:`UNPOOLED_GROUPS` calibrates nothing: a rare one of its formats is medium).

    >>> tier_group("TypeScript"), tier_group("Markdown"), tier_group("YAML")
    ('javascript', 'prose', 'data')
    """
    kind = language_kind(language)
    return language_family(language) if kind in ("programming", "unknown") else kind


#: tier groups whose rare formats are tiered medium: neither the pooled (mostly source-code) scores nor
#: another format of the group calibrate them (TOML scores above JSON, YAML between)
UNPOOLED_GROUPS = frozenset({"data", "markup", "prose"})


def language_family(language: str | None) -> str:
    """Scorer family of a language (``other`` when no language-specific scorer applies).

    >>> language_family("C++"), language_family("TypeScript"), language_family("COBOL")
    ('c', 'javascript', 'other')
    """
    return FAMILIES.get(language or "", "other")
