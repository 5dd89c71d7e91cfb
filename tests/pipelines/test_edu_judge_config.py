"""edu_score's judge settings checked before any request: a base URL without a scheme, judge settings
that do nothing under ``annotator: none``, a judge whose head the scorer leaves out; and under
``--profile cpu`` a judge you name scores through its distilled head."""

from __future__ import annotations

import json
import logging
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from classifiers.annotation import diagnose
from curation.config import ConfigError
from pipelines.cli import main
from pipelines.stages.edu_score import STAGE, EduScoreConfig
from tests.classifiers.test_annotation_openai import FakeLLMServer
from tests.helpers import make_stage_dir
from tests.pipelines.test_edu_stage import corpus


def edu(tmp_path: Path, inp: Path, *args: str) -> int:
    """``curate edu-score`` on ``inp`` into ``tmp_path/out`` with ``args``."""
    return main(["edu-score", "--input", str(inp), "--output", str(tmp_path / "out"), *args])


def judged_on_cpu(srv: FakeLLMServer) -> list[str]:
    """The options of a run under --profile cpu whose judge is ``srv``."""
    return ["--profile", "cpu", "annotator=openai", "annotator_model=fake-judge", f"annotator_base_url={srv.url}"]


@pytest.mark.parametrize("url", ["127.0.0.1:8000/v1", "localhost:8000/v1", "0.0.0.0:8000"])
def test_a_base_url_without_a_scheme_is_refused_before_the_run_with_the_url_to_set(tmp_path, caplog, url):
    """It was retried 5 times as connection_error and ended in exit 10, blaming the server."""
    inp = make_stage_dir(tmp_path / "in", corpus(garbled=()))
    bare = url if "/" in url else f"{url}/v1"
    with pytest.raises(ConfigError, match=rf"has no http:// or https:// scheme; set annotator_base_url=http://{bare} "):
        EduScoreConfig.from_dict({"annotator": "openai", "annotator_model": "m", "annotator_base_url": url})
    caplog.clear()
    argv = [
        "edu-score",
        "--input",
        str(inp),
        "--output",
        str(tmp_path / "out"),
        "--quiet",
        "annotator=openai",
        "annotator_model=m",
        f"annotator_base_url={url}",
    ]
    assert main(argv) == 2
    assert f"set annotator_base_url=http://{bare}" in caplog.text and not (tmp_path / "out").exists()
    with pytest.raises(ConfigError, match="names no host"):
        EduScoreConfig.from_dict({"annotator": "openai", "annotator_model": "m", "annotator_base_url": "http:///v1"})


def test_the_diagnosis_of_urllibs_unknown_url_type_names_the_base_url_to_set():
    """A backend built without the recipe's check: urllib's 'unknown url type' read as a server that is down."""
    with pytest.raises(urllib.error.URLError) as caught:  # refused before any connection
        urllib.request.urlopen("127.0.0.1:9/v1/chat/completions", timeout=1)
    counts, examples = diagnose.summarise(["connection_error"], [str(caught.value.reason)])
    fix = diagnose.likely_fix(counts, examples, {"base_url": "127.0.0.1:9/v1"}, answered=0)
    assert fix.startswith("annotator_base_url = '127.0.0.1:9/v1' is not an http:// or https:// URL")
    assert "set annotator_base_url=http://127.0.0.1:9/v1" in fix and "start the server" not in fix


def test_judge_settings_under_annotator_none_are_said_before_anything_runs(tmp_path, caplog):
    """annotator_model, annotator_base_url, an annotation block and sample_size did nothing, in silence."""
    cfg = EduScoreConfig.from_dict(
        {
            "annotator_model": "Qwen/Qwen3-8B",
            "annotator_base_url": "http://gpu:8000/v1",
            "annotation": {"concurrency": 32},
            "sample_size": 100,
        }
    )
    (note,) = STAGE.config_notes(cfg)
    assert note.startswith(
        "edu_score.annotator is none, so no judge is asked and annotator_model, annotator_base_url, "
        "annotator_concurrency, sample_size do nothing: set edu_score.annotator=openai"
    )
    assert STAGE.config_notes(EduScoreConfig()) == []  # the shipped settings say nothing
    inp = make_stage_dir(tmp_path / "in", corpus(garbled=()))
    caplog.clear()
    with caplog.at_level(logging.WARNING):
        assert edu(tmp_path, inp, "--dry-run", "annotator_model=Qwen/Qwen3-8B", "sample_size=100") == 0
    assert "annotator_model, sample_size do nothing: set edu_score.annotator=openai" in caplog.text


def test_a_judge_whose_head_the_scorer_leaves_out_is_said_before_any_request(tmp_path, caplog):
    """scorer: fast with an openai judge annotated every document and said so only once scored."""
    cfg = EduScoreConfig.from_dict(
        {"annotator": "openai", "annotator_model": "m", "scorer": "fast", "sample_size": 100}
    )
    (note,) = STAGE.config_notes(cfg)
    assert note.startswith(
        "edu_score.scorer = fast: the openai judge annotates 100 documents, but what it teaches scores none"
    )
    assert "set edu_score.scorer=auto" in note
    assert STAGE.config_notes(EduScoreConfig.from_dict({"annotator": "openai", "annotator_model": "m"})) == []
    inp = make_stage_dir(tmp_path / "in", corpus(garbled=()))
    with FakeLLMServer() as srv, caplog.at_level(logging.WARNING):
        assert edu(tmp_path, inp, "--dry-run", *judged_on_cpu(srv), "scorer=fast") == 0
        assert srv.requests == []
    assert "edu_score.scorer = fast: the openai judge annotates" in caplog.text


def test_under_the_cpu_profile_a_judge_you_name_scores_through_its_distilled_head(tmp_path, caplog):
    """--profile cpu (what auto picks without a GPU) set scorer: fast, so the documented vLLM example paid for
    the judge and scored with edu_fast; the profile now sets what scorer: auto takes without a judge's head."""
    inp = make_stage_dir(tmp_path / "in", corpus(garbled=()))
    with FakeLLMServer() as srv, caplog.at_level(logging.WARNING):
        assert (
            edu(
                tmp_path,
                inp,
                "--quiet",
                "--scheduler",
                "synchronous",
                *judged_on_cpu(srv),
                "sample_size=30",
                "min_annotations=5",
                "distil=hashed",
            )
            == 0
        )
    extra = json.loads((tmp_path / "out" / "stats.json").read_text())["extra"]
    assert extra["scorer"]["choice"] == "auto" and extra["scorer"]["card"]["name"] == "edu_distilled"
    assert extra["scorer"]["card"]["annotator"].startswith("openai:fake-judge")
    assert "not with the head distilled" not in caplog.text
    config = json.loads((tmp_path / "out" / "stats.json").read_text())["config"]
    assert config["fallback_scorer"] == "fast"  # the profile's: without a judge's head, edu_fast scores
