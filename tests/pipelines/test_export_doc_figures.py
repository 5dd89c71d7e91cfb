"""docs/export.md's sample-run figures are the sample run's: the flags of its example commands, the
best-fit phases' tokens, and what random truncation does to phase 1's `web/high`."""

import json
import re
from pathlib import Path

from pipelines.cli import main as curate
from tests.pipelines.test_export_outputs import QUIET

DOC = Path(__file__).resolve().parents[2] / "docs" / "export.md"


def number(text: str) -> int:
    return int(text.replace(",", ""))


def test_the_sample_figures_in_docs_export_are_the_sample_runs(finished_run, tmp_path):
    doc = DOC.read_text()
    meg, ds = tmp_path / "megatron", tmp_path / "datasets"
    assert curate(["export", "megatron", str(finished_run), "--output", str(meg), *QUIET]) == 0
    assert (
        curate(
            [
                "export",
                "datasets",
                str(finished_run),
                "--output",
                str(ds),
                "--phase",
                "pretrain_phase1",
                "--truncation",
                "random",
                *QUIET,
            ]
        )
        == 0
    )
    phases = json.loads((meg / "export.json").read_text())["phases"]
    # the example commands: each names its phase's .data-args, then its --train-samples
    for phase, samples in re.findall(
        r"runs/sample-megatron/(\w+)\.data-args \\\n\s+--seq-length \d+ --train-samples (\d+)", doc
    ):
        assert phases[phase]["train_samples"] == int(samples), phase
    said = re.search(r"the sample's `midtrain_reasoning_32k`: `tokens` ([\d,]+), its one file ([\d,]+) ids", doc)
    reasoning = phases["midtrain_reasoning_32k"]
    assert said and number(said[1]) == reasoning["tokens"]
    assert number(said[2]) == reasoning["train_samples"] * reasoning["seq_length"] + 1
    said = re.search(r"the 128K\s+long-context phase, ([\d,]+) tokens", doc)
    assert said and number(said[1]) == phases["midtrain_long_context_128k"]["tokens"]
    assert phases["midtrain_long_context_128k"]["train_samples"] == 1
    p1 = json.loads((ds / "export.json").read_text())["phases"]["pretrain_phase1"]
    high = p1["groups"]["web/high"]
    said = re.search(r"phase 1's `web/high` goes from ([\d.]+) of the plan to ([\d.]+) of the windows", doc)
    assert said and float(said[1]) == round(high["planned_tokens"] / p1["planned_tokens"], 3)
    assert float(said[2]) == round(high["trained_tokens"] / p1["trained_tokens"], 3)
