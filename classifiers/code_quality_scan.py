"""Cheap lexical scans of source code: comments and strings masked out, brace depth, functions.

One regex per syntax family finds comments and string literals; :func:`scan` returns the code
with strings emptied and comments removed (line structure kept), the set of comment lines and
the brace-depth profile, from which nesting, balance (a parse-error proxy) and function bodies
follow. No parser is needed, so every C-like language is handled the same way.

>>> s = scan('int f(int a) { /* hi */\\n  if (a) { return "}"; }\\n}\\n', "c")
>>> s.comment_lines, s.max_depth, s.balanced
({0}, 2, True)
"""

from __future__ import annotations

import dataclasses
import re
from itertools import compress
from itertools import count as count_from

import numpy as np

_C_STR = r'"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n]){1,10}\''
#: family → regex whose groups are (line comment, block comment, string).
#: (DOTALL everywhere: ``.*?`` spans lines; ``(?:.|\n)*?`` gave each newline two ways to match,
#: exponential on an unclosed raw string.)
LEXERS: dict[str, re.Pattern[str]] = {
    "c": re.compile(rf"(//[^\n]*)|(/\*.*?(?:\*/|\Z))|({_C_STR})", re.DOTALL),
    "java": re.compile(rf'(//[^\n]*)|(/\*.*?(?:\*/|\Z))|(""".*?"""|{_C_STR})', re.DOTALL),
    "go": re.compile(rf"(//[^\n]*)|(/\*.*?(?:\*/|\Z))|(`[^`]*`|{_C_STR})", re.DOTALL),
    "rust": re.compile(r'(//[^\n]*)|(/\*.*?(?:\*/|\Z))|(r#*".*?"#*|b?"(?:\\.|[^"\\])*"|b?\'(?:\\.|[^\'\\\n])\')', re.DOTALL),
    # JS strings of any length in either quote; regex literals after an operator or opening bracket
    "javascript": re.compile(
        r"(//[^\n]*)|(/\*.*?(?:\*/|\Z))|(`(?:\\.|[^`\\])*`|\"(?:\\.|[^\"\\\n])*\"|'(?:\\.|[^'\\\n])*'"
        r"|(?:(?<=[=(,:\[!&|?{};])|(?<=[=(,:\[!&|?{};] ))/(?![/*])(?:\\.|\[(?:\\.|[^\]\\\n])*\]|[^/\\\n\[])+/[gimsuyd]*)",
        re.DOTALL,
    ),
    "python": re.compile(
        r"(#[^\n]*)|(^)|([rbuRBUfF]{0,2}(?:\"\"\"(?:\\.|[^\\])*?\"\"\"|'''(?:\\.|[^\\])*?'''|\"(?:\\.|[^\"\\\n])*\"|'(?:\\.|[^'\\\n])*'))",
        re.DOTALL,
    ),
    "shell": re.compile(r"((?:(?<=\s)|^)#[^\n]*)|(^)|(\"(?:\\.|[^\"\\])*\"|'[^']*')", re.DOTALL | re.MULTILINE),
    "perl": re.compile(r"((?:(?<=\s)|^)#[^\n]*)|(^=\w+.*?^=cut\b)|(\"(?:\\.|[^\"\\])*\"|'(?:\\.|[^'\\])*')", re.DOTALL | re.MULTILINE),
    "ruby": re.compile(r"((?:(?<=\s)|^)#[^\n]*)|(^=begin.*?^=end)|(\"(?:\\.|[^\"\\])*\"|'(?:\\.|[^'\\])*')", re.DOTALL | re.MULTILINE),
    "lua": re.compile(r"(--(?!\[\[)[^\n]*)|(--\[\[.*?\]\])|(\"(?:\\.|[^\"\\\n])*\"|'(?:\\.|[^'\\\n])*')", re.DOTALL),
    "r": re.compile(r"(#[^\n]*)|(^)|(\"(?:\\.|[^\"\\])*\"|'(?:\\.|[^'\\])*')", re.DOTALL),
}
LEXERS["other"] = LEXERS["c"]
#: family → every character a non-empty lexer match can start with
LEADS: dict[str, str] = {
    "c": "/\"'", "java": "/\"'", "go": "/\"'`", "rust": "/\"'rb", "javascript": "/\"'`", "python": "#\"'rbuRBUfF",
    "shell": "#\"'", "perl": "#=\"'", "ruby": "#=\"'", "lua": "-\"'", "r": "#\"'", "other": "/\"'",
}
#: :data:`LEXERS` behind a lookahead for their :data:`LEADS`: the same non-empty matches and groups,
#: found 2–3x faster (a position that cannot start a match fails at the lookahead, before the
#: alternatives and their groups are tried). Empty matches (the ``(^)`` groups) may differ; scan skips them.
_LEXERS_FAST: dict[str, re.Pattern[str]] = {
    family: re.compile(f"(?=[{re.escape(LEADS[family])}])(?:{p.pattern})", p.flags) for family, p in LEXERS.items()
}
BRACE_FAMILIES = frozenset({"c", "java", "go", "rust", "javascript", "perl", "shell", "r"})


