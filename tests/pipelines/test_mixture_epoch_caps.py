"""The caps over the pre-training phases, read back from the shards the stage writes: no document is
shown more often than the cap, and a phase the earlier ones capped out says why it is empty."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest

from tests.helpers import docs_frame, make_stage_dir, run_one
from tests.pipelines.test_mixture_stage import corpus

PRETRAIN = ("pretrain_phase1", "pretrain_phase2")
FAST = ["mixture.tokenizer=whitespace", "mixture.phases.midtrain_reasoning_32k=null", "mixture.phases.midtrain_long_context_128k=null",
        "mixture.phases.midtrain_repo_code_32k=null"]


def mix() -> pd.DataFrame:
    """Web pages of two levels and math documents of two bands, of varied lengths: groups of 40-80."""
    rows = [{"doc_id": f"w{i:03d}", "text": f"page {i} " + "word " * (15 + (i * 37) % 90), "source": "web",
             "quality_level": "high" if i % 3 else "medium", "lang": "en"} for i in range(120)]
    rows += [{"doc_id": f"m{i:03d}", "text": f"lemma {i} " + "proof " * (10 + (i * 53) % 70), "source": "math_science",
              "edu_band": "high" if i % 2 else "medium", "edu_score": 3.5} for i in range(90)]
    df = docs_frame(rows)
    for col in ("quality_level", "edu_band", "lang"):
        df[col] = df[col].astype(object)
    return df


def manifests(out: Path) -> dict[str, dict]:
    return {p.stem: json.loads(p.read_text()) for p in sorted((out / "manifests").glob("*.json"))}


def copies_over_pretraining(out: Path) -> Counter:
    """(group, doc_id) → copies over the pre-training phases, from the shards the manifests list."""
    shown: Counter = Counter()
    for name, m in manifests(out).items():
        if name in PRETRAIN:
            for g in m["groups"]:
                for s in g["shards"]:
                    t = pq.read_table(out / s["path"], columns=["doc_id", "copies"]).to_pandas()
                    shown.update({(g["name"], d): int(c) for d, c in zip(t["doc_id"], t["copies"], strict=True)})
    return shown


@pytest.fixture(scope="module")
def cluster_client():
    from distributed import Client, LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0") as cluster, Client(cluster) as client:
        yield client


@pytest.mark.parametrize(("cap", "repeat"), [(1.0, "{'*': 1.0}"), (4.0, "{web/high: 4.0, math_science/high: 3.0}")])
def test_no_document_is_shown_more_often_than_its_cap_over_pretraining(tmp_path, cluster_client, cap, repeat):
    inp = make_stage_dir(tmp_path / "in", mix(), nparts=3)
    run_one("mixture", inp, tmp_path / "out", [*FAST, f"mixture.max_epochs={{'*': {cap}}}", f"mixture.repeat={repeat}"],
            client=cluster_client)
    shown = copies_over_pretraining(tmp_path / "out")
    ms = manifests(tmp_path / "out")
    fractional = [g for g in ms["pretrain_phase2"]["groups"] if g["epochs"] % 1 > 0.05]
    assert fractional  # phase 2 has extra copies to give
    assert shown and max(shown.values()) <= cap, Counter(shown.values())  # by hash order alone: 2 copies under cap 1
    for g in ms["pretrain_phase2"]["groups"]:  # and each phase still replays its plan
        assert abs(g["replay_tokens"] - g["planned_tokens"]) <= max(0.02 * g["planned_tokens"], g["unique_tokens"] / g["unique_documents"])


def test_a_phase_whose_groups_the_earlier_one_capped_out_says_so(tmp_path):
    """At the paper's full scale phase 1 takes every group's whole cap: phase 2 is empty, its groups
    are excluded for their cap (not as zero-weight groups) and a warning says what to change."""
    inp = make_stage_dir(tmp_path / "in", mix(), nparts=2)
    run_one("mixture", inp, tmp_path / "out", [*FAST, "mixture.scale=1.0"])
    m = manifests(tmp_path / "out")["pretrain_phase2"]
    assert m["budget"]["planned_tokens"] == 0 and m["groups"] == []
    reasons = {g["name"]: g["reason"] for g in m["excluded_groups"]}
    assert reasons and set(reasons.values()) == {"epoch_cap"}, reasons
    (w,) = [w for w in m["warnings"] if w["check"] == "earlier_caps"]
    assert "lower mixture.scale" in w["message"] and "raise max_epochs" in w["message"] and set(w["groups"]) == set(reasons)


def test_the_repository_phase_counts_its_built_documents_as_its_shards_do(tmp_path):
    inp = make_stage_dir(tmp_path / "in", corpus(), nparts=2)
    run_one("mixture", inp, tmp_path / "out", ["mixture.tokenizer=whitespace", "mixture.phases.midtrain_long_context_128k.min_tokens=300"])
    m = manifests(tmp_path / "out")["midtrain_repo_code_32k"]
    assert m["budget"]["unique_tokens"] == sum(g["tokens"] for g in m["groups"]) == m["totals"]["tokens"]
    assert m["budget"]["nominal_tokens"] == round(sum(g["nominal_epochs"] * g["tokens"] for g in m["groups"]))
    assert m["budget"]["planned_tokens"] == sum(g["planned_tokens"] for g in m["groups"])
