"""Code the docs quote from the source stays true: a block under ``<!-- from: PATH -->`` must
appear verbatim in PATH (docs/adding-a-stage.md quotes a row filter and a group stage whole)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
QUOTE = re.compile(r"<!-- from: (?P<path>\S+) -->\n```python\n(?P<code>.*?)```", re.S)
DOCS = sorted((REPO / "docs").glob("*.md")) + [REPO / "README.md"]


def _quotes() -> list[tuple[str, str, str]]:
    return [(doc.name, m["path"], m["code"]) for doc in DOCS for m in QUOTE.finditer(doc.read_text())]


def test_the_stage_guide_quotes_a_row_filter_and_a_group_stage_whole() -> None:
    quoted = {path: code for doc, path, code in _quotes() if doc == "adding-a-stage.md"}
    for path in ("pipelines/stages/repeated_lines.py", "pipelines/stages/exact_dedup.py"):
        assert quoted.get(path) == (REPO / path).read_text(), f"docs/adding-a-stage.md no longer quotes {path} whole"


@pytest.mark.parametrize(("doc", "path", "code"), _quotes(), ids=lambda v: v if isinstance(v, str) and len(v) < 60 else "")
def test_quoted_code_is_in_its_file(doc: str, path: str, code: str) -> None:
    assert code in (REPO / path).read_text(), f"{doc} quotes {path}, but the file no longer has that code: update the doc"
