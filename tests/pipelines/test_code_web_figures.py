"""code_web's figures pass: the tier histogram and the count of pages whose HTML was parsed come
from one read of each scores part (:func:`tier_histogram` with totals), equal to a histogram pass
over the parts (Dask ``from_map``, kept here) and a separate sum of ``html_parsed`` over the parts
(the reference)."""

from __future__ import annotations

import dask
import dask.dataframe as dd
import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest

from curation.quality.code_tiers import score_histogram, thresholds
from pipelines.kit import Artifact, StageContext
from pipelines.stages.code_steps import tier_histogram
from pipelines.stages.code_web import HIST_COLUMNS, CodeWebConfig, _hist
from tests.pipelines.test_code_web_hist_columns import _scores


def _ref_histogram(ctx: StageContext, scores: Artifact, hist, *args, columns=None) -> pd.DataFrame:
    """The histogram pass of one task per part, through ``dd.from_map`` and ``pd.read_parquet``."""
    files = [str(p) for p in scores.parts()]
    graph = dd.from_map(lambda path, *a: hist(pd.read_parquet(path, columns=columns), *a), files, args=args,
                        meta=score_histogram(np.array([]), np.array([])), enforce_metadata=False)
    return ctx.compute(graph, "tier cuts")


def _ctx(tmp_path) -> StageContext:
    return StageContext(name="code_web", work_dir=tmp_path / "w", cache_dir=tmp_path / "c", input_fingerprint="x", quiet=True)


@pytest.mark.parametrize("cfg", [CodeWebConfig(), CodeWebConfig(recall=("classifier",), tier_weights={"structural": 1.0, "content": 0.5}),
                                 CodeWebConfig(recall=("html_tags",), min_code_chars=0, classifier_threshold=0.2, tier_min_files=5)])
@pytest.mark.parametrize("sizes", [[0], [1], [200, 0, 37], [120, 80]])
def test_one_read_gives_the_histogram_and_the_parsed_count(tmp_path, cfg: CodeWebConfig, sizes: list[int]) -> None:
    art = Artifact(tmp_path / "scores")
    for number, n in enumerate(sizes):
        art.write_part(number, _scores(n, 7 * number + n))
    with dask.config.set(scheduler="synchronous"):
        ref_hist = _ref_histogram(_ctx(tmp_path), art, _hist, cfg, columns=HIST_COLUMNS)
        hist, totals = tier_histogram(_ctx(tmp_path), art, _hist, cfg, columns=HIST_COLUMNS, totals=("html_parsed",))
    ref_parsed = sum(int(pq.read_table(f, columns=["html_parsed"]).column(0).to_numpy().sum()) for f in art.parts())
    assert totals == {"html_parsed": ref_parsed}
    assert isinstance(totals["html_parsed"], int)
    pd.testing.assert_frame_equal(hist.astype({"language": object}).reset_index(drop=True),
                                  ref_hist.astype({"language": object}).reset_index(drop=True))
    rule = cfg.tier_rule()
    assert thresholds(hist, rule, None, cfg.tier_min_files) == thresholds(ref_hist, rule, None, cfg.tier_min_files)
    recalled = lambda h: int(h.loc[h["language"] == "code_web", "count"].sum()) if len(h) else 0  # noqa: E731
    assert recalled(hist) == recalled(ref_hist)


def test_no_parts(tmp_path) -> None:
    art = Artifact(tmp_path / "scores")
    (tmp_path / "scores").mkdir()
    hist, totals = tier_histogram(_ctx(tmp_path), art, _hist, CodeWebConfig(), columns=HIST_COLUMNS, totals=("html_parsed",))
    assert totals == {"html_parsed": 0} and hist.empty
