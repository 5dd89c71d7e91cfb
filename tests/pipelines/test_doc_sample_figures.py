"""The sample-run figures and snippets of docs/mixture.md, docs/stats.md and docs/minhash_dedup.md
are the sample run's: the `curate stats --mixture` excerpt as printed, the two token counts of
phase 1's code, and the datasketch snippet run as written on the run (`runs/x`)."""

import json
import re
from pathlib import Path

from curation.stats.mixture import mixture_by_kind
from curation.stats.run import open_run
from pipelines.cli import main as curate

DOCS = Path(__file__).resolve().parents[2] / "docs"


def number(text: str) -> int:
    return int(text.replace(",", ""))


def test_the_mixture_excerpt_is_what_stats_prints_for_the_sample(finished_run, capsys):
    doc = (DOCS / "mixture.md").read_text()
    said = re.search(r"\$ curate stats runs/sample --mixture .*\n(pretrain_phase2 .*?)```", doc, re.S)
    assert said, "docs/mixture.md no longer shows phase 2 of `curate stats runs/sample --mixture`"
    capsys.readouterr()
    assert curate(["stats", str(finished_run), "--mixture"]) == 0
    printed = capsys.readouterr().out
    phase2 = printed[printed.index("pretrain_phase2 (") :].split("\n\n")[0]
    assert said[1].rstrip("\n") == phase2, "paste phase 2 of `curate stats runs/sample --mixture` into docs/mixture.md"
    gap = re.search(r"which whole copies put ([\d.]+) below its plan for\n`web/high`", doc)
    p1 = json.loads((finished_run / "80_mixture" / "manifests" / "pretrain_phase1.json").read_text())
    high = next(g for g in p1["groups"] if g["name"] == "web/high")
    assert gap and float(gap[1]) == round(high["epochs"] - high["replay_epochs"], 3)


def test_the_two_token_counts_in_docs_stats_are_the_sample_runs(finished_run):
    doc = (DOCS / "stats.md").read_text()
    said = re.search(r"by ([\d,]+) in the sample run's phase 1: `und` ([\d,]+), kind `code` ([\d,]+)", doc)
    assert said, "docs/stats.md no longer gives phase 1's two token counts"
    p1 = json.loads((finished_run / "80_mixture" / "manifests" / "pretrain_phase1.json").read_text())
    kinds = mixture_by_kind(open_run(finished_run))
    code = kinds[(kinds["phase"] == "pretrain_phase1") & (kinds["kind"] == "code")]["tokens"].item()
    und = p1["languages"]["und"]["tokens"]
    assert (number(said[2]), number(said[3]), number(said[1])) == (und, code, code - und)


def test_the_datasketch_snippet_runs_on_the_sample(finished_run, tmp_path, monkeypatch):
    doc = (DOCS / "minhash_dedup.md").read_text()
    code = re.search(r"<!-- snippet: minhash signatures -->\n```python\n(.*?)```", doc, re.S)
    assert code and 'Path("runs/x")' in code[1]
    (tmp_path / "runs").mkdir()
    (tmp_path / "runs" / "x").symlink_to(finished_run)
    monkeypatch.chdir(tmp_path)
    scope: dict = {}
    exec(compile(code[1], "docs/minhash_dedup.md", "exec"), scope)  # its assert compares with datasketch
    assert len(scope["sig"]) == 128 and scope["text"]
