"""code_web says what ``reparse`` did: stats.json counts the recalled pages re-parsed from their HTML and those
without HTML, and a run whose recalled pages have no HTML (a text-only input) says that reparse changes nothing."""

from __future__ import annotations

import logging

from tests.helpers import docs_frame, make_stage_dir, run_one
from tests.pipelines.test_code_web_stage import CODE_TEXT, _rows

OVERRIDES = ["ingest.tokenizer=whitespace", "code_web.tier_min_files=1"]


def test_stats_count_the_recalled_pages_reparsed_and_those_without_html(tmp_path, caplog):
    inp = make_stage_dir(tmp_path / "in", docs_frame(_rows()), nparts=2)
    with caplog.at_level(logging.INFO, logger="pipelines.stages.code_web"):
        res = run_one("code_web", inp, tmp_path / "out", OVERRIDES)
    extra = res.stats["extra"]
    assert extra["recalled_pages"] == 7  # six pages with HTML, one text page
    assert (extra["reparsed_pages"], extra["recalled_without_html"]) == (6, 1)
    assert "code_web: 7 recalled pages, 6 re-parsed, 1 without page HTML" in caplog.text
    assert "changes nothing" not in caplog.text


def test_reparse_on_a_text_only_input_is_said_to_change_nothing(tmp_path, caplog):
    rows = [{"doc_id": f"txt{i}", "text": CODE_TEXT.replace("load_0", f"load_{i}x"), "source": "web"} for i in range(3)]
    inp = make_stage_dir(tmp_path / "in", docs_frame(rows), nparts=1)
    with caplog.at_level(logging.INFO, logger="pipelines.stages.code_web"):
        res = run_one("code_web", inp, tmp_path / "out", [*OVERRIDES, "code_web.reparse=false"])
    extra = res.stats["extra"]
    assert (extra["recalled_pages"], extra["reparsed_pages"], extra["recalled_without_html"]) == (3, 0, 3)
    assert "no recalled page has HTML (a text-only input), so reparse = false changes nothing here" in caplog.text
