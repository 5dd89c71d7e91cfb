"""docs/ingest.md, "Adding a source": a source added to ``SOURCES`` (here in-process, as a line added to
curation/schema.py would) goes end to end with the recipe the page shows: ingest, URL dedup, the
stages' ``sources``, a phase's mix and its group."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

import curation.schema
from pipelines.cli import main as curate
from tests.helpers import only, read_parts

REPO = Path(__file__).resolve().parents[2]
WORDS = "members of the gardening forum compare notes on tomatoes, soil, watering and the weather this season"


def _page_recipe() -> str:
    """The YAML block of the page's "Adding a source" section."""
    section = (REPO / "docs" / "ingest.md").read_text().split("## Adding a source", 1)[1].split("\n## ", 1)[0]
    return re.search(r"```yaml\n(.*?)```", section, re.S).group(1)


@pytest.fixture
def forum(monkeypatch: pytest.MonkeyPatch) -> None:
    """``forum`` in SOURCES, and in every module that imported the tuple by name."""
    sources = curation.schema.SOURCES
    for module in list(sys.modules.values()):
        if getattr(module, "SOURCES", None) is sources:
            monkeypatch.setattr(module, "SOURCES", (*sources, "forum"))


def test_a_source_added_to_sources_runs_end_to_end_with_the_pages_recipe(tmp_path: Path, forum: None, caplog) -> None:
    raw = tmp_path / "raw"
    raw.mkdir()
    posts = [
        {"id": f"p{i}", "text": f"Post {i}: {WORDS} {i}.", "url": f"https://forum.example/t/{i}"} for i in range(4)
    ]
    posts.append({"id": "again", "text": f"Post 0 quoted: {WORDS}.", "url": "https://forum.example/t/0"})
    (raw / "forum_posts.jsonl").write_text("".join(json.dumps(p) + "\n" for p in posts))
    recipe = tmp_path / "forum.yaml"
    recipe.write_text(_page_recipe())
    out = tmp_path / "run"
    args = [
        "run",
        str(recipe),
        "--input",
        str(raw),
        "--output",
        str(out),
        "--scheduler",
        "synchronous",
        "--quiet",
        *only("minhash_dedup", "mixture"),
        "ingest.tokenizer=whitespace",
        "mixture.tokenizer=whitespace",
    ]
    assert curate(args) == 0, caplog.text
    docs = read_parts(out / "00_ingest" / "docs")
    assert sorted(docs["doc_id"]) == ["p0", "p1", "p2", "p3"] and set(docs["source"]) == {"forum"}
    ledger = read_parts(out / "00_ingest" / "ledger")
    assert ledger[["doc_id", "reason"]].values.tolist() == [["again", "duplicate_url"]]  # url_dedup_sources
    mixture = next(out.glob("*_mixture"))
    groups = read_parts(mixture / "docs")["mixture_group"]
    assert set(groups) == {"forum/all"} and len(groups) == 4
    assert not (mixture / "ledger").exists() or read_parts(mixture / "ledger").empty  # none went to no_phase
    # a group the source does not have is refused before the run; no phase mixing it is said
    assert curate([*args, "+mixture.repeat.forum/high=2"]) == 2 and "forum documents form forum/all" in caplog.text
    assert (
        curate(
            [
                *args[:-2],
                "--dry-run",
                "mixture.phases.pretrain_phase1.mix.forum=0",
                "mixture.phases.pretrain_phase2.mix.forum=0",
            ]
        )
        == 0
    )
    assert "mixture.repeat forum/all: no phase mixes kind forum" in caplog.text
