"""edu_score with a judge that fails: a ServiceError (exit 10) that quotes the server and says what
to change, requests that got no answer asked again by the next run (and only those), answers that
cannot be read, judges refused before anything runs, and a log that says which scorer scores."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pandas as pd
import pytest

from curation.errors import ServiceError
from pipelines.cli import main
from pipelines.incomplete import IncompleteRunError
from pipelines.marker import MARKER
from tests.classifiers.test_annotation_openai import FakeLLMServer
from tests.helpers import assert_conservation, make_stage_dir, run_one
from tests.pipelines.test_edu_stage import corpus, overrides


def _marked(marker: str, every: int) -> pd.DataFrame:
    """The stage tests' corpus with ``marker`` on every ``every``-th document."""
    df = corpus(garbled=())
    df.loc[::every, "text"] = df.loc[::every, "text"] + f" {marker}"
    return df


def _failures(out) -> pd.Series:
    return pd.read_parquet(out / "artifacts" / "annotations" / "annotations.parquet")["failure"]


def test_requests_without_an_answer_are_asked_again_by_the_next_run_and_only_they(tmp_path, caplog):
    """A failed annotation step was reused: the next run sent no request and kept the failures for good."""
    inp = make_stage_dir(tmp_path / "in", _marked("[[500-while-broken]]", every=4))
    settings = {"distil": "hashed", "min_annotations": 3}
    with FakeLLMServer() as srv:
        srv.broken = True
        with (
            caplog.at_level(logging.WARNING),
            pytest.raises(IncompleteRunError) as stop,
        ):  # in place, and exit 11 from curate
            run_one("edu_score", inp, tmp_path / "a", overrides(srv, **settings))
        first = stop.value.results[0]
        failed = int((_failures(tmp_path / "a") == "http_500").sum())
        assert 0 < failed < 12 and "failed in transport (http_500=" in caplog.text and "the GPU fell off" in caplog.text
        sent = len(srv.requests)
        srv.broken = False
        second = run_one("edu_score", inp, tmp_path / "b", overrides(srv, **settings))  # same cache, a new output
        assert len(srv.requests) == sent + failed  # the answers received were reused
        # the incomplete output is not "up to date": the same command re-runs it, and its fingerprint
        # changes, so the stages after it re-run too
        marker = json.loads((tmp_path / "a" / MARKER).read_text())
        assert marker["incomplete"] == f"{failed} annotation requests got no answer"
        caplog.clear()
        with caplog.at_level(logging.WARNING):
            run_one("edu_score", inp, tmp_path / "a", overrides(srv, **settings))
        assert f"re-running: its last run was incomplete ({failed} annotation requests got no answer)" in caplog.text
        again = json.loads((tmp_path / "a" / MARKER).read_text())
        assert "incomplete" not in again and again["output_fingerprint"] != marker["output_fingerprint"]
        assert _failures(tmp_path / "a").isna().all()
    assert _failures(tmp_path / "b").isna().all()
    d1, d2 = first.stats["extra"]["distillation"], second.stats["extra"]["distillation"]
    assert d2["n_annotated"] == d1["n_annotated"] + failed  # distilled again from the complete sample
    assert_conservation(inp, tmp_path / "b")


def test_a_judge_down_for_a_whole_run_is_a_service_error_and_the_next_run_completes(tmp_path):
    inp = make_stage_dir(tmp_path / "in", _marked("[[500-while-broken]]", every=1))
    with FakeLLMServer() as srv:
        srv.broken = True
        with pytest.raises(
            ServiceError, match=r"24 of 24 annotation requests .* \(http_500=24 \(e\.g\. HTTP 500: the GPU fell off\)\)"
        ):
            run_one("edu_score", inp, tmp_path / "out", overrides(srv, distil="hashed"))
        srv.broken = False
        sent = len(srv.requests)
        run_one("edu_score", inp, tmp_path / "out", overrides(srv, distil="hashed"))
        assert len(srv.requests) == sent + 24
    assert _failures(tmp_path / "out").isna().all()


