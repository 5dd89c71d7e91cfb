"""Definition headers per language family: the pattern that finds a brace-bodied definition and its name, and
the words that are never a function's name in that family (a statement or operator the pattern also reads,
such as C's ``sizeof (…) {`` or JavaScript's ``if (…) {``).

>>> [m["name"] for m in C_DEFINITION.finditer("static int __attribute__((unused)) f(void) {\\n}\\n")]
['f']
>>> from classifiers.code_quality_scan import scan
>>> [d[0] for d in definitions(scan("int n(void) {\\n  else if (x) {\\n  }\\n}\\n", "c"), "c")]
['n']
>>> sorted(NOT_NAMES["c"] & {"sizeof", "function", "if"}), "function" in NOT_NAMES["javascript"]
(['if', 'sizeof'], True)
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from classifiers.code_quality_scan import function_spans

if TYPE_CHECKING:
    from classifiers.code_quality_scan import Scan

#: balanced parentheses, three levels, possessive: ``\([^;{}]*\)`` backtracked over every later ``)`` from
#: each line start (40 s for 200 KB of ``f (x)`` lines)
PARAMS = r"\((?:[^;{}()]|\((?:[^;{}()]|\([^;{}()]*+\))*+\))*+\)"
_TARGS = r"<[\w:, \t*&]*+(?:<[\w:, \t*&]*+>[\w:, \t*&]*+)*+>"  # template arguments, two levels: ``<std::vector<T>>``
#: an attribute among the return type's tokens: ``__attribute__((unused))``, ``__declspec(dllexport)``,
#: ``alignas(16)``, ``[[nodiscard]]``
_ATTRIBUTE = rf"(?:(?:__attribute__|__attribute|__declspec|alignas|_Alignas)[ \t]*+{PARAMS}|\[\[[^\[\]\n]*+\]\])"
#: a line that starts no definition: a statement (``else if (…)``, ``return f(…)``), a namespace
#: (``namespace std _GLIBCXX_VISIBILITY(default)``), a struct, union, enum or class named by a macro (``struct NAME(n) {``)
_NO_HEAD = (r"(?![ \t]*+(?:(?:else|if|return|case|goto|do|while|for|switch|throw|namespace)\b"
            r"|(?:struct|union|enum|class)[ \t]++[A-Za-z_]\w*+[ \t]*+\())")
#: a C/C++ definition header up to its opening brace, name in group ``name`` (``ctor``). Type tokens and
#: separators are disjoint and possessive (with ``*`` in both, a comment rule of 80 asterisks took 2^80 ways to
#: split and a worker hung for good); every span that may cross lines is capped at 16 lines. The layouts: the
#: return type before the name or on the line above a name at the line start (GNU, BSD: ``static int⏎name(…)``),
#: attributes among its tokens (``static int __attribute__((unused)) f(void)``); a name qualified by classes
#: and their template arguments (``Foo<T>::bar``, ``A::~A``) or an operator (``operator==``); the body's brace
#: on the next line (K&R, Allman: ``name(…)⏎{``); a constructor's initializer list (``A::A(int x)⏎    : x_(x),⏎
#: y_(0)⏎{``), which also finds an indented constructor in its class's body, with ``noexcept(…)``,
#: ``requires (…)`` or a macro's ``NAME(…)`` on lines before the list; old-style parameters, a list of names
#: declared on the lines before the brace (``add(a, b)⏎int a;⏎{``)
_INIT = r"(?:\n[ \t]*+[\w,][^;{}\n]*+){0,16}+"  # the lines an initializer list goes on over
_SPECS = rf"(?:\n[ \t]*+(?:noexcept|requires|[A-Z_][A-Z0-9_]*+)[ \t]*+{PARAMS}[^;{{}}\n:]*+){{0,3}}+"
C_DEFINITION = re.compile(
    rf"^{_NO_HEAD}(?:[ \t]*(?:(?:{_ATTRIBUTE}|[\w:<>,~]++)[ \t*&]++)+)?"
    rf"(?P<name>(?:[A-Za-z_~]\w*+(?:{_TARGS})?+::)*+"
    r"(?:operator[ \t]*+(?:\(\)|\[\]|[-+*/%^&|~!=<>,]{1,3}+|(?:new|delete)(?:\[\])?+)|[A-Za-z_~][\w:~]*+))[ \t]*+"
    rf"(?:{PARAMS}[^;{{}}\n]*+(?:(?:(?<=[:,])|(?<=[:,][ \t])|\n[ \t]*+:(?!:)[^;{{}}\n]*+){_INIT})?"
    r"|\([ \t]*+[A-Za-z_]\w*+(?:[ \t]*+,[ \t]*+[A-Za-z_]\w*+)*+[ \t]*+\)[ \t]*+"
    r"(?:\n[ \t]*+(?:[A-Za-z_][\w \t*,\[\]]*+;[ \t]*+)++){1,16}+)(?:\n[ \t]*)?\{"
    # a constructor in its class's body: indented, no return type, an initializer list
    rf"|^[ \t]++(?P<ctor>[A-Za-z_]\w*+)[ \t]*+{PARAMS}[^;{{}}\n:]*+{_SPECS}(?:\n[ \t]*+)?:(?!:)[^;{{}}\n]*+{_INIT}"
    r"(?:\n[ \t]*)?\{",
    re.MULTILINE,
)
#: family → definition header (name in group ``name``), up to the opening brace; other unbounded spans
#: before a brace are capped at 4,000
DEFINITIONS: dict[str, re.Pattern[str]] = {
    "c": C_DEFINITION,  # C's and C++'s common layouts: see there
    "java": re.compile(
        r"^[ \t]*(?:(?:public|private|protected|static|final|abstract|synchronized|override|open|suspend|fun|func|def)\s+)*"
        r"(?:[\w<>\[\],.?]+\s+)?(?P<name>[A-Za-z_]\w*)\s*" + PARAMS + r"\s*+(?:throws [\w., ]+)?[^;{}=\n]*+\{", re.M),
    "go": re.compile(r"^func\s+(?:\([^)]*\)\s*)?(?P<name>\w+)\s*(?:\[[^\]]*\])?\([^{]{0,4000}+\{", re.MULTILINE),
    "rust": re.compile(r"^[ \t]*(?:pub(?:\([^)]*\))?\s+)?(?:const\s+|async\s+|unsafe\s+|extern\s+\"C\"\s+)*fn\s+(?P<name>\w+)[^{;]{0,4000}+\{", re.M),
    "javascript": re.compile(
        r"(?:^|[;\s])(?:async\s+)?function\s*\*?\s*(?P<name>[\w$]+)\s*\([^)]{0,4000}+\)\s*\{"
        r"|^[ \t]*(?:(?:static|async|get|set|public|private|protected)\s+)*(?P<m>[\w$]+)\s*\([^)]{0,4000}+\)\s*(?::[^{;]{0,4000}+)?\{"
        r"|(?:const|let|var)\s+(?P<a>[\w$]+)\s*=\s*(?:async\s*)?(?:\([^)]{0,4000}+\)|[\w$]+)\s*=>\s*\{",
        re.MULTILINE,
    ),
    "shell": re.compile(r"^[ \t]*(?:function\s+)?(?P<name>[\w:.-]+)\s*\(\s*\)\s*\{|^[ \t]*function\s+(?P<f>[\w:.-]+)\s*\{", re.MULTILINE),
    "perl": re.compile(r"^[ \t]*sub\s+(?P<name>\w+)\s*\{", re.MULTILINE),
    # a name starts where a run of name characters starts: a scan restarted inside the run is quadratic in its length
    "r": re.compile(r"(?<![\w.])(?P<name>[\w.]+)\s*(?:<-|=)\s*function\s*\([^)]*\)\s*\{", re.MULTILINE),
}
#: statements a definition pattern reads as a name followed by parentheses and a brace (``if (…) {``)
_STATEMENTS = frozenset({"if", "for", "while", "switch", "catch", "function", "return", "with", "else", "do"})
#: C and C++ words that head parentheses before a brace and are no function's name: statements (``else if``,
#: ``if constexpr``), operators on types and expressions (``sizeof``, ``alignof``, ``decltype``, ``defined``),
#: attributes and assertions (``__attribute__((packed))``, ``_Static_assert``), trailing specifiers (``noexcept``,
#: ``requires``). ``function`` is a name here (``std::function``'s constructors, ``func_decl function(…)``).
_C_NOT_NAMES = (
    "if else for while do switch case return goto catch try throw co_await co_return co_yield sizeof alignof "
    "_Alignof __alignof__ __alignof alignas _Alignas decltype typeof __typeof__ __typeof typeof_unqual typeid "
    "noexcept constexpr consteval constinit requires static_assert _Static_assert defined __attribute__ "
    "__attribute __declspec asm __asm__ __asm _Generic _Pragma __pragma __has_include __has_attribute "
    "__has_builtin __has_feature __has_cpp_attribute __extension__"
)
C_NOT_NAMES = frozenset(_C_NOT_NAMES.split())
#: family → names its definition pattern finds that are no definitions (the statements for a family not listed)
NOT_NAMES: dict[str, frozenset[str]] = {"c": C_NOT_NAMES, "javascript": _STATEMENTS}


def not_names(family: str) -> frozenset[str]:
    """The names a definition of ``family`` never has (see :data:`NOT_NAMES`)."""
    return NOT_NAMES.get(family, _STATEMENTS)


def definitions(s: Scan, family: str) -> list[tuple[str, int, int, int]]:
    """(name, first line, last line, nesting inside) of each definition of ``family`` in the scanned code ``s``
    (:func:`classifiers.code_quality_scan.function_spans` of its :data:`DEFINITIONS` pattern), without the
    matches whose name is one of :func:`not_names` (``if (…) {``, ``sizeof (…) {``); none for a family
    without a pattern."""
    pattern = DEFINITIONS.get(family)
    if pattern is None:
        return []
    excluded = not_names(family)
    return [span for span in function_spans(s, pattern) if span[0] not in excluded]
