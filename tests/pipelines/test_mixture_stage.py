import json
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest

from curation.mixture.fim import FimSentinels, fim_inverse
from curation.mixture.manifest_check import validate_manifest
from pipelines.cli import main as curate
from tests.helpers import assert_conservation, docs_frame, make_stage_dir, only, read_parts, run_one

PHASES = ["pretrain_phase1", "pretrain_phase2", "midtrain_repo_code_32k", "midtrain_reasoning_32k", "midtrain_long_context_128k"]
FAST = ["mixture.tokenizer=whitespace", "mixture.phases.midtrain_long_context_128k.min_tokens=300"]


def corpus() -> pd.DataFrame:
    rows = []
    levels = ["high", "medium_high", "medium", "medium_low", "low"]
    for i in range(30):
        rows.append({"doc_id": f"w{i:02d}", "text": f"page {i} " + "word " * (20 + 3 * i), "source": "web",
                     "quality_level": levels[i % 5], "edu_band": "high" if i % 7 == 0 else "low", "edu_score": 3.5 if i % 7 == 0 else 1.0,
                     "quality_score_heuristics": float(i), "lang": "zh" if i % 3 == 0 else "en"})
    rows[0]["meta"] = json.dumps({"html": "<html><p>page 0</p></html>"})
    rows[3].update(code_web_recall="html_tags", code_tier="low")  # a recalled code page of the low tier
    rows[8].update(code_web_recall="classifier", code_tier="high")
    rows.append({"doc_id": "w_long", "text": "long " * 400, "source": "web", "quality_level": "high", "edu_band": "low"})
    repo = {
        "README.md": "# tool\nUsage notes.\n",
        "tool/core.py": "from tool import util\n\ndef run():\n    return util.f()\n",
        "tool/util.py": "def f():\n    return 1\n",
        "tool/bad.py": "x=1;y=2;z=3\n",
    }
    tiers = {"README.md": "medium", "tool/core.py": "high", "tool/util.py": "high", "tool/bad.py": "low"}
    for j, (path, text) in enumerate(repo.items()):
        rows.append({"doc_id": f"c{j}", "text": text, "source": "code", "repo": "org/tool", "path": path, "language": "Python",
                     "code_tier": tiers[path]})
    rows.append({"doc_id": "c_other", "text": "package main\n\nfunc main() {}\n", "source": "code", "repo": "org/gotool", "path": "main.go",
                 "language": "Go", "code_tier": "medium"})
    for k in range(4):
        rows.append({"doc_id": f"m{k}", "text": f"theorem {k} " + "proof " * 30, "source": "math_science",
                     "edu_band": ["high", "medium", "low", "high"][k], "edu_score": [4.1, 2.5, 1.0, 3.9][k]})
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
    for col in ("quality_level", "code_tier", "edu_band", "code_web_recall", "lang"):
        df[col] = df[col].astype(object)
    return df


