"""One huge document of a large group that takes most of a phase is a concentration: a 12 MB web page
(2.5M tokens, web_edu/high) took 78 % of phase 1 and 94 % of phase 2 without a word, since only
groups of at most concentration_max_documents documents were checked."""

import pandas as pd
import pytest

from curation.mixture.accounting import account, group_stats, sum_accounts
from curation.mixture.checks import ConcentrationError, check_plans
from curation.mixture.phases import PhaseSpec
from curation.mixture.plan import plan_phase
from curation.mixture.policy import Policy

SPEC = PhaseSpec("p1", tokens=10_000, mix={"web": 1.0})


def plans_of(sizes: list[int]) -> dict:
    parts = []
    for half in (sizes[::2], sizes[1::2]):  # two partitions: the largest document is combined by max, not summed
        df = pd.DataFrame({"doc_id": [f"d{i}-{len(parts)}" for i in range(len(half))], "text": ["x"] * len(half), "source": "web",
                           "n_tokens": half, "quality_level": "high", "lang": "en"})
        parts.append(account(df, [SPEC], Policy(repeat={"*": 1.0}), tokenizer="whitespace"))
    stats = group_stats(sum_accounts(pd.concat(parts)))
    assert stats["p1"]["web/high"].max_doc_tokens == max(sizes)
    return {"p1": plan_phase(SPEC, stats["p1"], {})}


def test_one_document_of_a_large_group_that_takes_most_of_a_phase_is_said(caplog):
    plans = plans_of([100] * 40 + [30_000])
    warnings = check_plans(plans, [SPEC], min_top_epochs=0)
    (w,) = [w for w in warnings if w["check"] == "concentration"]
    assert (w["group"], w["documents"]) == ("web/high", 1) and w["value"] == pytest.approx(30_000 / 34_000, abs=1e-4)
    assert "one document of web/high, 'd20-0' (30,000 tokens" in w["message"] and "88.2%" in w["message"]  # named
    with pytest.raises(ConcentrationError):
        check_plans(plans, [SPEC], min_top_epochs=0, on_concentration="fail")


def test_a_group_of_even_documents_is_not_a_concentration():
    assert not [w for w in check_plans(plans_of([100] * 41), [SPEC], min_top_epochs=0) if w["check"] == "concentration"]


def test_on_concentration_fail_stops_the_mixture_with_one_line_exit_2(tmp_path, caplog):
    """It stopped the run as "internal error (a bug in curate, exit code 70)" with a traceback."""
    from pipelines.cli import main as curate
    from tests.helpers import docs_frame, make_stage_dir

    rows = [{"doc_id": f"w{i}", "text": "word " * 30, "source": "web", "quality_level": "high"} for i in range(40)]
    rows.append({"doc_id": "huge", "text": "word " * 5000, "source": "web", "quality_level": "high"})
    inp = make_stage_dir(tmp_path / "in", docs_frame(rows), nparts=2)
    rc = curate(["mixture", "--input", str(inp), "--output", str(tmp_path / "out"), "--scheduler", "synchronous", "--quiet",
                 "on_concentration=fail"])
    assert rc == 2
    errors = [r.getMessage() for r in caplog.records if r.levelname == "ERROR"]
    assert len(errors) == 1 and "one document of web/high, 'huge' (5,000 tokens" in errors[0] and "(mixture.on_concentration: fail)" in errors[0]
    assert "Traceback" not in caplog.text and not (tmp_path / "out").exists()
