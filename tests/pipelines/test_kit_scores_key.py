"""A row stage's cached scores are keyed on every config field but its ``decision_keys`` and on
its ``produces``: a field ``score`` reads re-scores when it changes (never stale scores), a
decision key alone reuses them, a changed ``produces`` re-scores, and columns ``score`` returns
beyond ``produces`` are warned about, whether the scores are computed or reused."""

from __future__ import annotations

import dataclasses
import logging
import re
from pathlib import Path
from typing import Any

import dask
import dask.dataframe as dd
import pandas as pd
import pytest

from curation.config import StageConfig
from curation.schema import DROP_REASON, DropReason
from pipelines.kit import RowFilter, StageContext

URL, URL_ONLY = re.compile(r"https?://\S+|www\.\S+"), re.compile(r"https?://\S+")
CALLS: list[int] = []


@dataclasses.dataclass(frozen=True)
class UrlCfg(StageConfig):
    sources: tuple[str, ...] = ("web",)
    max_urls: int = 1
    count_www: bool = True


class UrlCount(RowFilter):
    """The tester's stage: ``count_www`` changes the scores, ``max_urls`` only decides."""

    name = "url_count"
    config_cls = UrlCfg
    produces = {"n_urls": "Int64"}
    reason = DropReason.REPEATED_LINES
    decision_keys = ("max_urls",)

    def score(self, rows: pd.DataFrame, cfg: UrlCfg) -> pd.DataFrame:
        CALLS.append(len(rows))
        pattern = URL if cfg.count_www else URL_ONLY
        return pd.DataFrame(
            {"n_urls": pd.array([len(pattern.findall(t)) for t in rows["text"]], dtype="Int64")}, index=rows.index
        )

    def drops(self, scores: pd.DataFrame, cfg: UrlCfg) -> pd.Series:
        return scores["n_urls"] > cfg.max_urls


def _docs() -> dd.DataFrame:
    texts = ["www.a.org www.b.org", "http://a.org http://b.org", "plain", "www.c.org http://c.org"]
    df = pd.DataFrame({"doc_id": [f"d{i}" for i in range(4)], "text": texts, "source": ["web"] * 4})
    return dd.from_pandas(df, npartitions=2)


def _run(stage: Any, cfg: Any, tmp_path: Path) -> pd.DataFrame:
    ctx = StageContext(
        name=stage.name,
        work_dir=tmp_path / f"work{len(CALLS)}",
        cache_dir=tmp_path / "cache",
        input_fingerprint="in",
        quiet=True,
    )
    with dask.config.set(scheduler="synchronous"):
        return stage.build(_docs(), cfg, ctx).compute().set_index("doc_id")


def test_a_config_field_score_reads_re_scores_and_a_decision_key_reuses_the_scores(tmp_path: Path) -> None:
    CALLS.clear()
    first = _run(UrlCount(), UrlCfg(), tmp_path)
    assert first["n_urls"].tolist() == [2, 2, 0, 2] and first[DROP_REASON].notna().tolist() == [True, True, False, True]
    scored = len(CALLS)
    stricter = _run(UrlCount(), UrlCfg(max_urls=0), tmp_path)  # a decision key: the cached scores
    assert len(CALLS) == scored and stricter[DROP_REASON].notna().sum() == 3
    no_www = _run(UrlCount(), UrlCfg(count_www=False), tmp_path)  # not a decision key: scored again
    assert len(CALLS) > scored
    assert no_www["n_urls"].tolist() == [0, 2, 0, 1] and no_www[DROP_REASON].notna().tolist() == [
        False,
        True,
        False,
        False,
    ]


def test_a_changed_produces_re_scores_without_a_version_bump(tmp_path: Path) -> None:
    class Renamed(UrlCount):
        produces = {"url_count": "Int64"}

        def score(self, rows: pd.DataFrame, cfg: UrlCfg) -> pd.DataFrame:
            return super().score(rows, cfg).rename(columns={"n_urls": "url_count"})

        def drops(self, scores: pd.DataFrame, cfg: UrlCfg) -> pd.Series:
            return scores["url_count"] > cfg.max_urls

    _run(UrlCount(), UrlCfg(), tmp_path)
    out = _run(Renamed(), UrlCfg(), tmp_path)
    assert out["url_count"].tolist() == [2, 2, 0, 2]


def test_score_keys_is_refused_naming_decision_keys() -> None:
    with pytest.raises(TypeError, match=r"score_keys.*decision_keys = \(\"max_urls\",\)"):
        type("Old", (UrlCount,), {"score_keys": ("count_www",)})
    with pytest.raises(TypeError, match=r"decision_keys names 'max_url', which is no field of UrlCfg"):
        type("Typo", (UrlCount,), {"decision_keys": ("max_url",)})
    with pytest.raises(TypeError, match=r"decision_keys = 'max_urls' is a string.*write decision_keys = \(\"max_urls\",\)"):
        type("NoComma", (UrlCount,), {"decision_keys": ("max_urls")})  # noqa: UP034 - the mistake under test


class Chatty(UrlCount):
    def score(self, rows: pd.DataFrame, cfg: UrlCfg) -> pd.DataFrame:
        return super().score(rows, cfg).assign(n_links=1.0)


def test_columns_score_returns_beyond_produces_are_warned_about_once_per_run_with_the_scores_reused_too(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    CALLS.clear()
    calls = []
    for max_urls in (1, 0):  # the second run, with a decision key changed, reuses the cached scores
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="pipelines.kit.shapes"):
            out = _run(Chatty(), UrlCfg(max_urls=max_urls), tmp_path)
        said = [r.getMessage() for r in caplog.records if "beyond produces" in r.getMessage()]
        assert len(said) == 1 and "['n_links']" in said[0] and "declare them in produces" in said[0]
        assert "n_links" not in out.columns
        calls.append(len(CALLS))
    assert calls[0] > 0 and calls[1] == calls[0]  # the second run scored nothing
    ctx = StageContext(
        name="url_count", work_dir=tmp_path / "again", cache_dir=tmp_path / "cache", input_fingerprint="in", quiet=True
    )
    Chatty().prepare(_docs(), UrlCfg(), ctx)
    assert ctx.extra_stats["beyond_produces"] == ["n_links"]  # stats.json's extra
