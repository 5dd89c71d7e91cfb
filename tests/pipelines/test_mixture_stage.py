import json
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest

from curation.fim import FimSentinels, fim_inverse
from curation.manifest import validate_manifest
from pipelines.cli import main as curate
from tests.helpers import assert_conservation, docs_frame, make_stage_dir, read_parts, run_one

PHASES = ["pretrain_phase1", "pretrain_phase2", "midtrain_repo_code_32k", "midtrain_reasoning_32k", "midtrain_long_context_128k"]
FAST = ["mixture.tokenizer=whitespace", "mixture.phases.midtrain_long_context_128k.min_tokens=300"]


def corpus() -> pd.DataFrame:
    rows = []
    levels = [("high", 4.0), ("medium_high", 2.0), ("medium", 1.0), ("medium_low", 0.5), ("low", 0.0)]
    for i in range(30):
        level, rep = levels[i % 5]
        rows.append({"doc_id": f"w{i:02d}", "text": f"page {i} " + "word " * (20 + 3 * i), "source": "web",
                     "quality_level": level, "quality_repeat": rep, "edu_rich": i % 7 == 0})
    rows[0]["meta"] = json.dumps({"html": "<html><p>page 0</p></html>"})
    rows.append({"doc_id": "w_long", "text": "long " * 400, "source": "web", "quality_level": "high", "quality_repeat": 4.0, "edu_rich": False})
    repo = {
        "README.md": "# tool\nUsage notes.\n",
        "tool/core.py": "from tool import util\n\ndef run():\n    return util.f()\n",
        "tool/util.py": "def f():\n    return 1\n",
        "tool/bad.py": "x=1;y=2;z=3\n",
    }
    tiers = {"README.md": ("medium", 1.0), "tool/core.py": ("high", 2.0), "tool/util.py": ("high", 2.0), "tool/bad.py": ("low", 0.0)}
    for j, (path, text) in enumerate(repo.items()):
        tier, rep = tiers[path]
        rows.append({"doc_id": f"c{j}", "text": text, "source": "code", "repo": "org/tool", "path": path, "language": "Python",
                     "code_tier": tier, "code_repeat": rep})
    rows.append({"doc_id": "c_other", "text": "package main\n\nfunc main() {}\n", "source": "code", "repo": "org/gotool", "path": "main.go",
                 "language": "Go", "code_tier": "medium", "code_repeat": 1.0})
    for k in range(4):
        rows.append({"doc_id": f"m{k}", "text": f"theorem {k} " + "proof " * 30, "source": "math_science",
                     "edu_band": ["high", "medium", "low", "high"][k], "edu_repeat": [2.0, 1.0, 0.5, 2.0][k], "edu_score": [4.1, 2.5, 1.0, 3.9][k]})
    for k in range(3):
        rows.append({"doc_id": f"r{k}", "text": "Question. Let us think step by step. " * (5 + k), "source": "reasoning"})
    rows.append({"doc_id": "a0", "text": "Thought: open file. Action: read. Observation: ok. " * 8, "source": "agent"})
    threads = [
        ("Crash when the input is empty", {"kind": "issue", "number": 1, "title": "Crash on empty input"}),
        ("Check the length first. Fixes #1", {"kind": "pull_request", "number": 2, "title": "Check length"}),
        ("Check length", {"kind": "commit", "sha": "abc123", "author": "Ann", "date": "2024-01-02", "message": "Check length (#2)",
                          "files": [{"path": "tool/core.py", "diff": "@@ -1 +1 @@\n-a\n+b"}]}),
    ]
    for k, (text, meta) in enumerate(threads):
        rows.append({"doc_id": f"t{k}", "text": text, "source": "issues_prs_commits", "repo": "org/tool", "meta": json.dumps(meta)})
    df = docs_frame(rows)
    for col in ("quality_level", "code_tier", "edu_band"):
        df[col] = df[col].astype(object)
    df["edu_rich"] = df["edu_rich"].astype(object)
    return df


def manifests(stage_dir: Path) -> dict[str, dict]:
    return {p.stem: json.loads(p.read_text()) for p in sorted((stage_dir / "manifests").glob("*.json"))}


@pytest.fixture(scope="module")
def stage_run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("mixture")
    inp = make_stage_dir(tmp / "in", corpus(), nparts=2)
    res = run_one("mixture", inp, tmp / "out", FAST)
    return inp, tmp / "out", res


