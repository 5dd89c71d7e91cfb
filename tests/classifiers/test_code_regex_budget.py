"""Every code regex stays linear on adversarial text (a regex holds the GIL: a slow one hangs a worker).
The budgets are CPU seconds of this process, so that a busy machine does not fail them.

The C definition pattern once split runs of ``*`` two ways and took minutes on a comment rule of
80 asterisks, long enough for the scheduler to drop the worker; each pattern now gets runs of
every character it treats specially, at sizes where exponential or cubic behaviour would show, and
thousands of lines that open a definition and never close it, where quadratic behaviour would.
"""

from __future__ import annotations

import time

import pytest

from classifiers.code_quality_defs import DEFINITIONS
from classifiers.code_quality_features import structural_features
from classifiers.code_quality_scan import LEXERS, scan

SPECIAL = "*&:<>,~ \t/\"'`#-=(){}[]\\$.;!?|r@_a1\n"


def _adversarial() -> list[str]:
    texts = []
    for ch in SPECIAL:
        texts.append(("int" + ch * 60 + "\n") * 20)
        texts.append(("x " + (ch + " ") * 40 + "\n") * 20)
        texts.append(ch * 3000)
    # long runs of name characters, bare and dotted (an R name): a scan restarted inside a run is quadratic
    texts.append("blob <- " + "0123456789abcdef" * 1500 + "\n")
    texts.append("a." * 12000 + "\n")
    texts.append("/" + "*" * 78 + "/\n" + "int *f(int *a, int *b,\n    char **c);\n" * 50)
    texts.append("a " * 2000 + "(" * 500 + "\n")
    # many lines a definition starts on and none ends: a span to the text's end from each line start is
    # quadratic (200 KB of ``f (x)`` lines took 40 s in the C pattern, 14–46 s in the Java one)
    for line in ("f (x)", "int f (x)", "fn f(x)", "func f(x)", "public static f(x)", "f(a", "function f(a"):
        texts.append((line + "\n") * 8000)
    # unclosed literals and comments: the match fails only at the end of the text
    for opener in ('r#"', 'r"', 'b"', '"' * 3, "'" * 3, "/*", '"', "'", "`", "--[[", "=begin", "=pod", "#", "//"):
        texts.append("x = " + opener + "word\n" * 60)
        texts.append((opener + " a\n") * 60)
    return texts


@pytest.mark.parametrize("family", sorted(DEFINITIONS))
def test_definition_patterns_are_fast_on_adversarial_text(family):
    started = time.process_time()
    for text in _adversarial():
        list(DEFINITIONS[family].finditer(text))
    assert time.process_time() - started < 2.0, family


@pytest.mark.parametrize("family", sorted(LEXERS))
def test_lexers_are_fast_on_adversarial_text(family):
    started = time.process_time()
    for text in _adversarial():
        list(LEXERS[family].finditer(text))
    assert time.process_time() - started < 2.0, family


def test_comment_rule_of_asterisks_scores_at_once_and_functions_are_still_found():
    text = "/" + "*" * 78 + "/\n" + "static int *add(int *a, int b) {\n    return a + b;\n}\n" + "*" * 80 + "\n"
    started = time.process_time()
    feats = structural_features(text, "C")
    assert time.process_time() - started < 1.0
    assert feats["n_functions"] == 1
    assert scan(text, "c").max_depth == 1


def test_c_definition_pattern_is_fast_on_the_shapes_it_reads_over_lines():
    """C/C++ shapes a definition may continue over lines in: old-style parameter declarations, initializer
    lists (indented constructors too, with noexcept/requires/macro lines before them), template-qualified names,
operators, attributes among the return type's tokens; none reaches a brace."""
    texts = []
    for line in ("f(a, b)\nint a; int b;", "f(a)", "int a;", "A::A(int x)\n : x_(x),", "A(x) :", " : x_(x),", ", y_(0)",
                 "  A(int x)\n    : x_(x)", "T Foo<T>::bar(x) const", "Foo<std::vector<T>>::", "Foo<" * 20,
                 "bool operator==(a)", "operator<<=", "a::b::c::d::e::", "  A(x)", "    : y(z)",
                 # attributes among the return type's tokens, specifiers before an initializer list, non-heads
                 "static int __attribute__((x)) ", "__attribute__((" * 20, "[[a]] " * 20, "__declspec(x) int f(a)",
                 "  A(x)\n  noexcept(y)", "  A(x)\n  FOO(y)\n  BAR(z)", "  noexcept(y)", "else if (x)",
                 "namespace a B(c)", "struct A(x)"):
        texts.append((line + "\n") * 8000)
    texts.append("f(a, b)\n" + "int a; " * 20000 + "\n")
    texts.append("x(" + "a, " * 2000 + "b)\n" + "int a;\n" * 8000)
    texts.append("A::A(x)\n" + ": " + "x_(x), " * 20000 + "\n")
    started = time.process_time()
    for text in texts:
        list(DEFINITIONS["c"].finditer(text))
    assert time.process_time() - started < 2.0
