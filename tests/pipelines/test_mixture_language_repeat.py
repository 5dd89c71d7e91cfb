"""``mixture.language_repeat`` read back from the shards the stage writes: the language it names gets
its factor's share of its group's copies, the group still replays its plan, the manifest's
``languages`` say what the shards replay, and no document passes the cap."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest

from curation.mixture.manifest_check import validate_manifest
from tests.helpers import docs_frame, make_stage_dir, run_one

PRETRAIN = ("pretrain_phase1", "pretrain_phase2")
FAST = ["mixture.tokenizer=whitespace", "mixture.phases.midtrain_reasoning_32k=null", "mixture.phases.midtrain_long_context_128k=null",
        "mixture.phases.midtrain_repo_code_32k=null"]


def mix() -> pd.DataFrame:
    """The tester's case in small: English and Chinese pages in one group (web/medium_low), and a few
    English pages of web/high (whose repeat of 4 binds the auto scale)."""
    rows = []
    for i in range(240):
        zh = i % 3 == 0
        rows.append({"doc_id": f"w{i:03d}", "text": f"page {i} " + ("字 " if zh else "word ") * (20 + (i * 37) % 160), "source": "web",
                     "quality_level": "medium_low", "lang": "zh" if zh else "en"})
    rows += [{"doc_id": f"h{i:02d}", "text": f"top {i} " + "word " * (40 + (i * 13) % 60), "source": "web",
              "quality_level": "high", "lang": "en"} for i in range(30)]
    df = docs_frame(rows)
    for col in ("quality_level", "lang"):
        df[col] = df[col].astype(object)
    return df


def read_back(out: Path) -> tuple[dict[str, dict], pd.DataFrame]:
    """The manifests, and every shard row of the pre-training phases with its phase and group."""
    ms = {p.stem: json.loads(p.read_text()) for p in sorted((out / "manifests").glob("*.json"))}
    rows = [pq.read_table(out / s["path"], columns=["doc_id", "lang", "n_tokens", "copies"]).to_pandas().assign(phase=name, group=g["name"])
            for name in PRETRAIN for g in ms[name]["groups"] for s in g["shards"]]
    return ms, pd.concat(rows, ignore_index=True)


@pytest.fixture(scope="module")
def cluster_client():
    from distributed import Client, LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0") as cluster, Client(cluster) as client:
        yield client


def test_chinese_at_factor_2_gets_twice_the_copies_of_english_in_its_group(tmp_path, cluster_client):
    inp = make_stage_dir(tmp_path / "in", mix(), nparts=3)
    run_one("mixture", inp, tmp_path / "out", [*FAST, "mixture.language_repeat={zh: 2.0}"], client=cluster_client)
    ms, rows = read_back(tmp_path / "out")
    rows["replay"] = rows["copies"] * rows["n_tokens"]
    low = rows[rows["group"] == "web/medium_low"]
    for phase in PRETRAIN:
        g = next(g for g in ms[phase]["groups"] if g["name"] == "web/medium_low")
        assert 0.05 < g["epochs"] < 1.0  # a fractional epoch to give out in each phase
        by = low[low["phase"] == phase].groupby("lang")[["replay", "n_tokens"]].sum()
        epochs = by["replay"] / by["n_tokens"]
        assert 1.8 <= epochs["zh"] / epochs["en"] <= 2.2, epochs.to_dict()  # one expected epochs for both: ratio ~1
        assert abs(g["replay_tokens"] - g["planned_tokens"]) <= max(0.02 * g["planned_tokens"], 2 * by["n_tokens"].max() / 80)
        zh_share = ms[phase]["languages"]["zh"]["share"]  # the manifest's figure: what the shards replay
        assert zh_share == pytest.approx(by.loc["zh", "replay"] / rows.loc[rows["phase"] == phase, "replay"].sum(), rel=0.05)
        assert validate_manifest(tmp_path / "out" / "manifests" / f"{phase}.json") == []
    assert int(rows.groupby("doc_id")["copies"].sum().max()) <= 4  # the cap, per document over pre-training
