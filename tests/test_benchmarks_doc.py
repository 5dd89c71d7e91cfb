"""BENCHMARKS.md is a reference, not a lab diary: it is exactly what
``benchmarks/build_benchmarks_md.py`` makes of the topics' RESULTS.md files, and neither it, the
README nor a comment or docstring of the code tells how a figure got there ("a third session",
"issue 20", "after the helper's change", "went from 243 to 169"): that is what git history is for.
"""

from __future__ import annotations

import importlib.util
import re
import tokenize
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

#: Words of a diary. "session" and "helper" only as words of their own (not ``start_new_session``,
#: ``insertion_session``, ``sh-session``, ``tests/helpers.py``, an HTTP or a client session, a
#: helper function); "round" only as a numbered or a "this/last round" of work, not an algorithm's
#: round.
DIARY = re.compile(r"""
    (?<![\w.\-/])(?<!http\ )(?<!client\ )sessions?\b
  | (?<![\w.\-/])helpers?\b(?!\.py|\ (?:functions?|modules?|class(?:es)?|scripts?)\b)
  | \bround\ (?:one|two|three|four|five|six|\d+)\b
  | \b(?:this|last|next|previous|earlier|later|that)\ round\b
  | \bissues?\ ?\#?\d+
  | \bwent\ from\b
  | \b(?:before|after|since)\ this\ change\b
  | \bthis\ branch\b
""", re.I | re.X)

#: Code whose comments and docstrings carry the history of the benchmarks.
CODE_DIRS = ("curation", "classifiers", "pipelines", "benchmarks")

#: Diary left in files that other work is changing at the same time: (path, the words found).
#: Each entry must still be found, so that it is removed here once its file is cleaned.
PENDING: set[tuple[str, str]] = set()


def _build_module():
    path = REPO / "benchmarks" / "build_benchmarks_md.py"
    spec = importlib.util.spec_from_file_location("build_benchmarks_md", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _comments_and_strings(path: Path):
    """(line, text) of every comment and string literal (docstrings included) of a Python file."""
    with path.open() as f:
        for tok in tokenize.generate_tokens(f.readline):
            if tok.type in (tokenize.COMMENT, tokenize.STRING):
                yield tok.start[0], tok.string


def _diary_in_code() -> tuple[list[tuple[str, int, str]], int]:
    """(path, line, words) of every diary match in the code's comments and strings; files read."""
    found, files = [], 0
    for folder in CODE_DIRS:
        for path in sorted((REPO / folder).rglob("*.py")):
            files += 1
            rel = path.relative_to(REPO).as_posix()
            for line, text in _comments_and_strings(path):
                found += [(rel, line, m.group(0).lower()) for m in DIARY.finditer(text)]
    return found, files


def test_benchmarks_md_is_what_the_build_script_makes_of_the_results_files() -> None:
    built = _build_module().render()
    topics = sorted(p.parent.name for p in (REPO / "benchmarks").glob("*/RESULTS.md"))
    assert len(topics) >= 10
    for topic in topics:  # every topic's title is a section of the page
        title = (REPO / "benchmarks" / topic / "RESULTS.md").read_text().strip().splitlines()[0]
        assert title.startswith("# ") and "#" + title in built, topic
    assert (REPO / "BENCHMARKS.md").read_text() == built, (
        "BENCHMARKS.md differs from the RESULTS.md files: run `python benchmarks/build_benchmarks_md.py`")


@pytest.mark.parametrize("text", [
    "issue 20, a third session", "Issue 17's measure", "the helper who built this benchmark",
    "after the helper's change", "other helpers' jobs", "round two", "last round's figure",
    "web_quality went from 243 tasks to 169", "the code before this change", "this branch",
    "figures of this session", "issue #38",
])
def test_the_pattern_finds_diary(text: str) -> None:
    assert DIARY.search(text)


@pytest.mark.parametrize("text", [
    "start_new_session=True", "with lsh.insertion_session() as s:", '"sh-session": "Shell"',
    "tests/helpers.py has make_stage_dir", "a helper function of the kit", "an HTTP session",
    "the Dask client session", "one round of min-label propagation", "each round is a shuffle",
    "issues_prs_commits/threads", "GLM-4.5 §2.2",
])
def test_the_pattern_spares_legitimate_uses(text: str) -> None:
    assert not DIARY.search(text)


@pytest.mark.parametrize("doc", ["BENCHMARKS.md", "README.md"])
def test_the_documents_read_as_a_reference(doc: str) -> None:
    bad = [f"{doc}:{i}: {m.group(0)!r} in {line.strip()[:100]}"
           for i, line in enumerate((REPO / doc).read_text().splitlines(), 1) for m in DIARY.finditer(line)]
    assert not bad, "state today's figure and behaviour; the history is in git:\n" + "\n".join(bad)


def test_comments_and_docstrings_state_todays_behaviour() -> None:
    found, files = _diary_in_code()
    assert files > 100  # the scan reads the packages, not an empty list
    bad = [f"{path}:{line}: {words!r}" for path, line, words in found if (path, words) not in PENDING]
    assert not bad, "comments and docstrings say what the code does today, not how it got there:\n" + "\n".join(bad)
    stale = PENDING - {(path, words) for path, _, words in found}
    assert not stale, f"cleaned since: remove from PENDING {sorted(stale)}"