def test_conservation_and_ledger_reasons(stage_run):
    inp, out, _ = stage_run
    kept, ledger = assert_conservation(inp, out)
    reasons = dict(zip(ledger["doc_id"], ledger["reason"], strict=True))
    assert {d for d, r in reasons.items() if r == "zero_weight"} == {"w04", "w09", "w14", "w19", "w24", "w29", "c3"}
    assert set(reasons.values()) == {"zero_weight"}
    detail = json.loads(ledger.set_index("doc_id").loc["c3", "detail"])
    assert detail == {"group": "code/low", "repeat": 0.0}
    phases = dict(zip(kept["doc_id"], kept["mixture_phases"], strict=True))
    assert phases["w_long"] == "pretrain_phase1,pretrain_phase2,midtrain_long_context_128k"
    assert phases["c1"] == "pretrain_phase1,pretrain_phase2,midtrain_repo_code_32k"
    assert phases["r0"] == "midtrain_reasoning_32k" and phases["a0"] == "midtrain_long_context_128k"
    assert dict(zip(kept["doc_id"], kept["mixture_group"], strict=True))["w00"] == "web_edu/high"


def test_five_manifests_valid_with_token_sums_equal_to_their_shards(stage_run):
    _, out, res = stage_run
    ms = manifests(out)
    assert sorted(ms) == sorted(PHASES)
    for name, m in ms.items():
        assert validate_manifest(out / "manifests" / f"{name}.json") == []
        shard_tokens = 0
        for g in m["groups"]:
            group_tokens = 0
            for s in g["shards"]:
                t = pq.read_table(out / s["path"])
                assert t.num_rows == s["documents"]
                assert sum(t.column("n_tokens").to_pylist()) == s["tokens"]
                group_tokens += s["tokens"]
            assert g["tokens"] == group_tokens
            shard_tokens += group_tokens
            assert g["cap"] is None or g["epochs"] <= g["cap"]
        assert m["totals"]["tokens"] == shard_tokens
        assert m["budget"]["met"] and m["shortfalls"] == []
    assert res.stats["extra"]["pretrain_epochs"]["web/high"] >= 3.2
    p1 = ms["pretrain_phase1"]
    assert {e["name"] for e in p1["excluded_groups"]} == {"web/low", "web_edu/low", "code/low"}
    assert p1["packing"] == {"mode": "none", "truncation": "random"} and p1["seq_length"] == 4096
    blend = p1["exports"]["megatron_data_path"].split()
    assert sum(float(w) for w in blend[::2]) == pytest.approx(1.0)
    assert all((out / f"{prefix}.parquet").exists() for prefix in blend[1::2])


def test_midtraining_sets_are_built_and_packed(stage_run):
    _, out, _ = stage_run
    m = manifests(out)["midtrain_repo_code_32k"]
    groups = {g["name"]: g for g in m["groups"]}
    repo = read_parts(out / "shards" / "midtrain_repo_code_32k" / "code" / "repo_level")
    tool = repo[repo["repo"] == "org/tool"]["text"].iloc[0]
    assert tool.startswith("<|repo_name|>org/tool\n<|file_sep|>README.md\n")
    assert tool.index("<|file_sep|>tool/util.py") < tool.index("<|file_sep|>tool/core.py")
    assert "tool/bad.py" not in tool  # the low tier stays out of mid-training too
    threads = read_parts(out / "shards" / "midtrain_repo_code_32k" / "issues_prs_commits" / "threads")["text"].iloc[0]
    assert threads.index("Crash when") < threads.index("Pull request #2") < threads.index("commit abc123") < threads.index("diff --git")
    for name in ("midtrain_repo_code_32k", "midtrain_reasoning_32k", "midtrain_long_context_128k"):
        mm = manifests(out)[name]
        assert mm["packing"]["mode"] == "best_fit" and 0 < mm["packing"]["fill_rate"] <= 1
        for g in mm["groups"]:
            spans = read_parts(out / Path(g["packing"]["files"][0]["path"]).parent)
            assert spans["length"].sum() == g["tokens"]
            assert (spans["position"] + spans["length"] <= mm["seq_length"]).all()
    long_groups = {g["name"] for g in manifests(out)["midtrain_long_context_128k"]["groups"]}
    assert long_groups == {"long_docs/all", "agent/all"}
    assert groups["code/repo_level"]["documents"] == 2


