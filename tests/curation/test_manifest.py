import copy
import json

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from curation.mixture.manifest import build_manifest, file_sha256, group_entry
from curation.mixture.manifest_check import load_schema, validate_manifest, validate_schema, validate_sums
from curation.mixture.phases import PhaseSpec
from curation.mixture.plan import GroupStat, plan_phase
from curation.mixture.shards import SHARD_SCHEMA


def write_shard(root, rel, n_tokens, copies=1):
    df = pd.DataFrame({c: [None] * len(n_tokens) for c in SHARD_SCHEMA.names})
    df["doc_id"] = [f"d{i}" for i in range(len(n_tokens))]
    df["copy"] = 0
    df["copies"] = copies  # the plan's epochs as whole copies of each row
    df["n_tokens"] = n_tokens
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pandas(df, schema=SHARD_SCHEMA, preserve_index=False), path)
    return {"path": rel, "bytes": path.stat().st_size, "sha256": file_sha256(path), "documents": len(n_tokens), "tokens": sum(n_tokens),
            "replay_documents": copies * len(n_tokens), "replay_tokens": copies * sum(n_tokens)}


@pytest.fixture
def stage(tmp_path):
    spec = PhaseSpec("pretrain_phase1", tokens=160, mix={"web": 1.0, "code": 1.0})  # nominal: 2 × 60 + 1 × 40
    plan = plan_phase(spec, {"web/high": GroupStat(60, 2.0, 3), "code/high": GroupStat(40, 1.0, 2), "web/low": GroupStat(9, 0.0, 1)}, {"*": 4.0})
    shards = {
        "web/high": [write_shard(tmp_path, "shards/pretrain_phase1/web/high/part-00000.parquet", [10, 20], copies=2),
                     write_shard(tmp_path, "shards/pretrain_phase1/web/high/part-00001.parquet", [30], copies=2)],
        "code/high": [write_shard(tmp_path, "shards/pretrain_phase1/code/high/part-00000.parquet", [15, 25])],
    }
    groups = [group_entry(g, shards.get(g.group, []), None, None) for g in plan.groups]
    prov = {"created_by": {"stage": "mixture", "stage_version": "1", "versions": {"python": "3"}}, "config_hash": "0" * 64,
            "input_fingerprint": "x", "upstream": [], "seed": 1}
    manifest = build_manifest(spec, plan, groups, provenance=prov, fim={"enabled": True, "rate": 0.5}, repeats="weights",
                              tokenizer="qwen", exclusion_reasons={"web/low": "low_quality"})
    path = tmp_path / "manifests" / "pretrain_phase1.json"
    path.parent.mkdir()
    path.write_text(json.dumps(manifest))
    return tmp_path, path, manifest


def test_a_built_manifest_is_valid_against_schema_sums_and_files(stage):
    _, path, manifest = stage
    assert validate_manifest(path) == []
    assert manifest["totals"] == {"documents": 5, "tokens": 100, "shards": 3, "bytes": sum(s["bytes"] for g in manifest["groups"] for s in g["shards"]),
                                  "replay_tokens": 160}
    assert [g["name"] for g in manifest["groups"]] == ["code/high", "web/high"]
    # the ledger's reason for the group the policy excludes, not a generic one
    assert manifest["excluded_groups"] == [{"name": "web/low", "documents": 1, "tokens": 9, "reason": "low_quality"}]
    assert load_schema()["properties"]["schema_version"]["const"] == manifest["schema_version"] == "2.0"


def test_schema_rejects_missing_and_malformed_fields(stage):
    _, _, manifest = stage
    bad = copy.deepcopy(manifest)
    del bad["budget"]
    assert any("'budget' is a required property" in e for e in validate_schema(bad))
    bad = copy.deepcopy(manifest)
    bad["groups"][0]["shards"][0]["sha256"] = "xyz"
    assert any(e.startswith("groups/0/shards/0/sha256") for e in validate_schema(bad))
    bad = copy.deepcopy(manifest)
    bad["packing"] = {"mode": "best_fit"}
    assert any("fill_rate" in e for e in validate_schema(bad))
    bad = copy.deepcopy(manifest)
    bad["extra_field"] = 1
    assert validate_schema(bad)


