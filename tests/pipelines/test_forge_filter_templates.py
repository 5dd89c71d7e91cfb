"""forge_filter judges what people wrote in a template, a score drop's ledger row says why, and a
mid-training phase's replay warning names that phase's own budget."""

import json

import pytest

from curation.mixture.replay_check import check_replay
from curation.quality.forge import WEIGHTS, forge_features, forge_flags, forge_score
from pipelines.cluster import open_client
from tests.helpers import assert_conservation, docs_frame, make_stage_dir, run_one
from tests.pipelines.test_mixture_stage import FAST, corpus, manifests

STOCK = """<!--
Thanks for contributing! Please fill in the template below.
-->

**Describe the bug**
{description}

**To Reproduce**
Steps to reproduce the behavior:
1. Go to '...'
2. Click on '....'
3. Scroll down to '....'
4. See error

**Expected behavior**
A clear and concise description of what you expected to happen.

**Environment**
- OS: {os}
- Python version: {py}
- attrs version:

- [ ] I searched the existing issues"""
DESCRIPTION = ("attrs.evolve() skips converters on fields with init=False, so the new instance holds the raw string "
               '"12" instead of the int 12 that the converter would give.')


def _issue(body, title="evolve() loses converters"):
    return {"kind": "issue", "number": 310, "title": title, "author": "euresti"}, f"# {title}\n\nattrs#310 opened by @euresti on 2024-06-01\n\n{body}"


def _verdict(meta, text):
    rule, _ = forge_flags(meta, text)
    return rule or ("low_forge_score" if forge_score(forge_features(meta, text)) < 0.5 else None)


def test_a_filled_template_keeps_its_score_and_a_template_with_a_label_filled_goes():
    """The stock bug report with a real description and the rest of the template left scored
    0.450 (dropped) while template lines counted whatever was written; a template with only its
    environment labels filled is still no report."""
    filled = _issue(STOCK.format(description=DESCRIPTION, os="", py="3.12.3"))
    assert forge_flags(*filled) == (None, None)
    assert forge_score(forge_features(*filled)) > 0.8  # the same words without the template score 0.90
    labels_only = _issue(STOCK.format(description="", os="Linux", py="3.12.3"))
    assert forge_flags(*labels_only) == (None, None)  # "Linux Python version 3 12 3": past min_words
    assert _verdict(*labels_only) == "low_forge_score"
    few = _issue(STOCK.format(description="evolve is broken", os="", py=""))
    assert _verdict(*few) == "low_forge_score"
    # unfilled, title-only and "+1" threads still go, by rule and (with min_words=0) by score
    for body in (STOCK.format(description="", os="", py=""), "", "+1"):
        assert _verdict(*_issue(body)) == "empty_thread"
        meta, text = _issue(body)
        assert forge_score(forge_features(meta, text)) < 0.5


def test_a_score_drop_ledgers_its_features_and_their_terms(tmp_path):
    links = _issue("See https://a.example/1 and https://a.example/2 or https://a.example/3 https://a.example/4", title="Links")
    good = _issue(DESCRIPTION)
    rows = [{"doc_id": name, "text": text, "meta": json.dumps(meta), "source": "issues_prs_commits"}
            for name, (meta, text) in {"links": links, "good": good, "plus1": _issue("+1")}.items()]
    inp = make_stage_dir(tmp_path / "in", docs_frame(rows), nparts=2)
    with open_client(workers=2) as client:
        run_one("forge_filter", inp, tmp_path / "out", client=client)
    kept, ledger = assert_conservation(inp, tmp_path / "out")
    assert list(kept["doc_id"]) == ["good"]
    ledger = ledger.set_index("doc_id")
    assert dict(ledger["reason"]) == {"links": "low_forge_score", "plus1": "empty_thread"}
    detail = json.loads(ledger.loc["links", "detail"])
    features, terms = detail["forge_features"], detail["forge_terms"]
    assert set(features) == set(WEIGHTS) - {"bias"} and set(terms) == set(WEIGHTS)
    assert features["url_frac"] > 0.2 and terms["url_frac"] == pytest.approx(WEIGHTS["url_frac"] * features["url_frac"], abs=1e-3)
    assert min(terms, key=terms.get) == "url_frac"  # the links sank it
    assert forge_score(features) == pytest.approx(detail["forge_score"], abs=1e-3)
    assert "forge_features" not in json.loads(ledger.loc["plus1", "detail"])  # a rule drop has its evidence


def test_a_mid_training_replay_warning_names_the_phase_budget_and_pretraining_keeps_the_scale(tmp_path):
    """A repo-code phase that plans 4,719 thread tokens and replays 0: raising mixture.scale past
    `auto` breaks the pre-training plan, the phase's own budget does not."""
    threads = {"name": "issues_prs_commits/threads", "planned_tokens": 4_719, "replay_tokens": 0,
               "unique_tokens": 57_654, "unique_documents": 4}
    (w,) = check_replay("midtrain_repo_code_32k", [threads], 108_634, stage="midtrain")
    assert "phases.midtrain_repo_code_32k.budget={tokens: 16591000}" in w["message"]  # 108,634 × 14,414 / (2 % × 4,719)
    assert "raise mixture.scale" not in w["message"]
    (w,) = check_replay("pretrain_phase1", [threads], 108_634)
    assert w["message"].endswith("add data or raise mixture.scale")
    # through the stage: a 128K phase of 10 tokens replays none of its long documents
    inp = make_stage_dir(tmp_path / "in", corpus(), nparts=2)
    run_one("mixture", inp, tmp_path / "out", [*FAST, "mixture.phases.midtrain_long_context_128k.budget={tokens: 10}"])
    said = [x["message"] for x in manifests(tmp_path / "out")["midtrain_long_context_128k"]["warnings"] if x["check"] == "replay"]
    assert said and "phases.midtrain_long_context_128k.budget={tokens: " in said[0] and "raise mixture.scale" not in said[0]
