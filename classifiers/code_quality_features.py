"""Structural features of a source file, per language family (the inputs of the structural score).

Python is parsed with :mod:`ast` (functions, docstrings, control-flow nesting, parse errors); a
dialect of the family that :mod:`ast` cannot read (Cython's ``cdef``/``cimport``) is read by its
indentation instead, with no parse check (an unreadable dialect is not broken Python); the other
families use :mod:`classifiers.code_quality_scan` (comments and strings masked, brace
depth) and :mod:`classifiers.code_quality_defs` (brace-bodied definitions, without the statements and
operators a family's pattern reads as names). Every family yields the same feature names, so one score
formula serves all. A text ``cut`` short (the start of a longer file) is read as a dialect is: a
failed Python parse falls back to the indentation, and brackets count as broken only when one closes
what was never opened (a prefix leaves blocks open). ``code_lines`` counts the lines that hold code
(not comments, not a bare string such as a docstring); a licence text (``LICENSE``, ``COPYING``…) holds none.

>>> f = structural_features("def add(a, b):\\n    'Sum.'\\n    return a + b\\n", "Python", "m.py")
>>> f["n_functions"], f["documented_fraction"], f["parse_error"]
(1, 1.0, 0)
"""

from __future__ import annotations

import ast
import re
import warnings
from itertools import compress
from typing import Any

from classifiers import code_quality_scan as lexical
from classifiers.code_quality_defs import definitions
from classifiers.code_quality_scan import BRACE_FAMILIES, duplicate_fraction, indented_blocks, scan
from curation.quality.code_language import language_family

#: family → regex a conventional function name matches (Python: PEP 8, Go: MixedCaps…).
NAMING: dict[str, re.Pattern[str]] = {
    "python": re.compile(r"^_{0,2}[a-z][a-z0-9_]*$|^__\w+__$|^_?[A-Z][a-zA-Z0-9]*$"),
    "rust": re.compile(r"^_?[a-z][a-z0-9_]*$"),
    "go": re.compile(r"^[A-Za-z][A-Za-z0-9]*(?:_[A-Z0-9]\w*)?$"),
    "javascript": re.compile(r"^[_$]?[a-z][A-Za-z0-9$]*$|^[A-Z][A-Za-z0-9]*$"),
    "java": re.compile(r"^[a-z][A-Za-z0-9]*$|^[A-Z][A-Za-z0-9]*$"),
}
#: languages of the ``python`` family whose syntax :mod:`ast` does not read (a failed parse tells nothing)
PARSER_DIALECTS = frozenset({"Cython"})
_CLASS = re.compile(r"[ \t]*(?:cdef[ \t]+(?:\w+[ \t]+)*)?class\b")
TEST_PATH = re.compile(
    r"(?:^|/)(?:tests?|testing|testdata|spec|specs|__tests__|examples?|samples?|demos?|benchmarks?)/"
    r"|(?:^|/)test_[^/]*$|_test\.\w+$|\.(?:test|spec)\.\w+$|Tests?\.(?:java|kt|cs|swift)$|(?:^|/)conftest\.py$",
    re.IGNORECASE,
)
#: a licence text by its name (``LICENSE``, ``LICENSE-MIT``, ``COPYING`` with or without a text suffix, ``copyright``), not ``license.js``
LICENCE_FILE = re.compile(r"(?:^|/)(?:un)?licen[cs]e(?:[-_][\w-]+)?(?:\.(?:md|markdown|txt|rst))?$|(?:^|/)(?:copying|copyright)(?:\.\w+)?$", re.I)
_IDENT = re.compile(r"\b[A-Za-z_]\w*\b")
#: loop counters and stock short names (one or two letters each: structural_features counts on it)
_COUNTERS = frozenset({"i", "j", "k", "n", "x", "y", "z", "_", "id", "ok", "fn", "db", "io", "os", "re", "np", "pd", "t", "e", "f"})
assert all(len(w) <= 2 for w in _COUNTERS)
#: keywords of the scored languages (distinct identifiers leave them out)
_KEYWORDS = (
    "and as assert async await break case catch class const continue def default del do elif else enum except export "
    "extends false final finally fn for from func function global go if impl import in interface is lambda let loop "
    "match mod mut new nil none not null or package pass pub raise return self static struct super switch this throw "
    "throws trait true try type typeof use var void while with yield int char float double long short unsigned signed "
    "bool boolean string str echo then fi done esac local readonly my sub unless elsif"
)
KEYWORDS = frozenset(_KEYWORDS.split())