def max_doc_tokens(out: Path, group: dict) -> int:
    sizes = [pq.read_table(out / s["path"], columns=["n_tokens"]).column("n_tokens").to_numpy() for s in group["shards"]]
    return max((int(x.max()) for x in sizes if len(x)), default=0)


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
    # the policy's exclusions, each with the recipe's reason; w14 is low but edu-rich, so web_edu wins
    assert reasons == {"w04": "low_quality", "w09": "low_quality", "w19": "low_quality", "w24": "low_quality", "w29": "low_quality",
                       "c3": "code_low_tier", "w03": "code_web_low_tier",
                       # below one epoch the replay draws other documents of their groups in every phase they enter
                       "a0": "not_drawn", "m2": "not_drawn", "w13": "not_drawn", "w18": "not_drawn"}
    agent = json.loads(ledger.set_index("doc_id").loc["a0", "detail"])
    assert agent["group"] == "agent/all" and list(agent["epochs"]) == ["midtrain_long_context_128k"]
    assert 0 < agent["epochs"]["midtrain_long_context_128k"] < 1 and "draws other documents of the group" in agent["rule"]
    detail = json.loads(ledger.set_index("doc_id").loc["c3", "detail"])
    assert detail["group"] == "code/low" and detail["rule"] == "mixture.repeat[code/low] = 0" and detail["scores"]["code_tier"] == "low"
    web = json.loads(ledger.set_index("doc_id").loc["w09", "detail"])
    assert web["precedence"] == "web level" and web["scores"]["quality_score_heuristics"] == 9.0 and web["scores"]["lang"] == "zh"
    assert json.loads(ledger.set_index("doc_id").loc["w03", "detail"])["precedence"] == "code_web recall (html_tags)"
    phases = dict(zip(kept["doc_id"], kept["mixture_phases"], strict=True))
    # long_docs/all of the long-context phase is below one epoch and its replay draws none (the phase warns):
    # the phases listed are those that show the document
    assert phases["w_long"] == "pretrain_phase1,pretrain_phase2"
    assert phases["c1"] == "pretrain_phase1,pretrain_phase2,midtrain_repo_code_32k"
    assert phases["r0"] == "midtrain_reasoning_32k" and "a0" not in phases
    groups = dict(zip(kept["doc_id"], kept["mixture_group"], strict=True))
    assert groups["w00"] == groups["w14"] == "web_edu/high" and groups["w08"] == "code_web/high"


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
        assert m["budget"]["met"] or all(s["reason"] in ("epoch_cap", "no_data") for s in m["shortfalls"])
        assert set(m["languages"]) <= {"zh", "en", "und"} and sum(v["share"] for v in m["languages"].values()) == pytest.approx(1.0, abs=1e-5)
    p1, p2 = ms["pretrain_phase1"], ms["pretrain_phase2"]
    assert p1["budget"]["met"] and p2["budget"]["met"] and p1["budget"]["recipe_scale"] == p2["budget"]["recipe_scale"] > 0
    assert p1["budget"]["planned_tokens"] / p2["budget"]["planned_tokens"] == pytest.approx(15 / 7, rel=0.01)  # GLM-4.5's 15T : 7T
    assert p1["budget"]["full_scale_tokens"] == 15 * 10**12
    top = res.stats["extra"]["pretrain_epochs"]["web/high"]
    warned = [w for w in p1["warnings"] if w["check"] == "top_level_epochs"]
    assert (top < 3.2) == bool(warned)  # the plan's outcome, reported when short
    assert p1["languages"]["zh"]["tokens"] > 0 and p1["languages"]["en"]["tokens"] > 0
    assert {e["name"] for e in p1["excluded_groups"]} == {"web/low", "code/low", "code_web/low"}
    assert p1["packing"] == {"mode": "none", "truncation": "random", "eod_tokens": 1} and p1["seq_length"] == 4096
    assert p1["tokenizer"] == "whitespace" and "exports" not in p1  # the trainer's files come from `curate export`


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
        assert mm["packing"]["mode"] == "best_fit"
        if mm["packing"]["sequences"]:
            assert 0 < mm["packing"]["fill_rate"] <= 1
        else:  # no sequence to fill: no rate (it said 1.0, a full pack)
            assert mm["packing"]["fill_rate"] is None and mm["budget"]["replay_tokens"] == 0
        for g in mm["groups"]:
            spans = read_parts(out / Path(g["packing"]["files"][0]["path"]).parent)
            # every planned copy is packed, not each document once, each with its end-of-document token
            assert spans["length"].sum() == g["replay_tokens"] + g["replay_documents"]
            assert abs(g["replay_tokens"] - g["planned_tokens"]) <= max(0.02 * g["planned_tokens"], max_doc_tokens(out, g))
            assert g["replay_cap"] is None or g["replay_epochs"] <= g["replay_cap"] + 1e-6  # each manifest's own figure
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


