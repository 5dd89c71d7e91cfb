"""edu_score refuses what a judge cannot teach or a rubric cannot mean: a judge with no spread is not
distilled, a rubric off the 0–5 scale is refused, answers cut by max_tokens say which key to raise
(and the annotation options are stage keys), a scorer folder that does not exist is named so."""

from __future__ import annotations

import json
import logging
from importlib import resources
from typing import Any

import pandas as pd
import pytest

from curation.config import ConfigError
from curation.errors import ServiceError
from pipelines.cli import main
from pipelines.stages.edu_score import EduScoreConfig
from tests.classifiers.test_annotation_openai import FakeLLMServer
from tests.helpers import make_stage_dir, run_one
from tests.pipelines.test_edu_stage import corpus, overrides


def test_a_judge_with_no_spread_is_not_distilled_and_auto_falls_back_with_a_warning(tmp_path, caplog):
    """A judge that scored every document 4 was distilled and used: every web page became edu-rich,
    and the distillation claimed F1 1.0 at the threshold."""
    df = corpus(garbled=())
    df["text"] = df["text"] + " [[score:4]]"
    inp = make_stage_dir(tmp_path / "in", df)
    with FakeLLMServer() as srv:
        with caplog.at_level(logging.WARNING):
            res = run_one("edu_score", inp, tmp_path / "auto", overrides(srv, distil="hashed", scorer="auto"))
        with pytest.raises(ConfigError, match=r"scorer = 'distilled', but distillation was skipped: the judge has no spread"):
            run_one("edu_score", inp, tmp_path / "distilled", overrides(srv, distil="hashed", scorer="distilled"))
    dist = res.stats["extra"]["distillation"]
    assert "no spread: every one of its 24 scores is 4.1" in dist["skipped"]
    assert "metrics" not in dist and "heldout_at_threshold" not in dist  # no F1 1.0 for a constant judge
    assert res.stats["extra"]["scorer"]["card"]["name"] != "edu_distilled"
    warning = next(r.getMessage() for r in caplog.records if "no distilled head" in r.getMessage())
    assert "the judge has no spread" in warning and "check the judge (annotator_model" in warning
    assert not (tmp_path / "auto" / "artifacts" / "distilled" / "model").exists()


def test_a_rubric_on_another_scale_is_refused_before_anything_runs(tmp_path, caplog):
    """A 0–10 rubric was accepted: the judge's 9 was clipped to 5 for every document."""
    raw = (resources.files("classifiers") / "rubrics" / "edu.md").read_text()
    ten = tmp_path / "edu10.md"
    ten.write_text(raw.replace("scale: [0, 5]", "scale: [0, 10]"), encoding="utf-8")
    assert "scale: [0, 10]" in ten.read_text()
    inp = make_stage_dir(tmp_path / "in", corpus(garbled=()))
    argv = ["edu-score", "--input", str(inp), "--output", str(tmp_path / "out"), "--quiet", "annotator=openai",
            "annotator_model=m", f"rubric={ten}"]
    assert main(argv) == 2
    assert "scores on 0–10, but edu_score is a 0–5 column" in caplog.text and "write the rubric on 0–5" in caplog.text
    assert not (tmp_path / "out").exists()
    assert main([*argv[:-1], f"rubric={tmp_path / 'missing.md'}"]) == 2


def test_a_scorer_folder_that_does_not_exist_is_named_so(tmp_path):
    with pytest.raises(ConfigError, match=r"'/no/such/folder' is no folder that exists; choose auto"):
        EduScoreConfig.from_dict({"scorer": "/no/such/folder"})
    (tmp_path / "model.json").write_text("{}")
    with pytest.raises(ConfigError, match="is a file, not a model folder"):
        EduScoreConfig.from_dict({"scorer": str(tmp_path / "model.json")})


class ReasoningJudge(FakeLLMServer):
    """A judge that reasons: below 1024 tokens its chat answer is cut before the score line."""

    def answer(self, path: str, headers: dict[str, str], body: dict[str, Any]) -> tuple[int, Any, dict[str, str]]:
        if path.endswith("/chat/completions") and body.get("max_tokens", 0) < 1024 and not body.get("continue_final_message"):
            cut = {"message": {"role": "assistant", "content": "Let me weigh each criterion in turn. First,"},
                   "finish_reason": "length"}
            return 200, {"choices": [cut], "usage": {"prompt_tokens": 10, "completion_tokens": body["max_tokens"]}}, {}
        return super().answer(path, headers, body)


def test_answers_cut_by_max_tokens_name_the_key_and_a_higher_one_asks_again(tmp_path):
    """max_tokens was no stage key (exit 2, unknown key), a cut answer was cached as no_final_score,
    and the exit-10 message told the user to change the model or the rubric."""
    inp = make_stage_dir(tmp_path / "in", corpus(garbled=()))
    with ReasoningJudge() as srv:
        with pytest.raises(ServiceError, match=r"truncated=24 .*cut at annotator_max_tokens = 256 .*raise annotator_max_tokens"):
            run_one("edu_score", inp, tmp_path / "cut", overrides(srv, distil="hashed"))
        sent = len(srv.requests)
        assert sent == 24  # a cut answer at temperature 0 is not asked again
        res = run_one("edu_score", inp, tmp_path / "ok", overrides(srv, distil="hashed", scorer="distilled",
                                                                    annotator_max_tokens=2048, annotator_extra_body={"top_k": 1},
                                                                    annotator_parse_retries=0))
        bodies = [body for _path, _h, body in srv.requests[sent:]]
    assert len(bodies) == 24 and {b["max_tokens"] for b in bodies} == {2048} and all(b["top_k"] == 1 for b in bodies)
    assert ":max2048:" in res.stats["extra"]["annotation"]["annotator"]
    ann = pd.read_parquet(tmp_path / "ok" / "artifacts" / "annotations" / "annotations.parquet")
    assert ann["failure"].isna().all()


def test_train_classifier_refuses_labels_with_no_spread_as_edu_score_does(tmp_path, caplog):
    labels = tmp_path / "flat.jsonl"
    labels.write_text("".join(json.dumps({"text": f"document {i}", "score": 4.0 + (i % 3 - 1) / 10}) + "\n" for i in range(30)))
    assert main(["train-classifier", "edu", "--labels", str(labels), "--kind", "hashed", "--output", str(tmp_path / "m")]) == 2
    assert "its 30 scores all lie within 3.9–4.1: labels with no spread" in caplog.text
    assert not (tmp_path / "m").exists()
