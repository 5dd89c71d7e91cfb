"""What edu_score removes for its judge, and what train-classifier edu makes of a judged output:
``on_annotation_failure: ledger`` says the share of documents and tokens it removes; ``--run``
takes an edu_score stage folder of any name, warns of one marked incomplete, and ``--run`` and
``--labels`` count the rows left out without a score. Against the loopback OpenAI-compatible
server of ``test_annotation_openai``; the ledger case on a real LocalCluster."""

from __future__ import annotations

import logging

import pandas as pd
import pytest

from pipelines.cli import main
from pipelines.cluster import open_client
from pipelines.incomplete import IncompleteRunError
from tests.classifiers.test_annotation_openai import FakeLLMServer
from tests.helpers import assert_conservation, make_stage_dir, run_one
from tests.pipelines.test_edu_stage import corpus, overrides


def test_ledgered_failures_are_said_as_removed_with_their_share_of_documents_and_tokens(tmp_path, caplog):
    """on_annotation_failure=ledger removed 17 % of a run's tokens while the docs said a scoring stage removes nothing."""
    df = corpus(garbled=(7, 9))  # a math_science and a web document (every third is code, not sampled)
    inp = make_stage_dir(tmp_path / "in", df)
    with FakeLLMServer() as srv, open_client(workers=1) as client, caplog.at_level(logging.WARNING):
        res = run_one("edu_score", inp, tmp_path / "out", overrides(srv, distil="hashed", on_annotation_failure="ledger"),
                      client=client)
    _kept, ledger = assert_conservation(inp, tmp_path / "out")
    assert sorted(ledger["doc_id"]) == ["d07", "d09"]
    tokens, total = int(df.loc[df["doc_id"].isin(["d07", "d09"]), "n_tokens"].sum()), int(df["n_tokens"].sum())
    removed = res.stats["extra"]["ledgered_annotation_removed"]
    assert removed == {"documents": 2, "tokens": tokens, "document_share": round(2 / len(df), 4),
                       "token_share": round(tokens / total, 4)}
    line = next(r.getMessage() for r in caplog.records if "on_annotation_failure = ledger removes" in r.getMessage())
    assert f"removes 2 of {len(df)} document(s)" in line and f"{tokens:,} of {total:,} tokens" in line
    assert "no_final_score=2" in line and "on_annotation_failure=keep" in line


def test_train_from_a_stage_folder_marked_incomplete_says_so_and_counts_the_rows_left_out(tmp_path, caplog):
    """--run accepted only RUN (reading RUN/70_edu_score) and said 'run edu_score with an annotator first' of a
    stage folder; it trained from an output marked incomplete, and --labels dropped failed rows in silence."""
    df = corpus(garbled=())
    df.loc[::4, "text"] = df.loc[::4, "text"] + " [[500-while-broken]]"
    inp = make_stage_dir(tmp_path / "in", df)
    stage = tmp_path / "70_judged"
    with FakeLLMServer() as srv:
        srv.broken = True
        with pytest.raises(IncompleteRunError):  # written and in place, marked incomplete
            run_one("edu_score", inp, stage, overrides(srv, distil="hashed", min_annotations=3))
    ann = pd.read_parquet(stage / "artifacts" / "annotations" / "annotations.parquet")
    failed, n = int(ann["score"].isna().sum()), len(ann)
    assert 0 < failed < n
    caplog.clear()
    with caplog.at_level(logging.WARNING):
        assert main(["train-classifier", "edu", "--run", str(stage), "--kind", "hashed", "--output", str(tmp_path / "m1")]) == 0
    assert f"{stage} is marked incomplete ({failed} annotation requests got no answer)" in caplog.text
    assert f"{failed} of {n} row(s) of {stage / 'artifacts' / 'annotations' / 'annotations.parquet'} have no score" in caplog.text
    assert f"failed annotations: http_500={failed}" in caplog.text
    caplog.clear()
    labels = stage / "artifacts" / "annotations" / "annotations.parquet"
    with caplog.at_level(logging.WARNING):
        assert main(["train-classifier", "edu", "--labels", str(labels), "--kind", "hashed", "--output", str(tmp_path / "m2")]) == 0
    assert f"{failed} of {n} row(s) of {labels} have no score and are left out (failed annotations: http_500={failed})" in caplog.text
    caplog.clear()
    with caplog.at_level(logging.ERROR):
        code = main(["train-classifier", "edu", "--run", str(inp), "--kind", "hashed", "--output", str(tmp_path / "m3")])
    assert code == 4 and "holds no edu_score annotations: give the run folder" in caplog.text