def structural_features(text: str, language: str | None, path: str | None = None, cut: bool = False) -> dict[str, Any]:
    """Language-aware structure of one file (see the module docstring for the families; ``cut``: ``text``
    is the start of a longer file)."""
    family = language_family(language)
    lines = text.split("\n")
    # each line stripped once (blank lines strip to ""), for the counts and the duplicates alike
    stripped = list(map(str.strip, lines))
    n_nonblank = len(lines) - stripped.count("")
    # the few lines over 120 characters are picked out at C speed ((120).__lt__: longer than 120),
    # then the blank ones among them dropped
    long = list(compress(lines, map((120).__lt__, map(len, lines))))
    long_lines = len(long) - list(map(str.strip, long)).count("")
    feats: dict[str, Any] = {
        "family": family,
        "n_nonblank": n_nonblank,
        "long_line_fraction": long_lines / max(n_nonblank, 1),
        "duplicate_fraction": duplicate_fraction(stripped),
        "is_test_or_example": bool(path and TEST_PATH.search(path)),
        "is_stub": bool(path and path.endswith(".pyi")),
    }
    if family == "python":
        feats.update(_python_features(text, lines, stripped, dialect=language in PARSER_DIALECTS or cut))
    else:
        feats.update(_scanned_features(text, family, lines, stripped, cut))
    # lines of code other than comments and bare strings (docstrings: masked to "" on a line of their own)
    rows = [] if path and LICENCE_FILE.search(path) else list(map(str.strip, feats["_code"].split("\n")))
    feats["code_lines"] = len(rows) - rows.count("") - rows.count('""')
    names = feats.pop("_names")
    feats["n_functions"] = len(names)
    pattern = NAMING.get(family)
    if names and pattern is not None:
        feats["naming_fraction"] = sum(bool(pattern.match(n)) for n in names) / len(names)
    elif names:  # no house convention (C, shell…): consistency of the dominant style
        snake = sum("_" in n or n.islower() for n in names)
        feats["naming_fraction"] = max(snake, len(names) - snake) / len(names)
    else:
        feats["naming_fraction"] = -1.0
    feats["short_name_fraction"] = sum(len(n) <= 2 for n in names) / len(names) if names else 0.0
    idents = identifiers(feats.pop("_code")[:200_000]) - KEYWORDS
    lengths = list(map(len, idents))
    feats["mean_identifier_length"] = sum(lengths) / len(idents) if idents else 0.0
    # one- and two-letter names (a, b, r, go) beyond the loop counters every language allows, counted
    # without a Python step per identifier (every counter is one or two letters long)
    short = lengths.count(1) + lengths.count(2) - len(idents & _COUNTERS)
    feats["short_identifier_fraction"] = short / len(idents) if idents else 0.0
    return feats


#: ASCII byte → itself for word characters (``[A-Za-z0-9_]``), a space for the others
_WORD_BYTES = bytes(c if chr(c).isalnum() or c == ord("_") else ord(" ") for c in range(128)) + b" " * 128


def identifiers(code: str) -> set[str]:
    """The distinct matches of :data:`_IDENT` (word runs that do not start with a digit).

    ASCII code is split into its word runs by a byte table, which finds the same runs as the
    regex in a fraction of its time.

    >>> sorted(identifiers("x1 = _y + 2z(a_b)"))
    ['_y', 'a_b', 'x1']
    """
    if not code.isascii():
        return set(_IDENT.findall(code))
    runs = code.encode("ascii").translate(_WORD_BYTES).split()
    words = b" ".join(set(runs)).decode("ascii").split()
    # a run of word characters is an identifier exactly when it does not start with a digit
    return set(compress(words, map(str.isidentifier, words)))


def _python_features(text: str, lines: list[str], stripped: list[str], dialect: bool = False) -> dict[str, Any]:
    s = scan(text, "python")
    comment = len(s.comment_lines)
    out: dict[str, Any] = {"_code": s.code}
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # SyntaxWarning for invalid escapes in old code
            tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        if dialect:
            out.update(_indented_features(s, lines))
            return out
        out.update(parse_error=1, comment_fraction=comment / max(len(s.code_lines) + comment, 1), documented_fraction=0.0,
                   mean_function_lines=-1.0, max_function_lines=-1, max_nesting=_indent_nesting(lines, stripped), _names=[])
        return out
    doc_lines = 0
    defs = []
    documented = 0
    names: list[str] = []
    module_doc = ast.get_docstring(tree, clean=False)
    if module_doc:
        doc_lines += module_doc.count("\n") + 1
    nesting = 0
    # statements only: expressions cannot nest blocks, and skipping them makes this ~10x faster
    stack: list[tuple[list[ast.stmt], int]] = [(tree.body, 0)]
    while stack:
        body, depth = stack.pop()
        for node in body:
            kind = type(node)  # ast.parse makes nodes of the ast classes themselves, never subclasses
            d = depth + (kind in _BLOCKS)
            if d > nesting:
                nesting = d
            if kind in _DEFS:
                doc = ast.get_docstring(node, clean=False)
                if doc:
                    doc_lines += doc.count("\n") + 1
                documented += bool(doc) or lexical.comment_above(lines, node.lineno - 1 - len(node.decorator_list))
                names.append(node.name)
                if kind is not ast.ClassDef:
                    defs.append((node.end_lineno or node.lineno) - node.lineno + 1)
            fields, handlers = _BODIES.get(kind) or _BODIES.setdefault(kind, _body_fields(kind))
            for field in fields:
                child = getattr(node, field, None)
                if isinstance(child, list) and child and isinstance(child[0], ast.stmt):
                    stack.append((child, d))
            if handlers:
                for handler in getattr(node, handlers):
                    stack.append((handler.body, d))
    code_lines = max(len(s.code_lines) - doc_lines, 1)
    out.update(
        parse_error=0,
        comment_fraction=(comment + doc_lines) / max(code_lines + comment + doc_lines, 1),
        documented_fraction=documented / len(names) if names else -1.0,
        mean_function_lines=sum(defs) / len(defs) if defs else -1.0,
        max_function_lines=max(defs) if defs else -1,
        max_nesting=nesting,
        _names=names,
    )
    return out


