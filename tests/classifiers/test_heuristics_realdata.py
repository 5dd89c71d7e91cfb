"""On real Common Crawl pages (../shared/data, skipped when absent): the default score beats single signals."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from classifiers.heuristics_signals import SIGNAL_NAMES, signal_matrix
from classifiers.scorer import Batch
from classifiers.web_quality import get_scorer

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / ".." / "shared" / "data" / "web" / "web_docs.parquet"
JUDGED = ROOT / "benchmarks" / "web_quality" / "wet_judgements.csv"

pytestmark = [pytest.mark.slow, pytest.mark.skipif(not DATA.exists(), reason="../shared/data is not available")]


def auc(y: np.ndarray, s: np.ndarray) -> float:
    from scipy.stats import rankdata

    r = rankdata(s)
    n1, n0 = int(y.sum()), int((~y).sum())
    return float((r[y].sum() - n1 * (n1 + 1) / 2) / (n1 * n0))


@pytest.fixture(scope="module")
def judged() -> pd.DataFrame:
    docs = pd.read_parquet(DATA, columns=["doc_id", "text", "source"])
    wet = docs[docs["source"] == "dolma_cc_raw_wet"].drop_duplicates("text")
    return wet.merge(pd.read_csv(JUDGED), on="doc_id")


def test_heuristic_score_beats_every_single_signal_on_judged_cc_pages(judged: pd.DataFrame) -> None:
    texts = judged["text"].tolist()
    good = (judged["rating"] >= 4).to_numpy()
    x = signal_matrix(texts)
    score = get_scorer("heuristics").model.combine(x)
    ours = auc(good, score)
    best_single = max(max(auc(good, x[:, k]), auc(good, -x[:, k])) for k in range(len(SIGNAL_NAMES)))
    assert ours > best_single
    english = x[:, SIGNAL_NAMES.index("stop_word_frac")] > 0.15
    swf = x[english, SIGNAL_NAMES.index("stop_word_frac")]
    assert auc(good[english], score[english]) > auc(good[english], swf)


def test_linear_model_ranks_english_cc_pages(judged: pd.DataFrame) -> None:
    texts = judged["text"].tolist()
    x = signal_matrix(texts)
    english = x[:, SIGNAL_NAMES.index("stop_word_frac")] > 0.15
    good = (judged["rating"] >= 4).to_numpy()[english]
    s = get_scorer("linear").score(Batch([t for t, e in zip(texts, english, strict=True) if e]))
    assert auc(good, s) > 0.85
