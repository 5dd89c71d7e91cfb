"""A newcomer's likely mistakes in a stage of their own are refused when the class is defined or
said when the kit meets them, naming the stage, the method and what to change (exit 13); an error
inside a stage curate ships stays a bug in curate (exit 70) and names the stage and method."""

from __future__ import annotations

import dataclasses
import logging
import pickle
import sys
import textwrap
from pathlib import Path
from typing import Any

import dask
import dask.dataframe as dd
import pandas as pd
import pytest

from curation.config import StageConfig
from curation.schema import DropReason
from pipelines.cli_end import ended
from pipelines.kit import RowFilter, RowStage, StageContext, StageError
from tests.helpers import docs_frame, make_stage_dir, run_one


@dataclasses.dataclass(frozen=True)
class Cfg(StageConfig):
    sources: tuple[str, ...] = ("web",)
    max_urls: int = 1


class Urls(RowFilter):
    name = "url_count"
    config_cls = Cfg
    produces = {"n_urls": "Int64"}
    reason = DropReason.REPEATED_LINES
    score_columns = ("text",)
    decision_keys = ("max_urls",)

    def score(self, rows: pd.DataFrame, cfg: Cfg) -> pd.DataFrame:
        return pd.DataFrame(
            {"n_urls": pd.array([t.count("http") for t in rows["text"]], dtype="Int64")}, index=rows.index
        )

    def drops(self, scores: pd.DataFrame, cfg: Cfg) -> pd.Series:
        return scores["n_urls"] > cfg.max_urls


def _run(stage: Any, tmp_path: Path) -> pd.DataFrame:
    df = pd.DataFrame(
        {
            "doc_id": ["a", "b", "c"],
            "text": ["http://x http://y", "none", "http://z"],
            "source": ["web", "web", "code"],
            "url": ["u1", "u2", "u3"],
        }
    )
    ctx = StageContext(
        name=stage.name, work_dir=tmp_path / "work", cache_dir=tmp_path / "cache", input_fingerprint="in", quiet=True
    )
    with dask.config.set(scheduler="synchronous"):
        return stage.build(dd.from_pandas(df, npartitions=1), Cfg(), ctx).compute()


@pytest.mark.parametrize("version", [2, "2 ", "", "2.1 beta"])
def test_a_version_that_is_not_a_string_without_spaces_is_refused_when_defined(version: Any) -> None:
    with pytest.raises(TypeError, match=r"version = .*non-empty string without spaces, e\.g\. version = \"2\""):
        type("Bumped", (Urls,), {"version": version})
    assert type("Bumped", (Urls,), {"version": "2"}).version == "2"


@pytest.mark.parametrize("reason", ["too_many_urls", None])
def test_a_row_filter_without_a_drop_reason_member_is_refused_when_defined(reason: Any) -> None:
    body = {"reason": reason} if reason is not None else {}
    parents = (Urls,) if reason is not None else (RowFilter,)
    with pytest.raises(TypeError, match=r"reason.*DropReason in curation/schema\.py"):
        type("NoReason", parents, {"name": "x", **body})


class ShortScores(Urls):
    def score(self, rows: pd.DataFrame, cfg: Cfg) -> pd.DataFrame:
        return super().score(rows, cfg).iloc[:-1]


class FloatScores(Urls):
    def score(self, rows: pd.DataFrame, cfg: Cfg) -> pd.DataFrame:
        return pd.DataFrame({"n_urls": [t.count("http") / 3 for t in rows["text"]]}, index=rows.index)


class ReadsUrl(Urls):
    def score(self, rows: pd.DataFrame, cfg: Cfg) -> pd.DataFrame:
        return pd.DataFrame({"n_urls": pd.array([len(u) for u in rows["url"]], dtype="Int64")}, index=rows.index)


class ShortDrops(Urls):
    def drops(self, scores: pd.DataFrame, cfg: Cfg) -> pd.Series:
        return (scores["n_urls"] > cfg.max_urls).iloc[:1]


class ScalarDrops(Urls):
    def drops(self, scores: pd.DataFrame, cfg: Cfg) -> Any:
        return False


class Fails(Urls):
    def drops(self, scores: pd.DataFrame, cfg: Cfg) -> pd.Series:
        return scores["n_links"] > 1


