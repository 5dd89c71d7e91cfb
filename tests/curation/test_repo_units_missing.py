"""Repository-level documents: code files that name no repository or no path, and documents at the sequence length."""

import json

import pandas as pd
import pytest

from curation.mixture.groups import REPO_GROUP, THREADS_GROUP, memberships
from curation.mixture.phases import PhaseSpec
from curation.mixture.policy import doc_groups
from curation.mixture.replay import CopyPlan
from curation.mixture.shards import EOD_TOKENS, ShardOptions, build_shard
from tests.helpers import assert_conservation, docs_frame, make_stage_dir, read_parts, run_one

UNPLACED = "code/no_repo"
SPECS = [
    PhaseSpec("p1", tokens=1, mix={"code": 1.0}),
    PhaseSpec("repo", stage="midtrain", builder="repo_code", tokens=1, mix={"code": 1.0, "issues_prs_commits": 1.0}),
]


def code(doc_id, text="def f():\n    return 1\n", **fields):
    return {"doc_id": doc_id, "text": text, "source": "code", "code_tier": "high", **fields}


def test_files_without_a_repo_are_left_out_of_the_repository_phase():
    df = docs_frame([
        code("placed", repo="o/r", path="a.py"),
        code("from_meta", path="b.py", meta=json.dumps({"repo": "o/r"})),
        code("no_repo", path="dateutil/tz.py"),
        code("no_path", repo="o/r"),
        {"doc_id": "thread", "text": "issue", "source": "issues_prs_commits"},
    ])
    m = memberships(df, SPECS, doc_groups(df, {"*": 1.0}))
    rows = {(p, df["doc_id"].iloc[r]): (g, u, rep) for r, p, g, u, rep in m[["row", "phase", "group", "unit", "repeat"]].itertuples(index=False)}
    assert rows[("repo", "placed")] == rows[("repo", "from_meta")] == rows[("repo", "no_path")] == (REPO_GROUP, "repo:o/r", 1.0)
    # no made-up repository: accounted with repeat 0 (excluded_groups), the pre-training phase keeps it
    assert rows[("repo", "no_repo")] == (UNPLACED, "no_repo", 0.0)
    assert rows[("p1", "no_repo")][2] == 1.0
    assert rows[("repo", "thread")] == (THREADS_GROUP, "doc:thread", 1.0)  # threads: unchanged


def test_the_warning_counts_them_and_names_the_fix():
    from curation.mixture.groups import unplaced_warnings

    agg = pd.DataFrame({"phase": ["repo", "repo", "p1"], "group": [UNPLACED, REPO_GROUP, "code/high"],
                        "zero_documents": [8, 0, 0], "zero_tokens": [900, 0, 0]})
    (w,) = unplaced_warnings(agg)
    assert (w["phase"], w["documents"], w["tokens"]) == ("repo", 8, 900)
    assert "ingest.fields.repo=<field>" in w["message"] and "8 code file(s)" in w["message"]
    assert unplaced_warnings(agg[agg["group"] != UNPLACED]) == []


def test_the_stage_writes_no_made_up_header_and_accounts_for_every_file(tmp_path):
    rows = [code(f"c{i}", f"def f{i}():\n    return {i}\n", repo="org/tool", path=f"tool/m{i}.py") for i in range(3)]
    rows += [code(f"norepo{i}", f"def g{i}():\n    return {i}\n", path=f"rsa/m{i}.py") for i in range(2)]
    rows += [code("nopath", "def h():\n    return 0\n", repo="org/tool"), code("nopath2", "def k():\n    return 0\n", repo="org/tool")]
    rows += [{"doc_id": f"w{i}", "text": "word " * 40, "source": "web", "quality_level": "high"} for i in range(4)]
    inp = make_stage_dir(tmp_path / "in", docs_frame(rows), nparts=2)
    out = tmp_path / "out"
    run_one("mixture", inp, out, ["mixture.tokenizer=whitespace"])
    kept, ledger = assert_conservation(inp, out)
    phases = dict(zip(kept["doc_id"], kept["mixture_phases"], strict=True))
    assert phases["norepo0"] == phases["norepo1"] == "pretrain_phase1,pretrain_phase2"  # pre-training keeps them
    # a file without a path is in the repository phase as its repository's files are (the pre-training
    # phases' fractional epochs show some files in one of them only: mixture_phases lists the phases that show it)
    assert phases["c0"].endswith(",midtrain_repo_code_32k") and phases["nopath"].endswith(",midtrain_repo_code_32k")
    m = json.loads((out / "manifests" / "midtrain_repo_code_32k.json").read_text())
    excluded = {e["name"]: e for e in m["excluded_groups"]}
    assert excluded[UNPLACED]["documents"] == 2
    assert excluded[UNPLACED]["reason"] == "no_repo"  # its own reason: they are not dropped, unlike zero_weight groups
    assert [w["documents"] for w in m["warnings"] if w["check"] == "repo_fields"] == [2]  # said in the manifest too
    shards = pd.concat([read_parts(out / "shards" / "midtrain_repo_code_32k" / REPO_GROUP)])
    assert shards["repo"].tolist() == ["org/tool"]
    (text,) = shards["text"]
    assert text.startswith("<|repo_name|>org/tool\n") and "rsa/" not in text and "def g0" not in text
    # a file without a path keeps its repository and gets an empty path header, not its id
    assert "<|file_sep|>\ndef h():" in text and "<|file_sep|>\ndef k():" in text and "nopath" not in text
    members = [d for p in shards["provenance"] for d in json.loads(p)["members"]]
    assert sorted(members) == ["c0", "c1", "c2", "nopath", "nopath2"]