def test_replay_equals_plan_and_no_group_passes_its_cap(stage_run):
    """What the shards replay (Σ copies × tokens) is the plan: each group within 2 % or one document,
    each phase within 2 %, and over the pre-training phases no group above its cap."""
    _, out, _ = stage_run
    ms = manifests(out)
    for m in ms.values():
        for g in m["groups"]:
            rows = read_parts(out / Path(g["shards"][0]["path"]).parent)
            assert int((rows["copies"] * rows["n_tokens"]).sum()) == g["replay_tokens"]
            assert abs(g["replay_tokens"] - g["planned_tokens"]) <= max(0.02 * g["planned_tokens"], max_doc_tokens(out, g))
            assert g["replay_cap"] is None or g["replay_epochs"] <= g["replay_cap"] + 1e-6  # each manifest's own figure
        b = m["budget"]
        if abs(b["replay_tokens"] - b["planned_tokens"]) > 0.02 * b["planned_tokens"]:
            assert not b["met"]  # a replay off the plan never passes as met
    replayed: dict[str, float] = {}
    for name in ("pretrain_phase1", "pretrain_phase2"):
        for g in ms[name]["groups"]:
            replayed[g["name"]] = replayed.get(g["name"], 0.0) + g["replay_tokens"] / g["unique_tokens"]
    assert replayed and all(e <= 4.0 + 1e-9 for e in replayed.values())  # max_epochs {"*": 4.0} holds for the replay
    p1, p2 = ms["pretrain_phase1"]["budget"], ms["pretrain_phase2"]["budget"]
    assert p1["replay_tokens"] / p2["replay_tokens"] == pytest.approx(15 / 7, rel=0.03)


def test_a_fractional_epoch_never_gives_every_document_a_copy(tmp_path):
    """A long-context budget smaller than one document replays nothing and says so; it is not 8x its plan."""
    inp = make_stage_dir(tmp_path / "in", corpus(), nparts=2)
    run_one("mixture", inp, tmp_path / "out", [*FAST, "mixture.phases.midtrain_long_context_128k.budget={tokens: 10}"])
    m = manifests(tmp_path / "out")["midtrain_long_context_128k"]
    assert m["budget"]["planned_tokens"] == 10 and m["budget"]["replay_tokens"] <= 15
    if m["budget"]["replay_tokens"] != 10:
        assert not m["budget"]["met"] and any(w["check"] == "replay" for w in m["warnings"])


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
    run_one("mixture", inp, tmp_path / "out", [FAST[0], "mixture.phases.midtrain_long_context_128k=null"])  # not its min_tokens too
    kept, ledger = assert_conservation(inp, tmp_path / "out")
    assert set(ledger["reason"]) == {"no_phase"} and ledger["doc_id"].tolist() == ["x"]
    ms = manifests(tmp_path / "out")
    assert "midtrain_long_context_128k" not in ms
    groups = {g["name"]: g for g in ms["pretrain_phase1"]["groups"]}
    assert set(groups) == {"web/all", "code/all"}
    assert groups["web/all"]["repeat"] == 1.0 and groups["web/all"]["mix"] == 0.75
    assert groups["web/all"]["epochs"] / groups["code/all"]["epochs"] == pytest.approx(0.75 / 0.4)


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
    # stats --mixture says it, as text and as data
    from pipelines.summary import _shortfall, mixture_json, mixture_table, mixture_view

    view = mixture_view(tmp_path / "out")
    assert (f"shortfall (epoch_cap): reasoning/all is {short['tokens']:,} tokens short, held at its cap of 4 epochs"
            in mixture_table(view))
    assert mixture_json(view)["phases"]["midtrain_reasoning_32k"]["shortfalls"] == [short]
    no_data = {"group": None, "reason": "no_data", "tokens": 40906, "cap": None, "wanted_epochs": None}
    assert _shortfall(no_data).startswith("no document of the run is in this phase's groups: its 40,906-token budget")


