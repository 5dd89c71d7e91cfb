"""The array form of ``classifiers.code_quality_scan`` pinned to the per-match / per-line form it replaces."""

from __future__ import annotations

import gzip
import json
import random
import re
from pathlib import Path

import numpy as np
import pytest

from classifiers.code_quality_defs import DEFINITIONS
from classifiers.code_quality_features import structural_features
from classifiers.code_quality_scan import LEXERS, function_spans, scan
from curation.quality.code_language import detect_language, language_family
from tests.classifiers.test_code_regex_budget import _adversarial


def reference_scan(text: str, family: str) -> tuple:
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
    depth, max_depth, balanced = reference_brace_profile(code, len(code_lines_list))
    return code, comment_lines, code_lines, depth, max_depth, balanced, len(code_lines_list)


def reference_brace_profile(code: str, n_lines: int) -> tuple[np.ndarray, int, bool]:
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
    starts = np.concatenate([[0], depth_after[newlines]]) if len(buf) else np.zeros(1, dtype=np.int32)
    return starts[:n_lines].astype(np.int32), max_depth, balanced


def reference_function_spans(code: str, depth: np.ndarray, pattern: re.Pattern[str]) -> list[tuple[str, int, int, int]]:
    lines = code.split("\n")
    offsets = np.cumsum([0] + [len(ln) + 1 for ln in lines])
    out = []
    for m in pattern.finditer(code):
        brace = code.find("{", m.end() - 1)
        if brace < 0 or code.count("\n", m.end(), brace) > 3:
            continue
        first = int(np.searchsorted(offsets, m.start(), side="right")) - 1
        open_line = int(np.searchsorted(offsets, brace, side="right")) - 1
        base = int(depth[open_line]) if open_line < len(depth) else 0
        last = len(depth) - 1
        inner = 0
        for j in range(open_line + 1, len(depth)):
            if depth[j] <= base:
                last = j - 1
                break
            inner = max(inner, int(depth[j]) - base - 1)
        name = next((v for v in m.groupdict().values() if v), "")
        out.append((name, first, max(last, first), inner))
    return out


def check(text: str, family: str) -> None:
    s = scan(text, family)
    code, comment_lines, code_lines, depth, max_depth, balanced, n_lines = reference_scan(text, family)
    assert s.code == code
    assert s.comment_lines == comment_lines
    assert s.code_lines == code_lines
    assert s.depth.dtype == depth.dtype and np.array_equal(s.depth, depth)
    assert (s.max_depth, s.balanced, s.n_lines) == (max_depth, balanced, n_lines)
    for pattern in DEFINITIONS.values():
        assert function_spans(s, pattern) == reference_function_spans(code, depth, pattern)


FAMILIES = sorted(LEXERS)
CASES = [
    "",
    "\n",
    "x",
    'int f(int a) { /* hi */\n  if (a) { return "}"; }\n}\n',
    "/* unclosed\ncomment",
    "/* a */ /* b */\n// c\n\n",
    'def f():\n    """doc\n    more"""\n    return "a" + \'b\'  # note\n',
    "s = `multi\nline ${x}`;\nconst r = /a[/]b/g;\n",
    "func (s *S) Run() error {\n\treturn nil\n}\n",
    "fn main() {\n    let s = r#\"raw\n\"#;\n    if x { y() }\n}\n",
    "# shell\nf() {\n  echo \"$1\" # tail\n}\n",
    "=pod\ndoc\n=cut\nsub f {\n  return 1;\n}\n",
    "=begin\nx\n=end\nputs 'a'\n",
    "-- lua\n--[[ block\n]] print(\"x\")\n",
    "int 中文(void) {\n  return '字';\n}\n",
    "void f() {\u3000\n\xa0\n  /* 😀 */ g(\"\ud800\");\n}\n}\n",
    "\x1c\x1d\n\x85\u2028 a\n",
    "))((\n[[]]\n{{{\n",
    "class A {\n  void m() {\n    if (x) {\n      y();\n    }\n  }\n}\n",
]


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("text", CASES)
def test_scan_edge_cases(text: str, family: str) -> None:
    check(text, family)


def test_scan_adversarial_texts() -> None:
    for text in _adversarial():
        for family in ("c", "python", "javascript", "perl"):
            check(text, family)


def test_scan_random_texts() -> None:
    rng = random.Random(11)
    alphabet = list("abc xyz_09{}()[];,\n\t\"'`#/*-=\\r$@:<>") + ["\xa0", "\u3000", "é", "中", "😀", "\x85", "\u2028", "=pod\n", "=cut\n",
                                                               "--[[", "]]", '"""', "fn ", "func ", "def ", "sub ", "function "]
    for _ in range(600):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 200)))
        check(text, rng.choice(FAMILIES))


def test_scan_sample_code() -> None:
    path = Path(__file__).resolve().parents[2] / "sample_data" / "code" / "code.jsonl.gz"
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        docs = [json.loads(line) for line in fh]
    assert docs
    for doc in docs:
        text, path_ = doc["text"], doc.get("path")
        family = language_family(doc.get("language") or detect_language(path_, text))
        check(text[:50_000], family)
        structural_features(text, doc.get("language"), path_)




def test_identifiers_match_the_regex() -> None:
    from classifiers.code_quality_features import _IDENT, KEYWORDS, identifiers

    rng = random.Random(5)
    alphabet = list("abXY_09 \t\n.,;()[]{}-+*/\\'\"\x1c\x0b") + ["é", "中", "😀", "\ud800"]
    texts = [*CASES, "if x then else foo_bar _x é1 9ab ab9 self this", "for i in range(n): yield i", "1_000 0x1f __init__ _9 9_"]
    texts += ["".join(rng.choice(alphabet[: -4 if i % 2 else None]) for _ in range(rng.randint(0, 200))) for i in range(600)]
    for text in texts:
        for code in (text, scan(text, "python").code):
            assert identifiers(code) == set(_IDENT.findall(code))
            assert identifiers(code) - KEYWORDS == {w for w in _IDENT.findall(code) if w not in KEYWORDS}


def test_structural_features_match_the_reference_scan(monkeypatch: pytest.MonkeyPatch) -> None:
    import classifiers.code_quality_features as features
    from classifiers.code_quality_scan import Scan

    path = Path(__file__).resolve().parents[2] / "sample_data" / "code" / "code.jsonl.gz"
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        docs = [json.loads(line) for line in fh][:150]
    docs += [{"text": t, "language": lang, "path": None} for t in CASES for lang in ("C", "Go", "JavaScript", "Python", "Shell", None)]
    got = [features.structural_features(d["text"], d.get("language"), d.get("path")) for d in docs]
    monkeypatch.setattr(features, "scan", lambda text, family: Scan(*reference_scan(text, family)))
    want = [features.structural_features(d["text"], d.get("language"), d.get("path")) for d in docs]
    assert got == want
