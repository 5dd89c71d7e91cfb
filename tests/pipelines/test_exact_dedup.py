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


def test_nfkc_folds_compatibility_characters_and_the_copy_as_typed_is_kept():
    df = docs_frame([{"doc_id": "a", "text": "ﬁne café"}, {"doc_id": "b", "text": "fine café"}])
    keys = exact_keys(df).assign(_part=0, _row=range(2))
    assert pick_duplicates(keys)["doc_id"].tolist() == ["a"]  # one copy: the ligature's is the one dropped


def test_full_width_and_zero_width_copies_lose_to_the_text_as_typed_under_both_rules():
    note = "# MySQL 索引\n\nB+ Tree 是一种平衡树，SELECT * FROM t WHERE id = 1; 查询走主键索引。\n" * 20
    full_width = "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in note)
    zero_width = "\u200b".join(note[i:i + 40] for i in range(0, len(note), 40))  # longest of the three
    df = docs_frame([{"doc_id": "fw", "text": full_width}, {"doc_id": "orig", "text": note},
                     {"doc_id": "zw", "text": zero_width}])
    keys = exact_keys(df).assign(_part=0, _row=range(3))
    assert keys["hash"].nunique() == 1
    for keep in ("first", "longest"):
        dropped = pick_duplicates(keys, keep)
        assert sorted(dropped["doc_id"]) == ["fw", "zw"], keep
        assert all('"duplicate_of": "orig"' in d for d in dropped["drop_detail"])


def test_stage_conserves_documents_across_partitions(tmp_path):
    rows = [{"doc_id": f"x{i}", "text": f"text {i % 5}"} for i in range(20)]
    inp = make_stage_dir(tmp_path / "in", docs_frame(rows), nparts=3)
    res = run_one("exact_dedup", inp, tmp_path / "out")
    kept, ledger = assert_conservation(inp, tmp_path / "out")
    assert sorted(kept["doc_id"]) == ["x0", "x1", "x2", "x3", "x4"]
    assert set(ledger["reason"]) == {"exact_duplicate"}
    assert res.stats["dropped"]["documents"] == 15
    assert isinstance(pd.read_parquet(tmp_path / "out" / "ledger").iloc[0]["detail"], str)
