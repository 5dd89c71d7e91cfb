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
BRACE_FAMILIES = frozenset({"c", "java", "go", "rust", "javascript", "perl", "shell", "r"})


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


def scan(text: str, family: str) -> Scan:
    """Mask comments and strings of ``text`` for ``family`` and measure the brace structure."""
    lexer = LEXERS.get(family, LEXERS["other"])
    comment_lines: set[int] = set()
    pieces: list[str] = []
    last = 0
    line = 0
    for m in lexer.finditer(text):
        if m.start() == m.end():
            continue
        pieces.append(text[last : m.start()])
        line += text.count("\n", last, m.start())
        body = m.group(0)
        nl = body.count("\n")
        if m.group(1) is not None or (m.group(2) not in (None, "")):
            comment_lines.update(range(line, line + nl + 1))
            pieces.append("\n" * nl)
        else:
            pieces.append('""' + "\n" * nl)
        line += nl
        last = m.end()
    pieces.append(text[last:])
    code = "".join(pieces)
    code_lines_list = code.split("\n")
    code_lines = {i for i, ln in enumerate(code_lines_list) if ln.strip()}
    depth, max_depth, balanced = _brace_profile(code, len(code_lines_list))
    return Scan(code, comment_lines, code_lines, depth, max_depth, balanced, len(code_lines_list))


def _brace_profile(code: str, n_lines: int) -> tuple[np.ndarray, int, bool]:
    buf = np.frombuffer(code.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    step = np.zeros(len(buf), dtype=np.int32)
    step[buf == ord("{")] = 1
    step[buf == ord("}")] = -1
    depth_after = np.cumsum(step)
    max_depth = int(depth_after.max()) if len(depth_after) else 0
    paren = np.cumsum((buf == ord("(")).astype(np.int32) - (buf == ord(")")))
    bracket = np.cumsum((buf == ord("[")).astype(np.int32) - (buf == ord("]")))
    balanced = True
    for run in (depth_after, paren, bracket):
        if len(run) and (run.min() < 0 or run[-1] != 0):
            balanced = False
    newlines = np.flatnonzero(buf == ord("\n"))
    # depth at the start of each line = depth after the previous newline
    starts = np.concatenate([[0], depth_after[newlines]]) if len(buf) else np.zeros(1, dtype=np.int32)
    return starts[:n_lines].astype(np.int32), max_depth, balanced


def function_spans(s: Scan, pattern: re.Pattern[str]) -> list[tuple[str, int, int, int]]:
    """(name, first line, last line, nesting inside) of each brace-bodied definition ``pattern`` finds.

    ``pattern`` must match the header up to and including the opening brace and capture the
    name in a named group (the first non-empty named group is the name).
    """
    lines = s.code.split("\n")
    offsets = np.cumsum([0] + [len(ln) + 1 for ln in lines])
    out = []
    for m in pattern.finditer(s.code):
        brace = s.code.find("{", m.end() - 1)
        if brace < 0 or s.code.count("\n", m.end(), brace) > 3:
            continue
        first = int(np.searchsorted(offsets, m.start(), side="right")) - 1
        open_line = int(np.searchsorted(offsets, brace, side="right")) - 1
        base = int(s.depth[open_line]) if open_line < len(s.depth) else 0
        last = len(s.depth) - 1
        inner = 0
        for j in range(open_line + 1, len(s.depth)):
            if s.depth[j] <= base:
                last = j - 1  # the closing brace was on the previous line
                break
            inner = max(inner, int(s.depth[j]) - base - 1)
        name = next((v for v in m.groupdict().values() if v), "")
        out.append((name, first, max(last, first), inner))
    return out