def test_a_wrong_model_or_a_base_url_without_v1_says_what_to_change(tmp_path, caplog):
    inp = make_stage_dir(tmp_path / "in", corpus(garbled=()))
    with FakeLLMServer(model="served-judge") as srv:
        with pytest.raises(
            ServiceError, match=r"HTTP 404: The model `gpt-4o` does not exist.*serves \['served-judge'\]"
        ):
            run_one("edu_score", inp, tmp_path / "model", overrides(srv, annotator_model="gpt-4o", distil="hashed"))
        root = srv.url.removesuffix("/v1")
        argv = [
            "edu-score",
            "--input",
            str(inp),
            "--output",
            str(tmp_path / "cli"),
            "--quiet",
            "annotator=openai",
            "annotator_model=served-judge",
            f"annotator_base_url={root}",
            "annotator_max_retries=0",
            "distil=hashed",
        ]
        caplog.clear()
        assert main(argv) == 10  # one line, no traceback
    error = next(r for r in caplog.records if r.levelno == logging.ERROR)
    assert error.exc_info is None and f"add /v1 to the base URL (annotator_base_url={root}/v1)" in error.getMessage()


def test_a_judge_whose_answers_cannot_be_read_fails_or_warns(tmp_path, caplog):
    """All unreadable: nothing is learned from the judge (it ran silently with rc 0). Most: a warning."""
    with FakeLLMServer() as srv:
        inp = make_stage_dir(tmp_path / "all", _marked("[[garbled]]", every=1))
        with pytest.raises(
            ServiceError,
            match=r"24 of the judge's 24 answers cannot be read \(no_final_score=24 .*Educational score: N",
        ):
            run_one("edu_score", inp, tmp_path / "out-all", overrides(srv, distil="hashed"))
        inp = make_stage_dir(
            tmp_path / "most", corpus(n=30, garbled=tuple(i for i in range(30) if i % 6))
        )  # another fingerprint
        with caplog.at_level(logging.WARNING):
            run_one("edu_score", inp, tmp_path / "out-most", overrides(srv, distil="hashed"))
    assert "answers cannot be read (no_final_score=" in caplog.text and "check annotator_model" in caplog.text


def test_judges_that_cannot_run_here_are_refused_before_anything_runs(tmp_path):
    import importlib.util

    inp = make_stage_dir(tmp_path / "in", corpus(garbled=()))
    fake = tmp_path / "judge.gguf"
    fake.write_bytes(b"not a model")
    common = ["edu-score", "--input", str(inp), "--quiet"]
    assert main([*common, "--output", str(tmp_path / "local"), "annotator=local", f"annotator_model={fake}"]) == 4
    assert (
        main(
            [*common, "--output", str(tmp_path / "gone"), "annotator=local", f"annotator_model={tmp_path / 'no.gguf'}"]
        )
        == 2
    )
    assert (
        main(
            [
                *common,
                "--output",
                str(tmp_path / "t"),
                "annotator=openai",
                "annotator_model=m",
                "annotator_timeout_s=-1",
            ]
        )
        == 2
    )
    if importlib.util.find_spec("vllm") is None:
        assert main([*common, "--output", str(tmp_path / "vllm"), "annotator=vllm", "annotator_model=m"]) == 2
    assert not any((tmp_path / d).exists() for d in ("local", "gone", "t", "vllm"))  # refused before the sample ran


def test_a_real_judges_head_left_out_by_scorer_fast_is_a_warning_that_says_how_to_use_it(tmp_path, caplog):
    """The log said 'scorer: auto uses it only for an openai/vllm judge' for an openai judge under scorer: fast."""
    inp = make_stage_dir(tmp_path / "in", corpus(garbled=()))
    with FakeLLMServer() as srv, caplog.at_level(logging.INFO):
        res = run_one("edu_score", inp, tmp_path / "out", overrides(srv, distil="hashed", scorer="fast"))
    assert res.stats["extra"]["scorer"]["card"]["name"] == "edu_fast"
    line = next(r for r in caplog.records if "not with the head distilled" in r.getMessage())
    assert line.levelno == logging.WARNING and "set edu_score.scorer=auto (or distilled)" in line.getMessage()
    assert "uses it only for" not in line.getMessage()