def test_materialized_repeats_write_copies(tmp_path):
    inp = make_stage_dir(tmp_path / "in", corpus())
    fraction = "mixture.phases.midtrain_repo_code_32k.tokens=80000000000"  # repositories at 0.46 epochs: one of two shown
    run_one("mixture", inp, tmp_path / "out", [*FAST, fraction, "mixture.materialize_repeats=true"])
    run_one("mixture", inp, tmp_path / "weights", [*FAST, fraction])
    ms, weights = manifests(tmp_path / "out"), manifests(tmp_path / "weights")
    m = ms["pretrain_phase1"]
    assert m["repeats"] == "materialized"
    for g in m["groups"]:  # the copies written are the plan's epochs (a token-weighted fraction of the documents for e − ⌊e⌋)
        assert g["documents"] == g["replay_documents"] and g["tokens"] == g["replay_tokens"]
        assert abs(g["tokens"] - g["epochs"] * g["unique_tokens"]) <= max(0.02 * g["planned_tokens"], max_doc_tokens(tmp_path / "out", g))
    # replayed epochs count over every document of the group, shown or not: the same as with weights,
    # and so within the cap the phases share (a fractional epoch's copies were counted over the shown
    # documents alone, 1.0 epochs above a 0.99 replay cap in phase 2); repository documents built
    # after planning are planned on all of them (the shown ones alone gave a fifth of the plan)
    for phase, man in ms.items():
        assert validate_manifest(tmp_path / "out" / "manifests" / f"{phase}.json") == []
        keys = ("replay_epochs", "replay_tokens", "planned_tokens", "weight")  # built groups are planned on all their documents too
        want = {g["name"]: [g[k] for k in keys] for g in weights[phase]["groups"]}
        assert {g["name"]: [g[k] for k in keys] for g in man["groups"]} == want
        assert man["budget"]["planned_tokens"] == weights[phase]["budget"]["planned_tokens"]
    assert any(0 < g["replay_epochs"] < 1 for man in ms.values() for g in man["groups"] if not g.get("fim"))


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
                 "--quiet", "ingest.tokenizer=whitespace", *only("exact_dedup", "mixture"), *FAST])
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


def test_auto_scale_without_pretraining_data_fits_the_phases_that_have_some(tmp_path):
    rows = [{"doc_id": f"r{i}", "text": "Let us think step by step. " * (3 + i), "source": "reasoning"} for i in range(6)]
    inp = make_stage_dir(tmp_path / "in", docs_frame(rows))
    res = run_one("mixture", inp, tmp_path / "out", FAST)
    kept, ledger = assert_conservation(inp, tmp_path / "out")
    assert ledger.empty and res.stats["extra"]["scale"]["value"] > 0
    m = manifests(tmp_path / "out")["midtrain_reasoning_32k"]
    assert m["budget"]["met"] and {g["name"]: g["epochs"] for g in m["groups"]}["reasoning/all"] == pytest.approx(4.0)


def test_fim_sentinels_that_are_not_single_tokens_of_the_tokenizer_are_refused(tmp_path, caplog):
    """A tokenizer.json without Qwen's FIM tokens gave FIM'd code whose sentinels were plain text (8
    ids each with SmolLM2's), with nothing said. Here Qwen's file with the FIM tokens taken out."""
    import logging

    from curation.tokens import qwen_tokenizer_path

    spec = json.loads(qwen_tokenizer_path().read_text(encoding="utf-8"))
    spec["added_tokens"] = [t for t in spec["added_tokens"] if not t["content"].startswith("<|fim_")]
    tok = tmp_path / "tokenizer.json"
    tok.write_text(json.dumps(spec), encoding="utf-8")
    args = ["run", "pipelines/configs/glm45.yaml", "--input", "sample_data", "--output", str(tmp_path / "run"), "--dry-run",
            f"ingest.tokenizer={tok}", f"mixture.tokenizer={tok}"]
    caplog.set_level(logging.ERROR)
    assert curate(args) == 2
    assert "mixture.fim_sentinels.middle = '<|fim_middle|>' is " in caplog.text and "not one: give its FIM tokens" in caplog.text
    assert curate([*args, "mixture.fim_rate=0"]) == 0
    assert curate([*args[:-2]]) == 0  # Qwen's own file: its sentinels are single tokens