#: UTF-8 byte → 1 ``{``, 2 ``}``, 3 ``(``, 4 ``)``, 5 ``[``, 6 ``]``, 7 newline, 0 anything else (no byte
#: of a multi-byte UTF-8 sequence is ASCII, so the bytes of the code hold its brackets and lines)
_BRACKETS = np.zeros(256, dtype=np.uint8)
for _i, _c in enumerate("{}()[]\n"):
    _BRACKETS[ord(_c)] = _i + 1
_NEWLINE = 7
_ZERO = np.zeros(1, dtype=np.int32)  #: the depth at, and the offset of, the start of the first line
#: row r (braces, parentheses, brackets): the depth step of each bracket kind
_STEPS = np.zeros((3, 8), dtype=np.int32)
for _r, _opening in enumerate((1, 3, 5)):
    _STEPS[_r, _opening], _STEPS[_r, _opening + 1] = 1, -1


@dataclasses.dataclass
class Scan:
    """The result of :func:`scan`."""

    code: str  #: source with comments removed and string contents emptied
    comment_lines: set[int]  #: 0-based lines that hold a comment
    code_lines: set[int]  #: 0-based lines that hold code (after masking)
    depth: np.ndarray  #: brace depth at the start of each line of ``code``
    max_depth: int
    balanced: bool  #: braces, brackets and parentheses balance and never go negative
    n_lines: int
    line_starts: np.ndarray | None = None  #: offset in ``code`` of each line's first character (ASCII code only)
    #: no bracket closes one that was never opened: what a prefix of balanced code (a file cut short) satisfies
    balanced_prefix: bool = True


def scan(text: str, family: str) -> Scan:
    """Mask comments and strings of ``text`` for ``family`` and measure the brace structure."""
    lexer = _LEXERS_FAST.get(family, _LEXERS_FAST["other"])
    comment_lines: set[int] = set()
    pieces: list[str] = []
    append, count = pieces.append, text.count
    last = 0
    line = counted = 0  # ``line``: the line of offset ``counted`` (newlines are counted up to comments only)
    for m in lexer.finditer(text):
        start, end = m.span()
        if start == end:
            continue
        append(text[last:start])
        nl = count("\n", start, end)
        if m.lastindex != 3:  # group 1 or 2: a comment (group 3 is a string literal)
            line += count("\n", counted, start)
            comment_lines.update(range(line, line + nl + 1))
            line += nl
            counted = end
            append("\n" * nl)
        else:
            append('""' + "\n" * nl if nl else '""')
        last = end
    append(text[last:])
    code = "".join(pieces)
    code_lines_list = code.split("\n")
    # the numbers of the lines whose stripped text is not empty, without a Python loop per line
    code_lines = set(compress(count_from(), map(str.strip, code_lines_list)))
    depth, max_depth, balanced, newlines, prefix = _brace_profile(code)
    line_starts = np.concatenate((_ZERO, newlines + 1)) if code.isascii() else None
    return Scan(code, comment_lines, code_lines, depth, max_depth, balanced, len(code_lines_list), line_starts, prefix)


