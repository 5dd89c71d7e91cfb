"""stats.json and the other JSON files a run writes are strict JSON: a figure that cannot be computed is null."""

import json

import numpy as np

from pipelines.io import write_json


def test_a_nan_figure_is_written_null(tmp_path):
    """A distillation of constant scores wrote "spearman": NaN into stats.json, which jq, JavaScript
    and a strict json.load refuse."""
    write_json(tmp_path / "stats.json", {"spearman": float("nan"), "auc": np.float64("inf"), "n": [1, float("-inf")], "f1": 0.5})
    text = (tmp_path / "stats.json").read_text()
    strict = json.loads(text, parse_constant=lambda c: (_ for _ in ()).throw(ValueError(c)))
    assert strict == {"auc": None, "f1": 0.5, "n": [1, None], "spearman": None}
