"""stats.json's counts (pipelines.counts.summarise_counts) against a row-by-row reference: totals,
per reason, per source (with its reasons) and per language, on frames with missing sources,
reasons and languages, and on an empty one."""

from __future__ import annotations

import numpy as np
import pandas as pd

from pipelines.counts import summarise_counts
from pipelines.io import COUNTS_META


def _reference(counts: pd.DataFrame) -> dict:
    def zero() -> dict:
        return {"documents": 0, "tokens": 0}

    def add(slot: dict, row) -> None:
        slot["documents"] += int(row.documents)
        slot["tokens"] += int(row.tokens)

    out = {"in": zero(), "kept": zero(), "dropped": zero(), "dropped_by_reason": {}, "by_source": {}, "by_lang": {}}
    for row in counts.itertuples():
        lang = "und" if "lang" not in counts.columns or pd.isna(row.lang) else str(row.lang)
        add(out["in"], row)
        langs = out["by_lang"].setdefault(lang, {"in": zero(), "kept": zero(), "dropped": zero()})
        add(langs["in"], row)
        add(out[row.kind], row)
        add(langs[row.kind], row)
        if not pd.isna(row.source):
            src = out["by_source"].setdefault(str(row.source), {"in": zero(), "kept": zero(), "dropped": zero(), "dropped_by_reason": {}})
            add(src["in"], row)
            add(src[row.kind], row)
        if row.kind == "dropped" and not pd.isna(row.reason):
            add(out["dropped_by_reason"].setdefault(str(row.reason), zero()), row)
            if not pd.isna(row.source):
                add(src["dropped_by_reason"].setdefault(str(row.reason), zero()), row)
    return out


def test_counts_fold_as_row_by_row():
    rng = np.random.default_rng(7)
    for n, with_lang in [(0, True), (1, True), (40, False), (700, True)]:
        counts = pd.DataFrame({
            "kind": rng.choice(["kept", "dropped"], n), "source": rng.choice(["web", "code", None], n),
            "lang": rng.choice(["en", "zh", "fr", None], n), "reason": rng.choice(["exact_duplicate", "low_quality", None], n),
            "documents": rng.integers(0, 50, n), "tokens": rng.integers(0, 5000, n), "part": rng.integers(0, 4, n),
        })
        counts = counts if with_lang else counts.drop(columns="lang")
        assert summarise_counts(counts) == _reference(counts), (n, with_lang)
    assert summarise_counts(COUNTS_META.iloc[:0])["in"] == {"documents": 0, "tokens": 0}
