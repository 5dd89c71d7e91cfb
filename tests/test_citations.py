"""No file of the repository points at a document the repository does not hold: the docs, the
code's comments and the recipe cite files that a reader of a clean clone can open."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
#: Documents of the team's own workspace that the repository never ships.
OUTSIDE = re.compile(r"\b(?:DESIGN|STYLE|CONTRIBUTING)\.md|\.\./shared/(?!data\b)")
#: Markdown links to a local file: [text](path) without a scheme or an anchor-only target.
LINK = re.compile(r"\]\((?!https?:|mailto:|#)(?P<path>[^)\s#]+)(?:#[^)]*)?\)")
TEXT = (".py", ".md", ".yaml", ".yml", ".toml", ".cfg", ".txt")


def _tracked() -> list[Path]:
    out = subprocess.run(["git", "ls-files"], cwd=REPO, capture_output=True, text=True, check=True).stdout.split()
    # sample_data holds documents of other projects as data (a handbook's contributing guide is text, not a citation)
    return [REPO / p for p in out if p.endswith(TEXT) and not p.startswith("sample_data/") and (REPO / p).is_file()]


def test_no_file_cites_a_document_outside_the_repository() -> None:
    files = _tracked()
    assert len(files) > 50  # the scan sees the repository, not an empty list
    bad = [f"{p.relative_to(REPO)}:{i}: {m.group(0)}" for p in files if p != Path(__file__)
           for i, line in enumerate(p.read_text(errors="replace").splitlines(), 1) for m in [OUTSIDE.search(line)] if m]
    assert not bad, "cite a file of the repository (docs/) instead:\n" + "\n".join(bad)


def test_markdown_links_point_at_files_that_exist() -> None:
    docs = [p for p in _tracked() if p.suffix == ".md"]
    assert any(p.name == "README.md" for p in docs)
    broken = []
    for doc in docs:
        for m in LINK.finditer(doc.read_text()):
            target = (doc.parent / m["path"]).resolve()
            if not target.exists():
                broken.append(f"{doc.relative_to(REPO)} → {m['path']}")
    assert not broken, "broken links:\n" + "\n".join(broken)
