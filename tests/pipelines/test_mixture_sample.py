"""The sample run (ingest → exact_dedup → mixture on sample_data/) produces the five manifests."""

import json
from pathlib import Path

import pandas as pd
import pytest

from curation.mixture.manifest_check import validate_manifest
from pipelines.cli import main as curate
from tests.helpers import only

SAMPLE = Path(__file__).resolve().parents[2] / "sample_data"


@pytest.fixture(scope="module")
def sample_run(tmp_path_factory):
    if not (SAMPLE / "web").is_dir():
        pytest.skip("sample_data/ has not been generated")
    out = tmp_path_factory.mktemp("sample") / "run"
    rc = curate(["run", "pipelines/configs/glm45.yaml", "--input", str(SAMPLE), "--output", str(out), "--scheduler", "synchronous",
                 "--quiet", *only("exact_dedup", "mixture")])
    assert rc == 0
    return out / "80_mixture"


@pytest.mark.slow
def test_sample_run_writes_five_valid_manifests(sample_run):
    names = sorted(p.stem for p in (sample_run / "manifests").glob("*.json"))
    assert names == sorted(["pretrain_phase1", "pretrain_phase2", "midtrain_repo_code_32k", "midtrain_reasoning_32k", "midtrain_long_context_128k"])
    for n in names:
        assert validate_manifest(sample_run / "manifests" / f"{n}.json") == []
        m = json.loads((sample_run / "manifests" / f"{n}.json").read_text())
        assert m["totals"]["documents"] > 0
        # mid-training data may be short at the auto scale, or too few and long for whole copies to replay the plan: then it says so
        replay_warned = any(w["check"] == "replay" for w in m["warnings"])
        assert m["budget"]["met"] or (m["stage"] == "midtrain" and (m["shortfalls"] or replay_warned))
        assert [u["stage"] for u in m["upstream"]] == ["ingest", "exact_dedup"]


@pytest.mark.slow
def test_sample_midtraining_sets(sample_run):
    m = {p.stem: json.loads(p.read_text()) for p in (sample_run / "manifests").glob("*.json")}
    repo = pd.read_parquet(sample_run / "shards" / "midtrain_repo_code_32k" / "code" / "repo_level")
    assert set(repo["repo"]) >= {"acme-labs/pyinventory", "gopher-co/gosvc", "northwind/webdash", "ferrous/rustkv"}
    first = repo.sort_values("doc_id").groupby("repo")["text"].first()
    assert all("<|file_sep|>README" in t.split("\n", 2)[1] for t in first)  # README right after the repository header
    groups = {g["name"]: g for g in m["midtrain_long_context_128k"]["groups"]}
    assert groups["long_docs/all"]["unique_documents"] >= 5
    assert groups["long_docs/all"]["epochs"] == pytest.approx(2 * groups["agent/all"]["epochs"])  # long documents up-sampled 2 : 1
    assert groups["agent/all"]["unique_documents"] == 25
    threads = pd.read_parquet(sample_run / "shards" / "midtrain_repo_code_32k" / "issues_prs_commits" / "threads")
    records = [json.loads(line) for line in (SAMPLE / "issues_prs_commits" / "issues_prs_commits.jsonl").read_text().splitlines()]
    issues = {(r["repo"], r["meta"]["number"]): r for r in records if r["meta"]["kind"] == "issue"}
    chains = 0
    for pr in (r for r in records if r["meta"]["kind"] == "pull_request" and r["meta"].get("fixes")):
        issue = issues[(pr["repo"], pr["meta"]["fixes"])]
        (ctx,) = [t for t in threads["text"] if issue["text"][:80] in t]
        commit = next(r for r in records if r["meta"].get("pull_request") == pr["meta"]["number"] and r["repo"] == pr["repo"])
        assert ctx.index(issue["text"][:80]) < ctx.index(pr["text"][:80]) < ctx.index(commit["text"][:80])  # issue → PR → commit
        chains += 1
    assert chains == 10
    for name in ("midtrain_repo_code_32k", "midtrain_reasoning_32k", "midtrain_long_context_128k"):
        packing = m[name]["packing"]
        # every planned copy is packed, each with its end-of-document token
        assert packing["tokens"] == m[name]["totals"]["replay_tokens"] + sum(g["replay_documents"] for g in m[name]["groups"])
        assert packing["sequences"] <= packing["min_sequences"] + len(m[name]["groups"])  # best fit: at most one more sequence per group than the bound
    repo_packing = m["midtrain_repo_code_32k"]["packing"]
    assert repo_packing["fill_rate"] >= 0.9 * repo_packing["best_possible_fill_rate"]  # at the auto scale only part of the repositories is planned