def test_sums_must_match_the_shards(stage):
    _, _, manifest = stage
    bad = copy.deepcopy(manifest)
    bad["groups"][1]["tokens"] += 1
    assert any("tokens 61 != sum over its shards 60" in e for e in validate_sums(bad))
    bad = copy.deepcopy(manifest)
    bad["groups"][1]["epochs"] = 9.0
    assert any("above its cap" in e for e in validate_sums(bad))


def test_epochs_must_match_the_tokens(stage):
    _, _, manifest = stage
    bad = copy.deepcopy(manifest)
    bad["groups"][1]["epochs"] = bad["groups"][1]["replay_epochs"] = 2.5  # web/high: 60 unique tokens, 120 planned and replayed
    errors = validate_sums(bad)
    assert "group web/high: epochs 2.5 x unique_tokens 60 is not its planned_tokens 120" in errors
    assert "group web/high: replay_epochs 2.5 x unique_tokens 60 is not its replay_tokens 120" in errors
    # FIM's sentinels add tokens the plan does not count, by an amount that depends on the tokenizer:
    # a group with FIM-transformed documents is not checked (the others still are)
    fim = copy.deepcopy(bad)
    fim["groups"][1]["fim"] = {"none": 1, "psm": 2}
    assert not any("web/high" in e and "x unique_tokens" in e for e in validate_sums(fim))


def test_files_are_checked_for_bytes_checksum_rows_and_tokens(stage):
    root, path, manifest = stage
    shard = root / manifest["groups"][0]["shards"][0]["path"]
    manifest["groups"][0]["shards"][0]["tokens"] = 41
    manifest["groups"][0]["tokens"] = 41
    manifest["totals"]["tokens"] = 101
    path.write_text(json.dumps(manifest))
    assert validate_manifest(path) == ["shards/pretrain_phase1/code/high/part-00000.parquet: 40 tokens, manifest says 41"]
    shard.write_bytes(shard.read_bytes() + b"x")
    errors = validate_manifest(path)
    assert any("bytes" in e for e in errors) and any("sha256" in e for e in errors)
    shard.unlink()
    assert any("missing" in e for e in validate_manifest(path))
    manifest["groups"][0]["shards"][0]["path"] = "../../etc/passwd.parquet"
    path.write_text(json.dumps(manifest))
    assert any("outside" in e for e in validate_manifest(path))


def test_replay_sits_next_to_the_plan_and_decides_budget_met(stage):
    _, _, manifest = stage
    web = next(g for g in manifest["groups"] if g["name"] == "web/high")
    # web/high: 2 epochs of 60 tokens planned, its shards hold every row twice
    assert (web["planned_tokens"], web["replay_tokens"], web["replay_epochs"]) == (120, 120, 2.0)
    assert manifest["budget"]["replay_tokens"] == manifest["totals"]["replay_tokens"] == 160
    assert manifest["budget"]["met"] is True and manifest["budget"]["replay_ratio"] == 1.0
    bad = copy.deepcopy(manifest)
    bad["groups"][1]["replay_tokens"] += 5
    assert any("replay_tokens 125 != sum over its shards 120" in e for e in validate_sums(bad))


def test_budget_is_not_met_when_the_replay_is_more_than_two_percent_off(tmp_path):
    spec = PhaseSpec("p", tokens=100, mix={"web": 1.0})
    plan = plan_phase(spec, {"web/high": GroupStat(100, 1.0, 1)}, {"*": 4.0})
    shard = write_shard(tmp_path, "shards/p/web/high/part-00000.parquet", [100])
    shard["replay_tokens"] = 97  # 3 % short of the 100 planned
    entry = group_entry(plan.groups[0], [shard], None, None)
    manifest = build_manifest(spec, plan, [entry], provenance={}, fim={}, repeats="weights", tokenizer="qwen")
    assert plan.budget_met and manifest["budget"]["met"] is False
    shard["replay_tokens"] = 99
    manifest = build_manifest(spec, plan, [group_entry(plan.groups[0], [shard], None, None)], provenance={}, fim={}, repeats="weights",
                              tokenizer="qwen")
    assert manifest["budget"]["met"] is True
