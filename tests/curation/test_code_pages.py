"""Code-related web pages: page scores, recall and annotation as pure functions."""

import json

import numpy as np
import pandas as pd

from curation.quality.code_pages import annotate_pages, page_html, page_score, recall_method, with_original
from curation.quality.code_tiers import TierRule


def _scores() -> pd.DataFrame:
    return pd.DataFrame({
        "doc_id": ["tags", "clf", "both", "none", "empty"],
        "pre_blocks": [2, 0, 1, 0, 3], "highlighted": [0, 0, 0, 0, 0], "code_chars": [200, 0, 80, 0, 90],
        "content_prob": [0.1, 0.9, 0.95, 0.2, 0.9], "score": [6.0, 5.0, 7.0, 1.0, np.nan],
        "reparsed": ["```python\nx = 1\n```", None, None, None, None], "language": ["Python", None, None, None, None],
        "n_tokens": [5, -1, -1, -1, -1],
    })


def test_recall_prefers_tags_and_needs_a_score():
    s = _scores()
    assert recall_method(s, ("html_tags", "classifier"), 1, 40, 0.7).tolist() == ["html_tags", "classifier", "html_tags", None, None]
    assert recall_method(s, ("classifier",), 1, 40, 0.7).tolist() == [None, "classifier", "classifier", None, None]
    assert recall_method(s, ("html_tags",), 1, 100, 0.7).tolist() == ["html_tags", None, None, None, None]


def test_page_score_weighs_blocks_by_size_and_rewards_explanation():
    bare, _ = page_score("x = 1\n" * 10, [("python", "x = 1\n" * 10)], lambda code, lang: 10.0)
    explained, lang = page_score("Some words. " * 10 + "x = 1\n" * 10, [("python", "x = 1\n" * 10)], lambda code, lang: 10.0)
    assert explained > bare and lang == "Python"
    assert np.isnan(page_score("text", [("", "  ")], lambda code, lang: 10.0)[0])


def test_annotate_pages_replaces_the_text_of_recalled_pages_and_keeps_a_short_original():
    s = _scores()
    docs = pd.DataFrame({"doc_id": ["tags", "none", "code"], "text": ["x = 1 (flat)", "prose", "int main;"],
                         "source": ["web", "web", "code"], "meta": [None, None, None], "language": [None, None, "C"],
                         "n_tokens": [3, 1, 2], "code_tier": [None, None, "high"]})
    recalled = recall_method(s, ("html_tags", "classifier"), 1, 40, 0.7)
    out = annotate_pages(docs, s, recalled, {"structural": 1.0}, TierRule("absolute", 8.0, 4.0), {}, 100).set_index("doc_id")
    assert out.loc["tags", "code_web_recall"] == "html_tags" and out.loc["tags", "code_tier"] == "medium"
    assert out.loc["tags", "text"].startswith("```python") and out.loc["tags", "n_tokens"] == 5
    assert json.loads(out.loc["tags", "meta"])["original_text"] == "x = 1 (flat)"
    assert pd.isna(out.loc["none", "code_web_recall"]) and out.loc["none", "text"] == "prose"
    assert out.loc["code", "code_tier"] == "high"  # code_quality's tier passes through
    assert out["drop_reason"].isna().all()


def test_page_html_and_with_original():
    assert page_html(json.dumps({"html": "<pre>x</pre>"})) == "<pre>x</pre>"
    assert page_html("not json") is None and page_html(json.dumps({"html": "  "})) is None
    assert json.loads(with_original("[1]", "o", 5)) == {"meta": "[1]", "original_text": "o"}
    assert "original_text" not in json.loads(with_original(None, "too long", 3))


_TIE = """
from curation.quality.code_pages import page_score
blocks = [("python", "x = 1\\n" * 3), ("sql", "SELECT 1;"), ("sql", "SELECT 2;"), ("python", "y = 2\\n")]
print(page_score("words " * 50, blocks, lambda code, lang: 5.0)[1])
"""


def test_a_tie_between_languages_gets_the_same_main_language_in_every_process():
    # two Python and two SQL blocks: the main language was taken from a set, whose order follows the
    # per-process string hash, so two runs of one corpus could write different documents
    import os
    import subprocess
    import sys

    seen = {subprocess.run([sys.executable, "-c", _TIE], capture_output=True, text=True, check=True,
                           env={**os.environ, "PYTHONHASHSEED": str(seed)}).stdout.strip() for seed in range(8)}
    assert seen == {"Python"}  # more code characters (24 against 18)


def test_main_language_ties_go_to_more_code_then_to_the_first_on_the_page():
    from curation.quality.code_pages import main_language

    assert main_language(["SQL", "Python", "Python", "SQL"], [30, 5, 5, 10]) == "SQL"
    assert main_language(["SQL", "Python"], [7, 7]) == "SQL"
    assert main_language(["Go", "Python", "Python"], [100, 1, 1]) == "Python"  # most blocks first
    assert main_language([None, None], [1, 2]) is None
