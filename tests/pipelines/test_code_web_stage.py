import json

import pandas as pd

import pipelines.stages.code_web as cw
from tests.helpers import assert_conservation, docs_frame, make_stage_dir, run_one

PAGE = """<html><body><nav><a href="/">Home</a> <a href="/docs">Docs</a></nav>
<div class="cookie-banner">We use cookies to improve your experience.</div>
<main><h1>Parsing numbers</h1><p>The function below parses one number per line and skips blank lines.</p>
<pre><code class="language-python">def parse(lines):
    out = []
    for line in lines:
        if line.strip():
            out.append(int(line))
    return out
</code></pre><p>Call it with the lines of a file.</p></main>
<footer>Copyright 2024 Example Docs</footer></body></html>"""
CODE_TEXT = ("Here is how to read the config:\n" + "\n".join(
    f"def load_{i}(path):\n    with open(path) as fh:\n        return json.load(fh)" for i in range(4)))
PROSE = "The village fair opens on Saturday with music, food stalls and a parade through the old town square."


def _rows() -> list[dict]:
    rows = []
    for i in range(6):
        rows.append({"doc_id": f"tag{i}", "text": "Parsing numbers The function below parses", "source": "web",
                     "meta": json.dumps({"html": PAGE.replace("one number", f"one number ({i})")})})
    rows.append({"doc_id": "txt", "text": CODE_TEXT, "source": "web"})
    rows.append({"doc_id": "prose", "text": PROSE, "source": "web", "meta": json.dumps({"html": f"<p>{PROSE}</p>"})})
    rows.append({"doc_id": "code", "text": "def f():\n    return 1\n", "source": "code"})
    return rows


def test_recall_reparse_and_conservation(tmp_path):
    inp = make_stage_dir(tmp_path / "in", docs_frame(_rows()), nparts=2)
    res = run_one("code_web", inp, tmp_path / "out", ["ingest.tokenizer=whitespace", "code_web.tier_low=0", "code_web.tier_min_files=1"])
    kept, ledger = assert_conservation(inp, tmp_path / "out")
    assert ledger.empty
    by_id = kept.set_index("doc_id")
    page = by_id.loc["tag0"]
    assert page["source"] == "web" and page["code_web_recall"] == "html_tags"  # the mixture policy makes it code_web
    assert "```python\ndef parse(lines):\n    out = []\n    for line in lines:\n        if line.strip():" in page["text"]
    assert "cookies" not in page["text"] and "Copyright" not in page["text"] and "Home" not in page["text"]
    assert json.loads(page["meta"])["original_text"].startswith("Parsing numbers")
    assert page["n_tokens"] == len(page["text"].split())
    assert page["code_tier"] in ("high", "medium") and page["code_web_score"] >= 0 and "code_repeat" not in kept.columns
    txt = by_id.loc["txt"]
    assert txt["source"] == "web" and txt["code_web_recall"] == "classifier" and txt["text"] == CODE_TEXT
    prose = by_id.loc["prose"]
    assert prose["source"] == "web" and pd.isna(prose["code_web_recall"]) and prose["text"] == PROSE
    assert by_id.loc["code", "source"] == "code"
    assert res.stats["extra"]["recalled_pages"] == 7


def test_low_tier_pages_are_annotated_not_removed_and_decided_without_rescoring(tmp_path, monkeypatch):
    inp = make_stage_dir(tmp_path / "in", docs_frame(_rows()), nparts=2)
    calls = []
    real = cw.score_frame
    monkeypatch.setattr(cw, "score_frame", lambda df, cfg, tok, *a, **kw: calls.append(1) or real(df, cfg, tok, *a, **kw))
    run_one("code_web", inp, tmp_path / "a", ["ingest.tokenizer=whitespace", "code_web.tier_low=0", "code_web.tier_min_files=1"])
    run_one("code_web", inp, tmp_path / "b", ["ingest.tokenizer=whitespace", "code_web.tier_mode=absolute",
                                              "code_web.tier_low=9.99", "code_web.tier_high=10"])
    assert len(calls) == 2  # scored once (two partitions), decided twice
    kept, ledger = assert_conservation(inp, tmp_path / "b")
    assert ledger.empty and (kept["code_tier"] == "low").sum() == 7  # the mixture excludes code_web/low, with its ledger row
    # html-tag recall only: the text-only page stays a web page
    run_one("code_web", inp, tmp_path / "c", ["ingest.tokenizer=whitespace", "code_web.recall=[html_tags]", "code_web.tier_low=0", "code_web.tier_min_files=1"])
    kept, _ = assert_conservation(inp, tmp_path / "c")
    assert pd.isna(kept.set_index("doc_id").loc["txt", "code_web_recall"])
    assert len(calls) == 4  # the recall rule picks the pages re-parsed: part of the scores step's key


def test_score_floor_is_said_to_have_no_effect(caplog):
    """Documented as no effect, score_floor=0.9 was accepted without a word (and re-ran the stage)."""
    from pipelines.stages.code_web import CodeWebConfig

    with caplog.at_level("WARNING"):
        CodeWebConfig(score_floor=0.9).validate()
    assert "code_web.score_floor = 0.9 has no effect" in caplog.text
    caplog.clear()
    with caplog.at_level("WARNING"):
        CodeWebConfig().validate()
    assert "score_floor" not in caplog.text
