"""End to end: the README's first command on sample_data/, then stats and verify on its run folder."""

from __future__ import annotations

import itertools
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import read_parts

REPO = Path(__file__).resolve().parents[1]


def readme_run(out: Path) -> list[str]:
    """The README's command 1 into ``out``."""
    return [sys.executable, "-m", "pipelines.cli", "run", "pipelines/configs/glm45.yaml", "--input", "sample_data", "--output", str(out)]
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def sample_run(tmp_path_factory) -> tuple[Path, subprocess.CompletedProcess]:
    out = tmp_path_factory.mktemp("sample") / "run"
    proc = subprocess.run(
        readme_run(out),
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=1500,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    return out, proc


def test_sample_run_prints_a_funnel_and_leaves_complete_stage_folders(sample_run):
    out, proc = sample_run
    assert "stage" in proc.stdout and "docs in" in proc.stdout and "ingest" in proc.stdout
    run = json.loads((out / "run.json").read_text())
    assert run["stages"], "no stage ran"
    for stage in run["stages"]:
        folder = out / stage["folder"]
        for name in ("docs", "ledger", "stats.json", "_SUCCESS"):
            assert (folder / name).exists(), f"{folder.name}/{name}"
        printed = [line for line in proc.stdout.splitlines() if line.startswith(stage["name"] + " ")]
        stats = json.loads((folder / "stats.json").read_text())
        assert printed and f"{stats['in']['documents']:,}" in printed[0]


def test_sample_run_conserves_every_document_and_verifies(sample_run):
    out, _ = sample_run
    proc = subprocess.run(
        [sys.executable, "-m", "pipelines.cli", "verify", str(out)], cwd=REPO, capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    ingest = json.loads((out / "00_ingest" / "stats.json").read_text())
    raw_records = 0
    for f in sorted((REPO / "sample_data").rglob("*.jsonl*")):
        import gzip

        data = gzip.decompress(f.read_bytes()) if f.name.endswith(".gz") else f.read_bytes()
        raw_records += sum(1 for line in data.splitlines() if line.strip())
    from fastwarc.warc import ArchiveIterator, WarcRecordType

    for f in sorted((REPO / "sample_data").rglob("*.warc*")):  # the crawl: one document or ledger row per response
        raw_records += sum(1 for _ in ArchiveIterator(str(f), record_types=WarcRecordType.response, fsspec_args=False))
    assert ingest["in"]["documents"] == raw_records
    ledger = read_parts(out / "00_ingest" / "ledger")
    assert "empty_text" in set(ledger["reason"])  # the sample's empty pages are accounted for


def test_sample_run_finds_exact_copies(sample_run):
    out, _ = sample_run
    ledger = read_parts(out / "10_exact_dedup" / "ledger")
    assert len(ledger) >= 10 and set(ledger["reason"]) == {"exact_duplicate"}
    kept = set(read_parts(out / "10_exact_dedup" / "docs")["doc_id"])
    assert all(json.loads(d)["duplicate_of"] in kept for d in ledger["detail"])


def test_stats_command_prints_the_funnel(sample_run):
    out, _ = sample_run
    proc = subprocess.run(
        [sys.executable, "-m", "pipelines.cli", "stats", str(out)], cwd=REPO, capture_output=True, text=True
    )
    assert proc.returncode == 0 and "exact_dedup" in proc.stdout


def test_rerun_skips_every_stage(sample_run):
    out, _ = sample_run
    proc = subprocess.run(
        [*readme_run(out), "--workers", "1"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    run = json.loads((out / "run.json").read_text())
    assert all(s["skipped"] for s in run["stages"])
    assert run["recipe"]["scheduler"] == {"name": "LocalCluster", "why": "chosen with --workers"}


def test_sample_run_mixture_is_the_papers(sample_run):
    """Five manifests; phase 2 holds code-web and math/science-rich web pages; phases at 15 : 7; epochs planned, not configured."""
    out, proc = sample_run
    mdir = out / "80_mixture" / "manifests"
    manifests = {p.stem: json.loads(p.read_text()) for p in mdir.glob("*.json")}
    assert sorted(manifests) == sorted(
        [
            "pretrain_phase1",
            "pretrain_phase2",
            "midtrain_repo_code_32k",
            "midtrain_reasoning_32k",
            "midtrain_long_context_128k",
        ]
    )
    p1, p2 = manifests["pretrain_phase1"], manifests["pretrain_phase2"]
    groups2 = {g["name"]: g for g in p2["groups"]}
    assert sum(g["unique_documents"] for n, g in groups2.items() if n.startswith("code_web/")) >= 5
    assert sum(g["unique_documents"] for n, g in groups2.items() if n.startswith("web_edu/")) >= 3
    assert p1["budget"]["planned_tokens"] / p2["budget"]["planned_tokens"] == pytest.approx(15 / 7, rel=0.01)
    assert p1["budget"]["met"] and p2["budget"]["met"]
    epochs = sum(g["epochs"] for m in (p1, p2) for g in m["groups"] if g["name"] == "web/high")
    warned = any(w["check"] == "top_level_epochs" for w in p1["warnings"])
    assert epochs >= 3.2 or (warned and "3.2" in proc.stdout)  # the plan's outcome, reported on the console when short
    # the scorers removed nothing: every exclusion of a level or tier is the mixture's, with its rule
    for stage in ("40_web_quality", "50_code_quality", "60_code_web"):
        reasons = set(read_parts(out / stage / "ledger")["reason"]) if (out / stage / "ledger").exists() else set()
        assert not reasons & {"low_quality", "code_low_tier", "code_web_low_tier"}, stage
    mix_ledger = read_parts(out / "80_mixture" / "ledger")
    low = mix_ledger[mix_ledger["reason"] == "low_quality"]
    assert len(low) and all(json.loads(d)["rule"] == "mixture.repeat[web/low] = 0" for d in low["detail"])


def test_verify_fails_on_a_deleted_shard_or_an_edited_ledger(sample_run, tmp_path):
    import shutil

    out, _ = sample_run
    broken = tmp_path / "broken"
    shutil.copytree(out, broken)
    shard = sorted((broken / "80_mixture" / "shards").rglob("*.parquet"))[0]
    shard.unlink()
    proc = subprocess.run(
        [sys.executable, "-m", "pipelines.cli", "verify", str(broken)], cwd=REPO, capture_output=True, text=True
    )
    assert proc.returncode == 1 and shard.name in proc.stdout
    edited = tmp_path / "edited"
    shutil.copytree(out, edited)
    ledger = sorted((edited / "20_minhash_dedup" / "ledger").glob("part-*.parquet"))
    import pandas as pd

    frames = [(p, pd.read_parquet(p)) for p in ledger]
    path, df = next((p, d) for p, d in frames if len(d))
    df.iloc[1:].to_parquet(path)
    proc = subprocess.run(
        [sys.executable, "-m", "pipelines.cli", "verify", str(edited)], cwd=REPO, capture_output=True, text=True
    )
    assert proc.returncode == 1 and "neither kept nor in the ledger" in proc.stdout


def test_sample_run_outputs_are_unchanged(sample_run):
    """The refactors of the stage kit change no output: documents, ledgers, shards, manifests and
    packing plans digest as recorded. After a deliberate output change, regenerate the record with
    ``python -m tests.golden runs/sample > tests/sample_run_digests.json`` and say why in the commit."""
    from tests.golden import compare, run_digests

    out, _ = sample_run
    outputs = {"docs", "ledger", "shards", "manifests", "packing"}
    recorded = json.loads((REPO / "tests" / "sample_run_digests.json").read_text())
    expected = {k: v for k, v in recorded.items() if set(Path(k).parts[1:2]) & outputs}
    actual = {k: v for k, v in run_digests(out).items() if set(Path(k).parts[1:2]) & outputs}
    assert len(expected) > 50, "the record lists the run's outputs"
    assert not compare(expected, actual), "\n".join(compare(expected, actual))


def test_sample_run_embeds_each_document_once(sample_run):
    """SemDeDup embeds; the edu scorer never runs an embedder a second time: at the CPU settings it
    scores without vectors, at the GPU settings its head reads SemDeDup's stored vectors."""
    out, _ = sample_run
    sem = json.loads((out / "30_semdedup" / "stats.json").read_text())["extra"]["embedding"]
    edu = json.loads((out / "70_edu_score" / "stats.json").read_text())["extra"].get("embedding")
    assert sem["count"] > 0
    if edu is not None:
        assert sem["name"] == edu["name"] and edu["reused_upstream"] > 0
        assert edu["count"] == 0, f"edu_score embedded {edu['count']} documents again"


def test_sample_run_says_which_settings_it_took(sample_run):
    """README command 1 takes the settings that suit the machine and says so: first line, run.json, manifests."""
    from pipelines.recipe import resolve_profile

    out, proc = sample_run
    profile, why = resolve_profile("auto")
    assert proc.stdout.splitlines()[0].startswith(f"curate: profile {profile} ({why}")
    assert json.loads((out / "run.json").read_text())["recipe"]["profile"] == {"name": profile, "why": why}
    for m in (out / "80_mixture" / "manifests").glob("*.json"):
        assert json.loads(m.read_text())["profile"] == profile


def test_sample_run_takes_one_process_for_a_small_input_and_says_so(sample_run):
    """sample_data is under cluster.min_input_mb: no LocalCluster starts, and the second line says
    why (a cluster costs more than it gains at this size: benchmarks/recipe). run.json's record of it
    is tested in tests/pipelines/test_scheduler_choice.py (the rerun below rewrites this one)."""
    out, proc = sample_run
    line = proc.stdout.splitlines()[1]
    assert line.startswith("curate: one process (inputs ") and "< cluster.min_input_mb 16;" in line
    assert "LocalCluster with" not in proc.stderr  # the embedded cluster logs this line when it starts


def _readme_block(marker: str) -> list[str]:
    text = (REPO / "README.md").read_text()
    at = text.index(f"<!-- {marker} -->")
    body = text[at:].split("```", 2)[1]
    return [line for line in body.splitlines()[1:] if line.strip()]


def _funnel_row(line: str) -> tuple[str, tuple[str, ...], frozenset[str]]:
    """(stage, its five counts, its reasons as a set): the seconds column and reason order aside."""
    cells = line.split()
    first = next((i for i, c in enumerate(cells[1:], 1) if not re.fullmatch(r"[\d,.]+", c)), len(cells))
    rest = " ".join(cells[first:]).removeprefix("annotated ")
    return cells[0], tuple(cells[1:6]), frozenset(r.strip() for r in rest.split(",") if r.strip())


def test_readme_funnel_is_the_sample_runs(sample_run):
    """The README shows what command 1 prints today: every stage's counts and drop reasons."""
    out, proc = sample_run
    stats = subprocess.run(
        [sys.executable, "-m", "pipelines.cli", "stats", str(out)], cwd=REPO, capture_output=True, text=True
    )
    assert stats.returncode == 0, stats.stderr
    printed = [line for line in stats.stdout.splitlines() if line.strip()][1:]
    readme = _readme_block("funnel: sample run")[1:]
    assert [_funnel_row(r) for r in readme] == [_funnel_row(p) for p in printed[: len(readme)]], (
        "README.md's funnel differs from the sample run: paste `curate stats runs/sample` (without the seconds column)"
    )
    assert len(readme) == len(printed[: len(readme)]) == len(json.loads((out / "run.json").read_text())["stages"])
    shown = _readme_block("warning: sample run")
    for line in shown:
        assert line in proc.stderr, f"the sample run no longer warns: {line}"
    warned = [re.sub(r"^\S+ WARNING \S+: ", "", w) for w in proc.stderr.splitlines() if " WARNING " in w]
    assert sorted(warned) == sorted(shown), (
        "README.md shows what the sample run warns, every line of it: paste its WARNING lines"
    )


def test_readme_says_why_the_long_context_phase_is_short_on_the_sample(sample_run):
    """The sentence under the warnings: the phase's budget, its long documents and their size, as the manifest has them."""
    out, _ = sample_run
    m = json.loads((out / "80_mixture" / "manifests" / "midtrain_long_context_128k.json").read_text())
    long_docs = next(g for g in m["groups"] if g["name"] == "long_docs/all")
    said = re.search(
        r"its budget is ([\d,]+) tokens, while each of its (\d+) long documents\s+holds about ([\d,]+)",
        (REPO / "README.md").read_text(),
    )
    assert said and not m["budget"]["met"]
    assert int(said[1].replace(",", "")) == m["budget"]["tokens"] and int(said[2]) == long_docs["unique_documents"]
    assert int(said[3].replace(",", "")) == round(long_docs["unique_tokens"] / long_docs["unique_documents"], -3)


def test_sample_run_tokens_in_are_the_previous_stages_tokens_kept(sample_run):
    """Token counts link stage to stage, in total and per source; a stage that counts tokens again
    (code_web, the pages it re-parses) records the change: in + recounted = kept + dropped."""
    out, _ = sample_run
    stages = [
        json.loads((out / s["folder"] / "stats.json").read_text())
        for s in json.loads((out / "run.json").read_text())["stages"]
    ]
    recounted = {}
    for before, stage in itertools.pairwise(stages):
        assert stage["in"] == before["kept"], stage["stage"]
        for source, block in stage["by_source"].items():
            assert block["in"] == before["by_source"][source]["kept"], (stage["stage"], source)
        for block in [stage, *stage["by_source"].values(), *stage["by_lang"].values()]:
            change = block.get("recounted", {}).get("tokens", 0)
            assert block["in"]["tokens"] + change == block["kept"]["tokens"] + block["dropped"]["tokens"], stage[
                "stage"
            ]
        recounted[stage["stage"]] = stage.get("recounted", {}).get("tokens", 0)
    assert recounted["code_web"] > 0 and {k for k, v in recounted.items() if v} == {"code_web"}