@pytest.mark.parametrize(
    ("stage", "said"),
    [
        (ShortScores, r"url_count\.score returned 1 rows for 2: one row per row of `rows`"),
        (FloatScores, r"url_count\.score returned column 'n_urls' as float64, which does not convert to the 'Int64'"),
        (ShortDrops, r"url_count\.drops returned 1 values for 2 rows"),
        (ScalarDrops, r"url_count\.drops returned a bool for 2 rows"),
        (Fails, r"url_count\.drops raised KeyError: 'n_links' at .*fix the stage's drops"),
    ],
)
def test_a_mistake_inside_a_stage_of_ones_own_names_the_stage_and_method(
    stage: type, said: str, tmp_path: Path
) -> None:
    with pytest.raises(StageError, match=said) as caught:
        _run(stage(), tmp_path)
    assert ended("run", caught.value) == 13


def test_a_stage_error_travels_from_a_worker_with_its_traceback() -> None:
    again = pickle.loads(pickle.dumps(StageError("url_count.score raised KeyError", "Traceback ...")))
    assert str(again) == "url_count.score raised KeyError" and again.trace == "Traceback ..."


def test_an_error_inside_a_shipped_stage_stays_a_bug_in_curate_and_names_the_method(
    caplog: pytest.LogCaptureFixture,
) -> None:
    from pipelines.kit.contract import call
    from pipelines.stages import load_stage

    stage = load_stage("repeated_lines")
    with pytest.raises(KeyError) as caught:
        call(stage, "score", pd.DataFrame({"doc_id": ["a"]}), stage.config_cls())
    assert not isinstance(caught.value, StageError)
    with caplog.at_level(logging.ERROR, logger="curate"):
        assert ended("run", caught.value) == 70
    assert "a bug in curate" in caplog.text and "(in repeated_lines.score)" in caplog.text


class LosesRows(RowStage):
    name = "loses_rows"
    produces = {"n_chars": "Int64"}

    def prepare(self, docs: Any, cfg: Any, ctx: Any) -> Any:
        from pipelines.kit import Plan

        return Plan()

    def decide(self, number: int, df: pd.DataFrame, state: Any, cfg: Any) -> pd.DataFrame:
        return df.iloc[1:].assign(n_chars=df["text"].str.len().astype("Int64"))


MODULE = """
import dataclasses
from curation.config import StageConfig
from tests.pipelines.test_stage_contract import {cls}


@dataclasses.dataclass(frozen=True)
class Config(StageConfig):
    enabled: bool = False
    sources: tuple = ("web",)
    max_urls: int = 1


class Registered({cls}):
    name = "{name}"
    config_cls = Config
"""


def _register(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, text: str) -> str:
    from pipelines import stages

    (tmp_path / f"{name}_mod.py").write_text(textwrap.dedent(text))
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setitem(stages.STAGES, name, ("25", f"{name}_mod"))
    sys.modules.pop(f"{name}_mod", None)
    return name


def test_in_a_run_a_column_score_reads_beyond_score_columns_lost_rows_and_no_stage_are_stage_errors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pipelines.stages import load_stage

    rows = [{"doc_id": f"d{i}", "text": "http://a " * i, "source": "web", "url": f"u{i}"} for i in range(4)]
    inp = make_stage_dir(tmp_path / "in", docs_frame(rows))
    name = _register(
        tmp_path, monkeypatch, "reads_url", MODULE.format(cls="ReadsUrl", name="reads_url") + "\nSTAGE = Registered()\n"
    )
    with pytest.raises(
        StageError,
        match=r"reads_url\.score raised KeyError: 'url' at .*test_stage_contract\.py:\d+ .*add 'url' to "
        r"score_columns.*fix the stage's score",
    ) as caught:
        run_one(name, inp, tmp_path / "out")
    assert "Traceback" in caught.value.trace and 'rows["url"]' in caught.value.trace
    name = _register(
        tmp_path,
        monkeypatch,
        "loses_rows",
        MODULE.format(cls="LosesRows", name="loses_rows") + "\nSTAGE = Registered()\n",
    )
    with pytest.raises(
        StageError, match=r"stage loses_rows lost documents: 4 in, 2 kept \+ dropped.*returns every row"
    ):
        run_one(name, inp, tmp_path / "out")
    _register(tmp_path, monkeypatch, "no_stage", MODULE.format(cls="Urls", name="no_stage"))
    with pytest.raises(
        StageError, match=r"no_stage_mod\.py defines no STAGE: end it with .*STAGE = NoStageStage\(\)"
    ) as caught:
        load_stage("no_stage")
    assert ended("no-stage", caught.value) == 13
    _register(tmp_path, monkeypatch, "url_counter", MODULE.format(cls="Urls", name="url_count") + "\nSTAGE = Registered()\n")
    with pytest.raises(StageError, match=r"its stage is named 'url_count' but STAGES registers it as 'url_counter'"):
        load_stage("url_counter")
