"""code_web's tier histogram reads only the score columns the recall rule and the tier score use
(not the re-parsed text): the same histogram as from the whole scores part."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from pipelines.stages.code_steps import Histogram, _hist_file
from pipelines.stages.code_web import HIST_COLUMNS, SCORE_COLUMNS, CodeWebConfig, _hist


def _scores(n: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    score = rng.uniform(0, 10, n)
    score[rng.random(n) < 0.3] = np.nan
    return pd.DataFrame({
        "doc_id": [f"d{i}" for i in range(n)], "has_html": rng.random(n) < 0.8,
        "pre_blocks": rng.integers(0, 3, n), "code_elements": rng.integers(0, 5, n), "highlighted": rng.integers(0, 2, n),
        "code_chars": rng.integers(0, 200, n), "content_prob": rng.random(n), "content_code_chars": rng.integers(0, 80, n),
        "content_code_lines": rng.integers(0, 5, n),
        "reparsed": [None if i % 3 else "x = 1\n中文 😀" for i in range(n)], "score": score,
        "language": [None if i % 2 else "python" for i in range(n)], "n_tokens": rng.integers(-1, 50, n),
        "html_parsed": rng.random(n) < 0.5,
    })[SCORE_COLUMNS]


@pytest.mark.parametrize("cfg", [CodeWebConfig(), CodeWebConfig(recall=("classifier",), tier_weights={"structural": 1.0, "content": 0.5}),
                                 CodeWebConfig(recall=("html_tags",), min_code_chars=0, classifier_threshold=0.2)])
@pytest.mark.parametrize("n", [0, 1, 200])
def test_histogram_from_the_columns_it_reads_is_the_whole_parts(tmp_path, cfg: CodeWebConfig, n: int) -> None:
    path = tmp_path / "part-00000.parquet"
    _scores(n, n).to_parquet(path)
    whole = _hist(pd.read_parquet(path), cfg)  # reference: the part read whole
    pd.testing.assert_frame_equal(_hist_file(str(path), Histogram(_hist, (cfg,)), HIST_COLUMNS)[0], whole)
    pd.testing.assert_frame_equal(_hist_file(str(path), Histogram(_hist, (cfg,)), None)[0], whole)
