"""A cached step's key holds every setting that changes its result: a stage re-run with such a
setting changed computes the step again and equals a fresh run with that setting."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest

from classifiers.web_quality import score_options
from tests.helpers import importable_module, make_stage_dir, read_parts, run_one
from tests.pipelines.test_web_quality_stage import corpus

OWN = '''
import numpy as np


class Longest:
    """The length of the longest word of at least ``min_len`` characters; its version leaves the option out."""

    needs = frozenset({"text"})
    version = "longest-1"

    def __init__(self, name, min_len=1, batch_size=8):
        self.name, self.min_len = name, min_len

    def score(self, batch):
        return np.array([max([len(w) for w in t.split() if len(w) >= self.min_len] or [0]) for t in batch.clean_texts()],
                        dtype=np.float64)
'''


def scores(root: Path, name: str, overrides: list[str], column: str) -> pd.Series:
    """``column`` of web_quality's output run on the shared test corpus into ``root/name`` (one cache per ``root``)."""
    inp = root / "in"
    if not inp.exists():
        make_stage_dir(inp, corpus(), nparts=2)
    run_one("web_quality", inp, root / name, overrides)
    kept = read_parts(root / name / "docs")
    return kept[kept["source"] == "web"].set_index("doc_id")[column].sort_index()


def test_a_changed_linear_max_chars_scores_again_as_a_fresh_run(tmp_path: Path) -> None:
    first = scores(tmp_path, "out", [], "quality_score_linear")
    again = scores(tmp_path, "out2", ["web_quality.scorer_options={linear: {max_chars: 60}}"], "quality_score_linear")
    fresh = scores(
        tmp_path / "fresh", "out", ["web_quality.scorer_options={linear: {max_chars: 60}}"], "quality_score_linear"
    )
    assert not first.equals(fresh)  # the setting changes scores on this corpus
    pd.testing.assert_series_equal(again, fresh)


@pytest.fixture
def module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    yield from importable_module(tmp_path, monkeypatch, "own_longest", OWN)


def test_an_option_the_version_leaves_out_is_in_the_key(tmp_path: Path, module: str) -> None:
    def run(root: Path, name: str, min_len: int) -> pd.Series:
        opts = f"web_quality.scorer_options={{ln: {{kind: '{module}:Longest', min_len: {min_len}}}}}"
        return scores(root, name, ["web_quality.scorers=[heuristics, ln]", opts], "quality_score_ln")

    first = run(tmp_path, "out", 1)
    again = run(tmp_path, "out2", 9)
    fresh = run(tmp_path / "fresh", "out", 9)
    assert not first.equals(fresh)
    pd.testing.assert_series_equal(again, fresh)


def test_run_only_options_and_the_model_path_stay_out_of_the_key() -> None:
    hf = score_options("x", {"kind": "hf", "model": "/m", "device": "cuda", "batch_size": 8})
    assert hf == score_options("x", {"kind": "hf", "model": "/n"}) == {"kind": "hf", "label": None, "max_length": 512}
    assert score_options("x", {"kind": "hf", "max_length": 128}) != hf  # truncation changes scores
    assert score_options("linear", {"max_chars": 512}) != score_options("linear", {})
    assert score_options("linear", {"max_chars": None}) == score_options("linear", {})  # a default given is the default
