"""The example one-rule filter: pages whose lines mostly repeat are ledgered, others pass."""

import json

import pandas as pd

from classifiers.heuristics_repetition import dup_line_frac, repetition_signals
from pipelines.cluster import open_client
from pipelines.recipe import load_recipe
from pipelines.runner import enabled_stages, run_recipe
from tests.helpers import assert_conservation, docs_frame, make_stage_dir, only, read_parts, run_one

SPAM = "\n".join(["Buy now!"] * 6 + ["Cheap watches", "Call us"])  # 5 of 8 lines repeat an earlier one
PAGE = "A first line.\nA second line.\nA first line.\nThe end."  # 1 of 4


def _input(tmp_path):
    rows = [{"doc_id": f"spam{i}", "text": SPAM} for i in range(4)]
    rows += [{"doc_id": f"page{i}", "text": PAGE} for i in range(4)]
    rows += [{"doc_id": f"code{i}", "text": SPAM, "source": "code"} for i in range(2)]  # not a source of the stage
    return make_stage_dir(tmp_path / "in", docs_frame(rows), nparts=3)


def test_signal_is_gopher_dup_line_frac():
    assert dup_line_frac(SPAM) == repetition_signals(SPAM)["dup_line_frac"] == 5 / 8
    assert dup_line_frac(PAGE) == 0.25 and dup_line_frac("") == 0.0


def test_stage_ledgers_repeated_pages_of_its_sources_only(tmp_path):
    inp = _input(tmp_path)
    res = run_one("repeated_lines", inp, tmp_path / "runs" / "a")
    kept, ledger = assert_conservation(inp, tmp_path / "runs" / "a")
    assert sorted(ledger["doc_id"]) == [f"spam{i}" for i in range(4)]
    assert set(ledger["reason"]) == {"repeated_lines"} and set(ledger["stage"]) == {"repeated_lines"}
    assert json.loads(ledger["detail"].iloc[0]) == {"dup_line_frac": 5 / 8}
    kept = kept.set_index("doc_id")
    assert (kept.loc[[f"page{i}" for i in range(4)], "dup_line_frac"] == 0.25).all()
    assert kept.loc[["code0", "code1"], "dup_line_frac"].isna().all()  # code is not scored, so never dropped
    assert res.stats["dropped_by_reason"]["repeated_lines"]["documents"] == 4
    assert res.stats["extra"]["scored_documents"] == 8 and res.stats["extra"]["annotated"] == {"scored": 8}
    # a new threshold decides again from the cached scores: no second scores step
    res = run_one("repeated_lines", inp, tmp_path / "runs" / "b", ["repeated_lines.max_dup_line_frac=0.2"])
    assert res.stats["dropped"]["documents"] == 8
    assert len(list((tmp_path / "runs" / ".cache" / "repeated_lines").glob("scores-*"))) == 1


def test_stage_is_off_in_the_recipe_and_runs_between_its_neighbours_when_on(tmp_path):
    assert "repeated_lines" not in enabled_stages(load_recipe(None))
    assert "repeated_lines" not in enabled_stages({"stages": {}})  # its config's default, not only the recipe's
    raw = tmp_path / "raw"
    raw.mkdir()
    rows = [{"id": f"s{i}", "text": SPAM + f"\nunique {i}", "source": "web"} for i in range(3)]
    rows += [{"id": f"p{i}", "text": PAGE + f"\nunique {i}", "source": "web"} for i in range(3)]
    (raw / "a.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    recipe = load_recipe(None, ["ingest.tokenizer=whitespace", *only("exact_dedup", "repeated_lines")])
    with open_client("synchronous") as client:
        results = run_recipe(recipe, [str(raw)], tmp_path / "run", client=client, quiet=True)
    assert [r.stage_dir.name for r in results] == ["00_ingest", "10_exact_dedup", "15_repeated_lines"]
    ledger = read_parts(tmp_path / "run" / "15_repeated_lines" / "ledger")
    assert len(ledger) == 3 and set(ledger["reason"]) == {"repeated_lines"}
    assert isinstance(pd.read_parquet(tmp_path / "run" / "15_repeated_lines" / "docs")["dup_line_frac"].iloc[0], float)