def test_fim_is_applied_to_code_and_marked(stage_run):
    _, out, _ = stage_run
    m = manifests(out)["pretrain_phase1"]
    assert m["fim"]["enabled"] and m["fim"]["rate"] == 0.5 and m["fim"]["sources"] == ["code"]
    code = read_parts(out / "shards" / "pretrain_phase1" / "code" / "high")
    web = read_parts(out / "shards" / "pretrain_phase1" / "web" / "high")
    assert set(web["fim"]) == {"none"}
    assert web["meta"].isna().all()  # keep_meta: false — no raw HTML in training shards
    assert json.loads(web["provenance"].iloc[0])["quality_level"] == "high"
    originals = dict(zip(corpus()["doc_id"], corpus()["text"], strict=True))
    for d, text, mode in zip(code["doc_id"], code["text"], code["fim"], strict=True):
        assert fim_inverse(text, mode, FimSentinels()) == originals[d]
    assert sum(m["fim"]["documents"].values()) == sum(len(read_parts(out / "shards" / "pretrain_phase1" / "code" / t)) for t in ("high", "medium"))
    assert manifests(out)["midtrain_repo_code_32k"]["fim"] == {"enabled": False}


def test_a_phase_loads_with_datasets(stage_run):
    datasets = pytest.importorskip("datasets")
    _, out, _ = stage_run
    m = manifests(out)["pretrain_phase1"]
    files = [str(out / s["path"]) for g in m["groups"] for s in g["shards"]]
    ds = datasets.load_dataset("parquet", data_files=files, split="train", cache_dir=str(out.parent / "hf"))
    assert len(ds) == m["totals"]["documents"]
    assert sum(ds["n_tokens"]) == m["totals"]["tokens"]
    inter = m["exports"]["interleave_datasets"]
    parts = [datasets.load_dataset("parquet", data_files=[str(out / f) for f in fs], split="train", cache_dir=str(out.parent / "hf"))
             for fs in inter["data_files"]]
    mixed = datasets.interleave_datasets(parts, probabilities=inter["probabilities"], seed=0, stopping_strategy="first_exhausted")
    assert len(mixed) > 0 and set(mixed["group"]) <= set(inter["groups"])


def test_manifest_validate_command_catches_a_changed_shard(stage_run, tmp_path, capsys):
    _, out, _ = stage_run
    assert curate(["manifest", "validate", str(out)]) == 0
    import shutil

    copy = tmp_path / "copy"
    shutil.copytree(out, copy)
    m = manifests(copy)["midtrain_reasoning_32k"]
    shard = copy / m["groups"][0]["shards"][0]["path"]
    df = pd.read_parquet(shard)
    df.loc[0, "n_tokens"] += 1
    df.to_parquet(shard)
    assert curate(["manifest", "validate", str(copy / "manifests" / "midtrain_reasoning_32k.json")]) == 1
    assert "sha256" in capsys.readouterr().out


def test_shards_do_not_depend_on_input_partitioning(stage_run, tmp_path):
    _, out, _ = stage_run
    inp = make_stage_dir(tmp_path / "in", corpus(), nparts=5)
    run_one("mixture", inp, tmp_path / "out", FAST)
    a, b = manifests(out), manifests(tmp_path / "out")
    for name in PHASES:
        sa = [(s["path"], s["sha256"]) for g in a[name]["groups"] for s in g["shards"]]
        sb = [(s["path"], s["sha256"]) for g in b[name]["groups"] for s in g["shards"]]
        assert sa == sb


def test_missing_score_columns_use_the_defaults(tmp_path):
    rows = [{"doc_id": f"d{i}", "text": "plain words " * (5 + i), "source": "web" if i % 2 else "code"} for i in range(8)]
    rows.append({"doc_id": "x", "text": "a trajectory", "source": "agent"})
    inp = make_stage_dir(tmp_path / "in", docs_frame(rows))
    run_one("mixture", inp, tmp_path / "out", [*FAST, "mixture.phases.midtrain_long_context_128k=null"])
    kept, ledger = assert_conservation(inp, tmp_path / "out")
    assert set(ledger["reason"]) == {"no_phase"} and ledger["doc_id"].tolist() == ["x"]
    ms = manifests(tmp_path / "out")
    assert "midtrain_long_context_128k" not in ms
    groups = {g["name"]: g for g in ms["pretrain_phase1"]["groups"]}
    assert set(groups) == {"web/all", "code/all"}
    assert groups["web/all"]["repeat"] == 1.0 and groups["web/all"]["epochs"] == 0.75