def _brace_profile(code: str) -> tuple[np.ndarray, int, bool, np.ndarray, bool]:
    """(depth at each line start, deepest depth, balanced, byte offsets of the newlines, balanced as a
    prefix: never negative), from the brackets and newlines of the code's UTF-8 bytes alone.

    The three depth runs (braces, parentheses, brackets) are one cumulative sum over a 3-row step
    table: a handful of numpy calls per file whatever its size, which small code blocks feel.
    """
    buf = np.frombuffer(code.encode("utf-8", "surrogatepass"), dtype=np.uint8)
    kinds = _BRACKETS.take(buf)
    at = kinds.nonzero()[0]  # np.flatnonzero without its Python wrapper (kinds is flat)
    kinds = kinds.take(at)
    # depth after each bracket or newline; int32 cannot overflow: a str has fewer than 2**31 characters here
    runs = _STEPS.take(kinds, axis=1).cumsum(axis=1, dtype=np.int32)
    prefix = not len(at) or bool(runs.min() >= 0)
    balanced = prefix and not (len(at) and runs[:, -1].any())
    depth_after = runs[0]
    # a character before the first bracket or newline is at depth 0
    max_depth = int(depth_after.max()) if len(at) else 0
    if len(buf) and (not len(at) or at[0] > 0):
        max_depth = max(max_depth, 0)
    newline = kinds == _NEWLINE
    # depth at the start of each line = depth after the previous newline
    starts = np.concatenate((_ZERO, depth_after[newline])) if len(buf) else np.zeros(1, dtype=np.int32)
    return starts, max_depth, balanced, at[newline], prefix


def duplicate_fraction(stripped: list[str], min_len: int = 12) -> float:
    """Share of substantial lines (≥ ``min_len`` characters; the lines given stripped, blank ones as
    "") that repeat an earlier one.

    >>> round(duplicate_fraction(["x = compute(1, 2)", "x = compute(1, 2)", "", "y = other_call()"]), 3)
    0.333
    """
    body = list(compress(stripped, map((min_len - 1).__lt__, map(len, stripped))))  # len >= min_len, at C speed
    if not body:
        return 0.0
    return 1.0 - len(set(body)) / len(body)


def function_spans(s: Scan, pattern: re.Pattern[str]) -> list[tuple[str, int, int, int]]:
    """(name, first line, last line, nesting inside) of each brace-bodied definition ``pattern`` finds.

    ``pattern`` must match the header up to and including the opening brace and capture the
    name in a named group (the first non-empty named group is the name).
    """
    offsets = s.line_starts if s.line_starts is not None else np.cumsum([0] + [len(ln) + 1 for ln in s.code.split("\n")])
    out = []
    for m in pattern.finditer(s.code):
        brace = s.code.find("{", m.end() - 1)
        if brace < 0 or s.code.count("\n", m.end(), brace) > 3:
            continue
        first = int(np.searchsorted(offsets, m.start(), side="right")) - 1
        open_line = int(np.searchsorted(offsets, brace, side="right")) - 1
        base = int(s.depth[open_line]) if open_line < len(s.depth) else 0
        last, inner = _body_end(s.depth, open_line, base)
        name = next((v for v in m.groupdict().values() if v), "")
        out.append((name, first, max(last, first), inner))
    return out


def _body_end(depth: np.ndarray, open_line: int, base: int) -> tuple[int, int]:
    """(last line of the body opened on ``open_line`` at depth ``base``, deepest nesting inside it):
    the body ends on the line before the first later line that starts at ``base`` or shallower."""
    window = 256  # most bodies end within it; the rest of the file is searched only when not
    while True:
        rest = depth[open_line + 1 : open_line + 1 + window]
        out = np.flatnonzero(rest <= base)
        if len(out) or open_line + 1 + window >= len(depth):
            break
        window = len(depth)
    body = rest[: out[0]] if len(out) else rest
    last = open_line + int(out[0]) if len(out) else len(depth) - 1
    return last, max(int(body.max()) - base - 1, 0) if len(body) else 0


