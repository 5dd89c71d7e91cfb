import pandas as pd

from curation.dedup.exact import exact_keys, pick_duplicates
from tests.helpers import assert_conservation, docs_frame, make_stage_dir, run_one


def test_keeper_rules_on_inline_groups():
    df = docs_frame([
        {"doc_id": "a", "text": "Same text here."},
        {"doc_id": "b", "text": "Same   text\nhere. "},
        {"doc_id": "c", "text": "Other"},
    ])
    keys = exact_keys(df).assign(_part=0, _row=range(3))
    first = pick_duplicates(keys, "first")
    assert first["doc_id"].tolist() == ["b"]
    assert first["drop_reason"].tolist() == ["exact_duplicate"]
    assert '"duplicate_of": "a"' in first["drop_detail"].iloc[0]
    longest = pick_duplicates(keys, "longest")
    assert longest["doc_id"].tolist() == ["a"]  # b's original text is longer


def test_nfkc_folds_compatibility_characters():
    df = docs_frame([{"doc_id": "a", "text": "ﬁne café"}, {"doc_id": "b", "text": "fine café"}])
    keys = exact_keys(df).assign(_part=0, _row=range(2))
    assert pick_duplicates(keys)["doc_id"].tolist() == ["b"]


def test_stage_conserves_documents_across_partitions(tmp_path):
    rows = [{"doc_id": f"x{i}", "text": f"text {i % 5}"} for i in range(20)]
    inp = make_stage_dir(tmp_path / "in", docs_frame(rows), nparts=3)
    res = run_one("exact_dedup", inp, tmp_path / "out")
    kept, ledger = assert_conservation(inp, tmp_path / "out")
    assert sorted(kept["doc_id"]) == ["x0", "x1", "x2", "x3", "x4"]
    assert set(ledger["reason"]) == {"exact_duplicate"}
    assert res.stats["dropped"]["documents"] == 15
    assert isinstance(pd.read_parquet(tmp_path / "out" / "ledger").iloc[0]["detail"], str)
