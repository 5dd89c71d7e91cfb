"""SemDeDup keeps the whole page when a copy cut short shares its vector (ties of the keep key)."""

import json
from pathlib import Path

import pandas as pd

from tests.helpers import assert_conservation, docs_frame, make_stage_dir, run_one
from tests.pipelines.test_semdedup_stage import STATIC, TOPICS, corpus

PAGE = " ".join([
    "Field notes from the spring survey of the river delta, written up for the volunteers who joined us.",
    *TOPICS,
    "We counted herons at dawn on three mornings and logged water temperature at each of the six stations.",
    "The next survey is planned for late September, when the migrating waders return to the mudflats.",
])


def test_a_page_and_its_half_prefix_keep_the_whole_page(tmp_path: Path) -> None:
    words = PAGE.split()
    half = " ".join(words[: len(words) // 2])  # the first 50 % of the page: a truncated copy
    # the prefix's id sorts first, so a tie broken by doc_id alone would keep the truncated copy
    extra = docs_frame([{"doc_id": "zz-page", "text": PAGE, "source": "web"},
                        {"doc_id": "aa-prefix", "text": half, "source": "web"}])
    docs = corpus()
    stage_input = make_stage_dir(tmp_path / "in", pd.concat([docs, extra[docs.columns]], ignore_index=True), nparts=2)
    # a window of 24 tokens: both texts are cut within their shared start, so they get one vector
    run_one("semdedup", stage_input, tmp_path / "out", [*STATIC, "semdedup.max_seq_length=24"])
    kept, ledger = assert_conservation(stage_input, tmp_path / "out")
    assert "zz-page" in set(kept["doc_id"])
    row = ledger.set_index("doc_id").loc["aa-prefix"]
    detail = json.loads(row["detail"])
    assert row["reason"] == "semantic_duplicate" and detail["duplicate_of"] == "zz-page" and detail["similarity"] > 0.999