def test_absolute_budget_above_the_caps_states_the_shortfall(tmp_path):
    inp = make_stage_dir(tmp_path / "in", corpus())
    res = run_one("mixture", inp, tmp_path / "out", [
        *FAST, "mixture.phases.midtrain_reasoning_32k.budget={tokens: 1000000}", "mixture.max_epochs={'*': 4.0}",
    ])
    m = manifests(tmp_path / "out")["midtrain_reasoning_32k"]
    assert not m["budget"]["met"] and m["budget"]["tokens"] == 1_000_000
    (short,) = m["shortfalls"]
    assert short["group"] == "reasoning/all" and short["reason"] == "epoch_cap" and short["cap"] == 4.0
    tokens = m["groups"][0]["unique_tokens"]
    assert m["groups"][0]["epochs"] == 4.0
    assert short["tokens"] == 1_000_000 - 4 * tokens
    assert res.stats["extra"]["phases"]["midtrain_reasoning_32k"]["shortfalls"][0]["tokens"] == short["tokens"]


def test_materialized_repeats_write_copies(tmp_path):
    inp = make_stage_dir(tmp_path / "in", corpus())
    run_one("mixture", inp, tmp_path / "out", [*FAST, "mixture.materialize_repeats=true"])
    m = manifests(tmp_path / "out")["pretrain_phase1"]
    assert m["repeats"] == "materialized"
    high = {g["name"]: g for g in m["groups"]}["web/high"]  # 3 epochs in phase 1
    assert high["documents"] == 3 * high["unique_documents"] and high["tokens"] == 3 * high["unique_tokens"]
    assert validate_manifest(tmp_path / "out" / "manifests" / "pretrain_phase1.json") == []


def test_cli_run_records_upstream_stages(tmp_path):
    src = tmp_path / "raw.jsonl"
    df = corpus()
    with open(src, "w") as fh:
        for r in df.to_dict("records"):
            rec = {k: v for k, v in r.items() if k not in ("n_tokens", "meta") and v is not None and v == v}
            if isinstance(r["meta"], str):
                rec["meta"] = json.loads(r["meta"])
            fh.write(json.dumps(rec) + "\n")
    rc = curate(["run", "pipelines/configs/glm45.yaml", "--input", str(src), "--output", str(tmp_path / "run"), "--scheduler", "synchronous",
                 "--quiet", "ingest.tokenizer=whitespace", *[f"{k}.enabled=false" for k in ("minhash_dedup", "semdedup", "web_quality", "code_quality", "code_web", "edu_score")],
                 "mixture.enabled=true", *FAST])
    assert rc == 0
    stage = tmp_path / "run" / "80_mixture"
    ms = manifests(stage)
    assert sorted(ms) == sorted(PHASES)
    up = [u["stage"] for u in ms["pretrain_phase1"]["upstream"]]
    assert up == ["ingest", "exact_dedup"]
    assert curate(["manifest", "validate", str(tmp_path / "run")]) == 0


def test_arrow_strings_and_missing_values(tmp_path):
    """The CLI's Dask default reads strings as Arrow strings (pd.NA for nulls)."""
    import dask

    from pipelines.recipe import load_recipe
    from pipelines.runner import run_stage

    df = corpus()
    df.loc[df["source"] == "web", "url"] = None
    inp = make_stage_dir(tmp_path / "in", df)
    recipe = load_recipe(None, ["mixture.enabled=true", *FAST])
    with dask.config.set({"dataframe.convert-string": True, "scheduler": "synchronous", "dataframe.shuffle.method": "tasks"}):
        run_stage("mixture", recipe, stage_dir=tmp_path / "out", input_dir=inp, quiet=True)
    assert_conservation(inp, tmp_path / "out")
    web = read_parts(tmp_path / "out" / "shards" / "pretrain_phase1" / "web" / "high")
    prov = json.loads(web["provenance"].iloc[0])
    assert prov["quality_level"] == "high" and "url" not in prov
    for p in (tmp_path / "out" / "manifests").glob("*.json"):
        assert validate_manifest(p) == []


def test_an_empty_input_partition_is_written_without_error(tmp_path):
    # every document of a partition dropped upstream (e.g. a file of bad records) leaves it empty
    rows = [{"doc_id": f"d{i}", "text": "plain words " * (5 + i), "source": "web"} for i in range(3)]
    inp = make_stage_dir(tmp_path / "in", docs_frame(rows), nparts=4)
    assert any(len(pd.read_parquet(p)) == 0 for p in (inp / "docs").glob("part-*.parquet"))
    run_one("mixture", inp, tmp_path / "out", FAST)
    kept, _ = assert_conservation(inp, tmp_path / "out")
    assert len(kept) == 3
