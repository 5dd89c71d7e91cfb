"""A group whose epochs are below 1 in every phase it enters: the replay draws only some of its
documents, and each one it shows 0 times in every phase goes to the ledger as ``not_drawn`` (with
its group's epochs), not kept; a kept document's ``mixture_phases`` are the phases that show it."""

import json
from pathlib import Path

import pandas as pd
import pytest

from tests.helpers import assert_conservation, docs_frame, make_stage_dir, run_one

MIDTRAIN = ("midtrain_repo_code_32k", "midtrain_reasoning_32k", "midtrain_long_context_128k")
OVERRIDES = ["mixture.tokenizer=whitespace", *(f"mixture.phases.{p}=null" for p in MIDTRAIN)]


def corpus() -> pd.DataFrame:
    """web/high (repeat 4) takes the cap of 4 epochs; web/medium_low (repeat 0.5) gets 0.5 over both phases."""
    rows = [
        {"doc_id": f"h{i:02d}", "text": "good " * (30 + i), "source": "web", "quality_level": "high"} for i in range(10)
    ]
    rows += [
        {"doc_id": f"m{i:02d}", "text": "fair " * (20 + i), "source": "web", "quality_level": "medium_low"}
        for i in range(30)
    ]
    df = docs_frame(rows)
    df["quality_level"] = df["quality_level"].astype(object)
    return df


def shown_phases(out: Path) -> dict[str, set[str]]:
    """doc_id → the phases whose shards show it at least once."""
    shown: dict[str, set[str]] = {}
    for f in sorted((out / "shards").rglob("*.parquet")):
        rows = pd.read_parquet(f, columns=["doc_id", "copies"])
        for d in rows.loc[rows["copies"] > 0, "doc_id"]:
            shown.setdefault(d, set()).add(f.relative_to(out / "shards").parts[0])
    return shown


@pytest.mark.parametrize("materialize", [False, True])
def test_documents_the_replay_never_shows_are_ledgered_not_drawn(tmp_path, materialize):
    inp = make_stage_dir(tmp_path / "in", corpus(), nparts=3)
    out = tmp_path / "out"
    run_one("mixture", inp, out, [*OVERRIDES, f"mixture.materialize_repeats={str(materialize).lower()}"])
    kept, ledger = assert_conservation(inp, out)
    epochs = {
        p.stem: {g["name"]: g["epochs"] for g in json.loads(p.read_text())["groups"]}
        for p in (out / "manifests").glob("*.json")
    }
    assert 0 < epochs["pretrain_phase1"]["web/medium_low"] < 1 and 0 < epochs["pretrain_phase2"]["web/medium_low"] < 1
    shown = shown_phases(out)
    undrawn = {f"m{i:02d}" for i in range(30)} - set(shown)
    assert undrawn, "the corpus must leave some web/medium_low documents undrawn"
    assert set(ledger["doc_id"]) == undrawn and set(ledger["reason"]) == {"not_drawn"}
    for detail in map(json.loads, ledger["detail"]):
        assert detail["group"] == "web/medium_low"
        assert detail["epochs"] == {
            p: pytest.approx(epochs[p]["web/medium_low"], abs=1e-6) for p in ("pretrain_phase1", "pretrain_phase2")
        }
        e1, e2 = detail["epochs"]["pretrain_phase1"], detail["epochs"]["pretrain_phase2"]
        said = f"web/medium_low at {e1:g} epochs in pretrain_phase1, {e2:g} epochs in pretrain_phase2"
        assert detail["rule"] == f"{said}: the replay draws other documents of the group"
    listed = dict(zip(kept["doc_id"], kept["mixture_phases"], strict=True))
    assert {d: set(p.split(",")) for d, p in listed.items()} == shown  # only the phases that show it
    assert any(len(p) == 1 for p in shown.values())


def test_a_built_documents_members_take_its_copies():
    """A repository file is shown as often as the repository document that holds it; plain rows by their own copies."""
    from curation.mixture.groups import REPO_GROUP
    from pipelines.stages.mixture_write import not_drawn

    rows = pd.DataFrame({"doc_id": ["c0", "c1", "c2", "c3"], "_part": [0, 1, 1, 2]})
    members = [json.dumps({"builder": "repo_code", "members": m}) for m in (["c0", "c1"], ["c2", "c3"])]
    built = pd.DataFrame({"doc_id": ["repo:a#0", "repo:a#1"], "copies": [0, 2], "provenance": members})
    out = not_drawn(rows, built, "p", REPO_GROUP)
    assert out.to_dict("list") == {"doc_id": ["c0", "c1"], "phase": ["p", "p"], "_part": [0, 1]}
    plain = pd.DataFrame({"doc_id": ["c0", "c1", "c2", "c3"], "copies": [1, 0, 3, 0], "provenance": "{}"})
    assert not_drawn(rows, plain, "p", "code/high")["doc_id"].tolist() == ["c1", "c3"]
