import pytest

from curation.quality.code_language import (
    detect_language,
    language_family,
    language_kind,
    modeline_language,
    shebang_language,
)


@pytest.mark.parametrize(
    ("path", "text", "expected"),
    [
        ("pkg/mod.py", "", "Python"),
        ("types.pyi", "", "Python"),
        ("src/lib.rs", "", "Rust"),
        ("main.go", "", "Go"),
        ("a/b/App.java", "", "Java"),
        ("index.ts", "", "TypeScript"),
        ("dist/app.min.js", "", "JavaScript"),
        ("x.cc", "", "C++"),
        ("include/foo.h", "int foo(void);\n", "C"),
        ("include/foo.h", "namespace foo {\nclass Bar {\n};\n}\n", "C++"),
        ("Makefile", "all:\n", "Makefile"),
        ("docker/Dockerfile", "FROM debian\n", "Dockerfile"),
        ("Cargo.lock", "", "TOML"),
        ("conf/app.YML", "", "YAML"),
        ("bin/tool", "#!/usr/bin/env python3\nprint(1)\n", "Python"),
        ("bin/run", "#!/bin/bash -e\necho hi\n", "Shell"),
        ("bin/x", "#!/usr/bin/env -S node --harmony\n", "JavaScript"),
        ("completions/foo", "_foo() { :; }\ncomplete -F _foo foo\n# ex: filetype=sh\n", "Shell"),
        ("include/c++/12/vector", "// <vector> -*- C++ -*-\n", "C++"),
        ("README", "just words\n", None),
        (None, None, None),
    ],
)
def test_detect_language(path, text, expected):
    assert detect_language(path, text) == expected


def test_shebang_versions_and_env_flags():
    assert shebang_language("#!/usr/bin/python3.11") == "Python"
    assert shebang_language("#!/usr/bin/env perl -w") == "Perl"
    assert shebang_language("#!/usr/bin/env") is None
    assert shebang_language("not a shebang") is None


def test_modeline_unknown_name_is_none():
    assert modeline_language("/* -*- mode: fundamental -*- */\n") is None


def test_kind_and_family():
    assert language_kind("JSON") == "data"
    assert language_kind("Markdown") == "prose"
    assert language_kind("Rust") == "programming"
    assert language_kind(None) == "unknown"
    assert [language_family(x) for x in ("Python", "TSX", "C++", "Kotlin", "Makefile", "Brainfuck")] == [
        "python", "javascript", "c", "java", "shell", "other"]


def test_language_from_fence_names():
    from curation.quality.code_language import language_from_name

    assert [language_from_name(n) for n in ("python", "py", "golang", "rs", "bash", "console", "cpp", "ts", "json")] == [
        "Python", "Python", "Go", "Rust", "Shell", "Shell", "C++", "TypeScript", "JSON"]
    assert language_from_name("text") is None and language_from_name("") is None and language_from_name("klingon") is None
