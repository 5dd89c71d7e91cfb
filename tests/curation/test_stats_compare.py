"""Comparing two runs where one threshold moved: config diff, kept counts, changed documents."""

from __future__ import annotations

import pandas as pd
import pytest

from curation.stats import run as stats
from curation.stats.compare import changed_documents, compare_runs, config_changes, flatten, reason_changes
from tests.curation.test_stats_fixture import run_stages, shared_run
from tests.helpers import read_parts

pytestmark = pytest.mark.slow  # two synthetic runs through the runner


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[stats.Run, stats.Run]:
    a = shared_run(tmp_path_factory)
    b = shared_run(tmp_path_factory, "stricter", config={"web_quality": {"low_max_bucket": 12}})
    return stats.open_run(a), stats.open_run(b)


def test_flatten_nested_config():
    assert flatten({"a": {"b": {"c": 1}}, "d": {}}) == {"a.b.c": 1, "d": {}}


def test_config_changes_name_the_moved_threshold(runs):
    a, b = runs
    changes = config_changes(a, b)
    assert changes.to_dict("records") == [{"stage": "web_quality", "key": "low_max_bucket", "a": 6, "b": 12}]


def test_compare_runs_equals_kept_rows_in_each_run(runs):
    a, b = runs
    cmp = compare_runs(a, b).set_index("stage")
    for stage in cmp.index:
        ka = read_parts(a.stage(stage).folder / "docs")
        kb = read_parts(b.stage(stage).folder / "docs")
        assert (cmp.at[stage, "docs_kept_a"], cmp.at[stage, "docs_kept_b"]) == (len(ka), len(kb))
        assert cmp.at[stage, "tokens_kept_delta"] == kb["n_tokens"].sum() - ka["n_tokens"].sum()
    assert cmp["config_changed"].to_dict() == {s: s == "web_quality" for s in cmp.index}
    assert cmp.at["web_quality", "docs_kept_delta"] < 0  # a stricter low level keeps fewer pages
    assert (cmp.loc[["ingest", "exact_dedup", "minhash_dedup"], "docs_kept_delta"] == 0).all()


def test_changed_documents_are_the_ledger_difference(runs):
    a, b = runs
    la = read_parts(a.stage("web_quality").folder / "ledger")
    lb = read_parts(b.stage("web_quality").folder / "ledger")
    changed = changed_documents(a, b, "web_quality")
    assert set(changed["doc_id"]) == set(lb["doc_id"]) ^ set(la["doc_id"])
    assert set(changed["reason_b"]) == {"low_quality"} and changed["reason_a"].isna().all()
    assert changed_documents(a, b, "exact_dedup").empty
    reasons = reason_changes(a, b).set_index(["stage", "reason"])
    assert reasons.at[("web_quality", "low_quality"), "docs_delta"] == len(changed)
    low_b = lb.set_index("doc_id").loc[changed["doc_id"], "n_tokens"].sum()
    assert reasons.at[("web_quality", "low_quality"), "tokens_delta"] == low_b


def test_compare_with_a_run_that_lacks_stages(runs, tmp_path_factory):
    a, _ = runs
    small = stats.open_run(shared_run(tmp_path_factory, "foundation", stages=()))
    changes = config_changes(a, small)
    assert set(changes.loc[changes["key"] == "(stage)", "stage"]) == set(run_stages()) - set(run_stages(()))
    cmp = compare_runs(a, small).set_index("stage")
    assert not cmp.at["mixture", "in_b"] and cmp.at["mixture", "docs_kept_b"] == 0
    assert isinstance(changed_documents(a, small, "web_quality"), pd.DataFrame)


def test_compare_plot_bars_are_kept_rows_of_both_runs(runs):
    from curation.stats.plots import plot_compare

    a, b = runs
    fig = plot_compare(compare_runs(a, b), "a", "b")
    bars_a, bars_b = fig.axes[0].containers
    assert [p.get_height() for p in bars_a.patches] == [len(read_parts(s.folder / "docs")) for s in a.stages]
    assert [p.get_height() for p in bars_b.patches] == [len(read_parts(b.stage(s.name).folder / "docs")) for s in a.stages]