#: a definition header of the Python family, Cython's included (``def``, ``class``, ``cpdef`` and
#: ``cdef`` functions, ``cdef class``); ``cdef int x`` declares a variable and does not match
INDENTED_DEFINITION = re.compile(r"^([ \t]*)(?:async[ \t]+)?(?:def[ \t]+|class[ \t]+|cp?def[ \t][^=\n:(]*?\b)(\w+)[ \t]*[(:]", re.MULTILINE)
_CONTROL = re.compile(r"[ \t]*(?:if|elif|else|for|while|with|try|except|finally|match|case|async[ \t]+(?:for|with))\b")


def indented_blocks(code: str) -> tuple[list[tuple[str, int, int, int]], int]:
    """Definitions of indentation-structured code (masked by :func:`scan` for ``python``) without a parser.

    Returns ((name, header line, last body line, first body line) of each definition with a body,
    deepest nesting of control-flow blocks). A header ends on the first line ending in ``:``; a
    declaration without a body (a ``.pxd`` prototype) is no definition.

    >>> defs, nesting = indented_blocks("cdef class A:\\n    cpdef int f(self, int n):\\n        if n:\\n            return 1\\n")
    >>> defs, nesting
    ([('A', 0, 3, 1), ('f', 1, 3, 2)], 1)
    """
    lines = code.split("\n")
    indents = [len(ln) - len(ln.lstrip(" \t")) if ln.strip() else -1 for ln in lines]
    offsets = np.cumsum([0] + [len(ln) + 1 for ln in lines])
    levels = np.array(indents)
    nonblank = levels >= 0
    defs = []
    for m in INDENTED_DEFINITION.finditer(code):
        first = int(np.searchsorted(offsets, m.start(), side="right")) - 1
        base, end = indents[first], first
        while not lines[end].rstrip().endswith(":"):
            end += 1
            if end >= len(lines) or end - first > 20 or 0 <= indents[end] <= base:
                end = -1
                break
        body = [j for j in range(end + 1, len(lines)) if indents[j] != -1][:1] if end >= 0 else []
        if not body or indents[body[0]] <= base:
            continue
        # the body ends before the next non-blank line indented no deeper than the header
        after = np.flatnonzero(nonblank[body[0]:] & (levels[body[0]:] <= base))
        stop = body[0] + int(after[0]) if len(after) else len(lines)
        last = int(np.flatnonzero(nonblank[:stop])[-1])
        defs.append((m.group(2), first, last, body[0]))
    nesting, stack = 0, []  # stack: (indent, control-flow depth) of the open blocks
    for ln, ind in zip(lines, indents, strict=True):
        if ind < 0:
            continue
        while stack and stack[-1][0] >= ind:
            stack.pop()
        depth = stack[-1][1] if stack else 0
        if ln.rstrip().endswith(":"):
            stack.append((ind, depth + bool(_CONTROL.match(ln))))
            nesting = max(nesting, stack[-1][1])
    return defs, nesting


def comment_above(lines: list[str], index: int) -> bool:
    """Whether the line before line ``index`` of ``lines`` starts with a comment leader."""
    j = index - 1
    return 0 <= j < len(lines) and lines[j].lstrip().startswith(("#", "//", "/*", "*", "///", "--"))


#: a line of a definition's header above its name: types, qualifiers, a template or an annotation
#: (``static PyObject *``, ``template <class T>``, ``Class::``, ``@Override``), no statement
_HEADER_LINE = re.compile(r"[\w \t:<>,~*&@\[\]]+")


def declaration_start(rows: list[str], first: int) -> int:
    """The first line of the definition whose name is on line ``first`` (``rows``: the masked code): up to
    three lines above it that hold only its return type and qualifiers, where its comment sits."""
    head = first
    while head > 0 and first - head < 3 and rows[head - 1].strip() and _HEADER_LINE.fullmatch(rows[head - 1].strip()):
        head -= 1
    return head
