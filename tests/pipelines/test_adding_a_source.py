"""docs/ingest.md, "Adding a source": a source added to ``SOURCES`` (here in-process, as a line added to
curation/schema.py would) goes end to end with the recipe the page shows: ingest, URL dedup, the
stages' ``sources``, a phase's mix and its group."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from tests.helpers import only, read_parts

REPO = Path(__file__).resolve().parents[2]
WORDS = "members of the gardening forum compare notes on tomatoes, soil, watering and the weather this season"


def _page_recipe() -> str:
    """The YAML block of the page's "Adding a source" section."""
    section = (REPO / "docs" / "ingest.md").read_text().split("## Adding a source", 1)[1].split("\n## ", 1)[0]
    return re.search(r"```yaml\n(.*?)```", section, re.S).group(1)


#: curate with ``forum`` added to SOURCES before anything reads the tuple, as a line added to curation/schema.py
#: would: in a process of its own, so that no module of this one keeps a default built from the patched tuple
CURATE = (
    "import sys, curation.schema as s; s.SOURCES = (*s.SOURCES, 'forum'); "
    "from pipelines.cli import main; sys.exit(main(sys.argv[1:]))"
)


def curate(args: list[str]) -> tuple[int, str]:
    done = subprocess.run([sys.executable, "-c", CURATE, *args], cwd=REPO, capture_output=True, text=True, timeout=600,
                          env={**os.environ, "PYTHONPATH": str(REPO)})
    return done.returncode, done.stdout + done.stderr


def test_a_source_added_to_sources_runs_end_to_end_with_the_pages_recipe(tmp_path: Path) -> None:
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
    code, said = curate(args)
    assert code == 0, said
    docs = read_parts(out / "00_ingest" / "docs")
    assert sorted(docs["doc_id"]) == ["p0", "p1", "p2", "p3"] and set(docs["source"]) == {"forum"}
    ledger = read_parts(out / "00_ingest" / "ledger")
    assert ledger[["doc_id", "reason"]].values.tolist() == [["again", "duplicate_url"]]  # url_dedup_sources
    mixture = next(out.glob("*_mixture"))
    groups = read_parts(mixture / "docs")["mixture_group"]
    assert set(groups) == {"forum/all"} and len(groups) == 4
    assert not (mixture / "ledger").exists() or read_parts(mixture / "ledger").empty  # none went to no_phase
    # a group the source does not have is refused before the run; no phase mixing it is said
    code, said = curate([*args, "+mixture.repeat.forum/high=2"])
    assert code == 2 and "forum documents form forum/all" in said
    code, said = curate([*args[:-2], "--dry-run", "mixture.phases.pretrain_phase1.mix.forum=0", "mixture.phases.pretrain_phase2.mix.forum=0"])
    assert code == 0 and "mixture.repeat forum/all: no phase mixes kind forum" in said, said
