"""A run whose judge leaves requests without an answer: it finishes and says so everywhere a user or
a trainer looks (the funnel, run.json, the manifests, verify, stats --check, exit 11), `curate export`
refuses it unless given --allow-incomplete, and the same command, re-run once the judge answers,
completes it."""

from __future__ import annotations

import json
import zlib
from pathlib import Path
from typing import Any

import pytest

from curation.mixture.manifest_check import validate_manifest
from pipelines.cli import main
from tests.classifiers.test_annotation_openai import FakeLLMServer
from tests.helpers import only

ROOT = Path(__file__).resolve().parents[2]
MATH = ROOT / "sample_data" / "math_science" / "math_science.jsonl.gz"

pytestmark = pytest.mark.skipif(
    not MATH.exists(), reason="sample_data/math_science is not generated (python sample_data/generate.py)"
)


class FlakyJudge(FakeLLMServer):
    """Answers 503 for about a quarter of the documents (the same ones each time) while ``broken``."""

    def answer(self, path: str, headers: dict[str, str], body: dict[str, Any]) -> tuple[int, Any, dict[str, str]]:
        prompt = json.dumps(body)
        if self.broken and zlib.crc32(prompt.encode()) % 4 == 0:
            return 503, {"error": {"message": "overloaded"}}, {}
        return super().answer(path, headers, body)


def judge_argv(run: Path, url: str) -> list[str]:
    """``curate run`` of the edu_score and mixture stages on the math sample, judged by the server at ``url``."""
    return [
        "run",
        str(ROOT / "pipelines" / "configs" / "glm45.yaml"),
        "--input",
        str(MATH),
        "--output",
        str(run),
        "--scheduler",
        "synchronous",
        "--quiet",
        "--profile",
        "cpu",
        *only("edu_score", "mixture"),
        "edu_score.annotator=openai",
        "edu_score.annotator_model=fake-judge",
        f"edu_score.annotator_base_url={url}",
        "edu_score.annotator_max_retries=0",
        "edu_score.sample_size=24",
        "edu_score.min_annotations=4",
        "edu_score.distil=hashed",
    ]


def test_a_run_with_unanswered_judge_requests_exits_11_and_says_so_everywhere(tmp_path, capsys):
    """It exited 0, and only 70_edu_score/_SUCCESS said `incomplete`: not the funnel, run.json, the manifests,
    verify or stats --check."""
    run = tmp_path / "run"
    with FlakyJudge() as srv:
        argv = judge_argv(run, srv.url)
        srv.broken = True
        capsys.readouterr()
        assert main(argv) == 11
        out = capsys.readouterr().out
        why = json.loads((run / "70_edu_score" / "_SUCCESS").read_text())["incomplete"]
        assert why.endswith("annotation requests got no answer")
        assert f"INCOMPLETE: edu_score ({why}); re-run the same command when the judge answers" in out
        assert out.index("mixture ") < out.index("INCOMPLETE:")  # under the funnel, which shows every stage
        record = json.loads((run / "run.json").read_text())
        assert record["incomplete"] == [{"stage": "edu_score", "folder": "70_edu_score", "reason": why}]
        manifests = sorted((run / "80_mixture" / "manifests").glob("*.json"))
        assert manifests
        for path in manifests:
            manifest = json.loads(path.read_text())
            assert manifest["incomplete"] == [{"stage": "edu_score", "folder": "70_edu_score", "reason": why}]
            assert validate_manifest(path) == []
        assert main(["verify", str(run)]) == 1
        assert f"FAIL 70_edu_score: finished incomplete ({why})" in capsys.readouterr().out
        assert main(["stats", str(run), "--check"]) == 1
        assert main(["stats", str(run)]) == 0  # without --check: the funnel and its line, exit 0
        assert "INCOMPLETE: edu_score" in capsys.readouterr().out

        srv.broken = False
        assert main(argv) == 0  # the same command asks for what is missing
    assert "INCOMPLETE" not in capsys.readouterr().out
    assert json.loads((run / "run.json").read_text())["incomplete"] == []
    assert all(json.loads(p.read_text())["incomplete"] == [] for p in (run / "80_mixture" / "manifests").glob("*.json"))
    assert main(["verify", str(run)]) == 0 and main(["stats", str(run), "--check"]) == 0


def test_an_export_of_an_incomplete_run_is_refused_unless_allowed(tmp_path, caplog):
    """`curate export` of such a run exited 0 with a warning, so a trainer could be fed scores partly missing
    without anyone choosing it: each exporter refuses it (exit 12, nothing written) and says why and what to
    do; with --allow-incomplete it exports, warns, and export.json lists the stages under incomplete."""
    run = tmp_path / "run"
    with FlakyJudge() as srv:
        srv.broken = True
        assert main(judge_argv(run, srv.url)) == 11
        listed = json.loads((run / "run.json").read_text())["incomplete"]
        assert [u["stage"] for u in listed] == ["edu_score"]
        why = listed[0]["reason"]
        for fmt in ("datasets", "megatron"):
            out = tmp_path / fmt
            argv = ["export", fmt, str(run), "--output", str(out), "--scheduler", "synchronous", "--quiet"]
            caplog.clear()
            assert main(argv) == 12
            assert not out.exists() and not list(tmp_path.glob(f".{fmt}*"))
            [error] = [r.getMessage() for r in caplog.records if r.levelname == "ERROR"]
            assert error.startswith(f"{run} is incomplete: edu_score ({why}), so the data a trainer would get lacks")
            assert "nothing was written" in error
            assert "Re-run the same `curate run` command when the judge answers" in error
            assert "or pass --allow-incomplete to export it as it is" in error
            caplog.clear()
            assert main([*argv, "--allow-incomplete"]) == 0
            assert json.loads((out / "export.json").read_text())["incomplete"] == listed
            said = [
                r.getMessage() for r in caplog.records if r.levelname == "WARNING" and "incomplete" in r.getMessage()
            ]
            assert said == [
                f"exported an incomplete run: edu_score ({why}); export.json lists it under incomplete, so train on it "
                "only knowingly, or re-run the run when the judge answers and export again"
            ]
        # the mixture folder exported as it is: its manifests list the stage
        alone = tmp_path / "alone"
        argv = ["export", "datasets", str(run / "80_mixture"), "--output", str(alone), "--scheduler", "synchronous"]
        assert main(argv) == 12 and not alone.exists()
        assert main([*argv, "--allow-incomplete"]) == 0
        assert json.loads((alone / "export.json").read_text())["incomplete"] == listed
        srv.broken = False
        assert main(judge_argv(run, srv.url)) == 0
    caplog.clear()
    out = tmp_path / "datasets"
    assert main(["export", "datasets", str(run), "--output", str(out), "--replace", "--scheduler", "synchronous"]) == 0
    assert json.loads((out / "export.json").read_text())["incomplete"] == []
    assert "incomplete" not in caplog.text