def test_a_head_trained_from_a_cpu_profile_run_scores_with_its_own_embedder(tmp_path, caplog):
    """--profile cpu stores 128-d static vectors; train-classifier edu --run trained its head on them while
    its card named MiniLM (384-d), so scoring with it ended in an internal error. The head now embeds
    with the embedder its card names."""
    from tests.helpers import only

    recipe = str(Path(__file__).resolve().parents[2] / "pipelines" / "configs" / "glm45.yaml")
    math = Path(__file__).resolve().parents[2] / "sample_data" / "math_science" / "math_science.jsonl.gz"
    run = tmp_path / "run"
    with FakeLLMServer() as srv:
        assert (
            main(
                [
                    "run",
                    recipe,
                    "--input",
                    str(math),
                    "--output",
                    str(run),
                    "--scheduler",
                    "synchronous",
                    "--quiet",
                    "--profile",
                    "cpu",
                    *only("semdedup", "edu_score"),
                    *overrides(srv, sample_size=24, min_annotations=8),
                ]
            )
            == 0
        )
    caplog.set_level(logging.INFO)
    assert main(["train-classifier", "edu", "--run", str(run), "--output", str(tmp_path / "head")]) == 0
    card = json.loads((tmp_path / "head" / "model.json").read_text())
    said = [r for r in caplog.records if "embedding again" in r.getMessage()]
    assert (
        card["dim"] == 384 and said and {r.levelno for r in said} == {logging.INFO}
    )  # the run's own vectors: nothing to change
    semdedup = next(p for p in run.iterdir() if p.name.endswith("_semdedup")) / "artifacts" / "embeddings"
    labels = (
        next(p for p in run.iterdir() if p.name.endswith("_edu_score"))
        / "artifacts"
        / "annotations"
        / "annotations.parquet"
    )
    caplog.clear()  # a folder the user gives with --embeddings is theirs to change: a warning
    assert (
        main(
            [
                "train-classifier",
                "edu",
                "--labels",
                str(labels),
                "--embeddings",
                str(semdedup),
                "--output",
                str(tmp_path / "head2"),
            ]
        )
        == 0
    )
    [warned] = [
        r.getMessage() for r in caplog.records if r.levelno == logging.WARNING and "embedding again" in r.getMessage()
    ]
    assert (
        warned.startswith(f"{semdedup} holds vectors of")
        and "--embeddings reuses only vectors of all-MiniLM-L6-v2" in warned
    )
    edu = next(p for p in run.iterdir() if p.name.endswith("_edu_score"))
    assert (
        main(
            [
                "edu-score",
                "--input",
                str(edu.parent / next(p.name for p in sorted(run.iterdir()) if p.name.endswith("_semdedup"))),
                "--output",
                str(tmp_path / "scored"),
                "--scheduler",
                "synchronous",
                "--quiet",
                "--profile",
                "cpu",
                f"scorer={tmp_path / 'head'}",
            ]
        )
        == 0
    )


def test_edu_score_says_embedding_again_only_when_it_embeds(tmp_path, caplog):
    """Under --profile cpu SemDeDup stores static vectors and a head distilled from a judge reads MiniLM's:
    edu_score warned "embedding again" on every run, also on one that reused its own cached vectors."""
    from tests.helpers import only

    recipe = str(Path(__file__).resolve().parents[2] / "pipelines" / "configs" / "glm45.yaml")
    math = Path(__file__).resolve().parents[2] / "sample_data" / "math_science" / "math_science.jsonl.gz"
    run = tmp_path / "run"
    with FakeLLMServer() as srv:
        common = [
            "run",
            recipe,
            "--input",
            str(math),
            "--output",
            str(run),
            "--scheduler",
            "synchronous",
            "--quiet",
            "--profile",
            "cpu",
            *only("semdedup", "edu_score"),
            *overrides(srv, sample_size=24, min_annotations=8),
        ]
        with caplog.at_level(logging.INFO):
            assert main([*common, "edu_score.distil=head"]) == 0
        said = [r for r in caplog.records if r.getMessage().startswith("edu_score: stored embeddings use")]
        assert said and "embedding again" in said[0].getMessage()
        assert {r.levelno for r in said} == {logging.INFO}  # expected under --profile cpu: nothing to change
        caplog.clear()
        with caplog.at_level(logging.INFO):  # a decision parameter: the stage runs again, its embeddings step is reused
            assert main([*common, "edu_score.distil=head", "edu_score.threshold=2.75"]) == 0
    edu = next(p for p in run.iterdir() if p.name.endswith("_edu_score"))
    assert json.loads((edu / "stats.json").read_text())["config"]["threshold"] == 2.75
    assert "embedding again" not in caplog.text