def repo_rows(sizes: list[int], repo: str = "o/r") -> pd.DataFrame:
    """A repository of one file per size; with the header tokens (1 + 1 per file, whitespace
    tokenizer) its one document would be ``1 + Σ (1 + size)`` tokens."""
    texts = [("w " * n).rstrip() + "\n" for n in sizes]
    return pd.DataFrame({"doc_id": [f"{repo}-{i}" for i in range(len(sizes))], "text": texts, "source": "code",
                         "n_tokens": sizes, "unit": f"repo:{repo}", "repo": repo, "path": [f"f{i}.py" for i in range(len(sizes))]})


def packed(rows: pd.DataFrame, seq_length: int, max_doc_tokens: int):
    spec = PhaseSpec("repo", stage="midtrain", builder="repo_code", seq_length=seq_length, packing="best_fit",
                     max_doc_tokens=max_doc_tokens, mix={"code": 1.0})
    return build_shard(rows, spec, REPO_GROUP, CopyPlan((("repo", 1.0),)), ShardOptions(seed=1, tokenizer="whitespace", fim_rate=0.0))


@pytest.mark.parametrize("total", [32767, 32768, 32769])
def test_a_repository_document_is_cut_below_the_sequence_by_its_eod(total):
    """Two files whose repository document would be ``total`` tokens at the shipped 32K sequence and
    ``max_doc_tokens: 32768``: each built document fits one sequence with its EOD, none is cut."""
    seq = 32768
    built = packed(repo_rows([100, total - 1 - 2 - 100]), seq, max_doc_tokens=seq)
    assert (built.frame["n_tokens"] + EOD_TOKENS <= seq).all()
    assert built.frame["n_tokens"].sum() >= total  # a second document repeats the repository header
    assert len(built.spans) == len(built.frame)  # one span per document: no EOD or last token packed alone
    assert not (built.spans["length"] == 1).any()


@pytest.mark.parametrize("total", [32767, 32768, 32769])
def test_a_one_file_repository_stays_whole_and_only_one_longer_than_the_sequence_is_cut(total):
    seq = 32768
    built = packed(repo_rows([total - 2]), seq, max_doc_tokens=seq)
    assert built.frame["n_tokens"].tolist() == [total]  # a single file is never split at a boundary
    lengths = sorted(built.spans["length"].tolist(), reverse=True)
    assert lengths == ([total + EOD_TOKENS] if total + EOD_TOKENS <= seq else [seq, total + EOD_TOKENS - seq])


def test_max_doc_tokens_below_the_sequence_is_kept():
    built = packed(repo_rows([3, 3, 3]), seq_length=100, max_doc_tokens=9)
    assert sorted(built.frame["n_tokens"].tolist()) == [5, 9]  # 1 + 4 + 4, then 1 + 4


def test_a_thread_record_without_a_repository_gets_no_made_up_header():
    rows = pd.DataFrame({"doc_id": ["t-lone", "t1"], "text": ["Crash on empty input", "Check the length"], "source": "issues_prs_commits",
                         "n_tokens": [4, 3], "unit": ["doc:t-lone", "repo:o/r"], "repo": [None, "o/r"],
                         "meta": [json.dumps({"kind": "issue", "number": 1}), json.dumps({"kind": "issue", "number": 2})]})
    spec = PhaseSpec("repo", stage="midtrain", builder="repo_code", seq_length=64, packing="best_fit", mix={"issues_prs_commits": 1.0})
    built = build_shard(rows, spec, THREADS_GROUP, CopyPlan((("repo", 1.0),)), ShardOptions(seed=1, tokenizer="whitespace", fim_rate=0.0))
    repos = built.frame["repo"].astype(object).where(built.frame["repo"].notna(), None)
    by_repo = {r: (t, n) for r, t, n in zip(repos, built.frame["text"], built.frame["n_tokens"], strict=True)}
    assert by_repo[None] == ("Crash on empty input", 4)  # not "<|repo_name|>t-lone"
    assert by_repo["o/r"][0].startswith("<|repo_name|>o/r\n")


def test_a_repository_phase_of_only_unplaced_files_says_where_its_code_went(caplog):
    from curation.mixture.plan import GroupStat, plan_phase

    with caplog.at_level("WARNING", logger="curation.mixture.plan"):
        plan = plan_phase(SPECS[1], {UNPLACED: GroupStat(tokens=900, repeat=0.0, documents=8)}, {})
    assert [s["reason"] for s in plan.shortfalls] == ["no_data"]
    (line,) = caplog.messages
    # not "no document of its mix": it has 8, all in a group it gives no epochs
    assert "no document" not in line and "code/no_repo: 8 documents" in line and "excluded_groups" in line