def _indented_features(s: Any, lines: list[str]) -> dict[str, Any]:
    """:func:`_python_features` of a dialect :mod:`ast` cannot read (``s``: its scan): definitions, docstrings
    and block nesting from the indentation, ``parse_error`` 0 (unknown, as for the families never parsed)."""
    defs, nesting = indented_blocks(s.code)
    code = s.code.split("\n")
    docs = [_docstring_lines(lines, code, body) for _n, _f, _l, body in defs]
    documented = sum(bool(doc) or lexical.comment_above(lines, d[1]) for doc, d in zip(docs, defs, strict=True))
    doc_lines = sum(docs) + _docstring_lines(lines, code, 0)
    # functions (classes, ``cdef struct``/``enum`` blocks have no parameter list) as in the ast walk
    spans = [last - first + 1 for _n, first, last, _b in defs if "(" in code[first] and not _CLASS.match(code[first])]
    code_lines, comment = max(len(s.code_lines) - doc_lines, 1), len(s.comment_lines)
    return {"parse_error": 0, "comment_fraction": (comment + doc_lines) / max(code_lines + comment + doc_lines, 1),
            "documented_fraction": documented / len(defs) if defs else -1.0, "mean_function_lines": sum(spans) / len(spans) if spans else -1.0,
            "max_function_lines": max(spans) if spans else -1, "max_nesting": nesting, "_names": [d[0] for d in defs]}


def _docstring_lines(lines: list[str], code: list[str], at: int) -> int:
    """Lines of the docstring that opens at line ``at`` or the first code line after it (0 when none)."""
    j = next((k for k in range(at, len(code)) if code[k].strip()), None)
    if j is None or not code[j].strip().startswith('""'):
        return 0
    quote = next((q for q in ('"""', "'''") if q in lines[j]), None)
    if quote is None or lines[j].count(quote) >= 2:
        return 1
    return next((k - j + 1 for k in range(j + 1, len(lines)) if quote in lines[k]), 1)


_BLOCKS = frozenset((ast.If, ast.For, ast.AsyncFor, ast.While, ast.With, ast.AsyncWith, ast.Try) + (
    (ast.Match,) if hasattr(ast, "Match") else ()
))
_DEFS = frozenset((ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
#: statement class → (its fields that can hold statements, its field of handlers or cases): most
#: statements (Expr, Assign, Return…) have none, and the walk skips them without a getattr
_BODIES: dict[type, tuple[tuple[str, ...], str | None]] = {}


def _body_fields(kind: type) -> tuple[tuple[str, ...], str | None]:
    """The fields of ``kind`` the walk descends into (an entry of :data:`_BODIES`)."""
    fields: tuple[str, ...] = kind._fields  # type: ignore[attr-defined]
    return tuple(f for f in ("body", "orelse", "finalbody") if f in fields), next((f for f in ("handlers", "cases") if f in fields), None)


def _indent_nesting(lines: list[str], stripped: list[str]) -> int:
    """Distinct indentation widths of the non-blank lines (``stripped``: the lines stripped), at most 20."""
    steps = {len(ln) - len(ln.lstrip(" \t")) for ln, st in zip(lines, stripped, strict=True) if st}
    steps.discard(0)
    return min(len(steps), 20)


def _scanned_features(text: str, family: str, lines: list[str], stripped: list[str], cut: bool = False) -> dict[str, Any]:
    s = scan(text, family)
    spans = definitions(s, family)
    names = [sp[0] for sp in spans]
    rows = s.code.split("\n")
    heads = [lexical.declaration_start(rows, first) for _n, first, _l, _i in spans]
    documented = sum(lexical.comment_above(lines, head) or (head - 1) in s.comment_lines for head in heads)
    lengths = [last - first + 1 for _n, first, last, _i in spans]
    if spans:
        nesting = max(sp[3] for sp in spans)
    elif family in BRACE_FAMILIES:
        nesting = max(s.max_depth - 1, 0)
    else:
        nesting = _indent_nesting(lines, stripped)
    comment = len(s.comment_lines)
    return {
        "_code": s.code,
        "_names": names,
        "parse_error": int(family in BRACE_FAMILIES - {"shell", "perl"} and not (s.balanced_prefix if cut else s.balanced)),
        "comment_fraction": comment / max(len(s.code_lines | s.comment_lines), 1),
        "documented_fraction": documented / len(spans) if spans else -1.0,
        "mean_function_lines": sum(lengths) / len(lengths) if lengths else -1.0,
        "max_function_lines": max(lengths) if lengths else -1,
        "max_nesting": nesting,
    }
