"""The stage shapes: the kit orders a stage's columns, limits scoring to its sources, returns its
figures and marks, and marks a group stage's removals in place."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import dask
import dask.dataframe as dd
import pandas as pd

from curation.config import StageConfig
from curation.schema import DROP_DETAIL, DROP_REASON, DropReason, detail_json
from pipelines.kit import GroupStage, Plan, RowFilter, RowStage, StageContext, StageFigures


@dataclasses.dataclass(frozen=True)
class Cfg(StageConfig):
    sources: tuple[str, ...] = ("web",)
    max_len: int = 5


def _docs() -> dd.DataFrame:
    df = pd.DataFrame({"doc_id": [f"d{i}" for i in range(6)], "text": ["a", "bbbbbbbb", "cc", "dddddddd", "a", "cc"],
                       "source": ["web", "web", "code", "code", "web", "web"]})
    return dd.from_pandas(df, npartitions=2)


def _run(stage: Any, tmp_path: Path) -> tuple[pd.DataFrame, StageContext]:
    ctx = StageContext(name=stage.name, work_dir=tmp_path / "work", cache_dir=tmp_path / "cache", input_fingerprint="in", quiet=True)
    with dask.config.set(scheduler="synchronous"):
        return stage.build(_docs(), Cfg(), ctx).compute(), ctx


class Annotate(RowStage):
    """Its decide puts the produced columns after drop_reason, in the reverse of their declared order."""

    name = "annotate"
    produces = {"length": "int64", "long": bool}

    def prepare(self, docs: dd.DataFrame, cfg: Cfg, ctx: StageContext) -> Plan:
        return Plan(None, StageFigures({"rule": cfg.max_len}, marks={"long": 2}))

    def decide(self, number: int, df: pd.DataFrame, state: Any, cfg: Cfg) -> pd.DataFrame:
        df = df.assign(**{DROP_REASON: None, DROP_DETAIL: None})
        return df.assign(long=df["text"].str.len() > cfg.max_len, length=df["text"].str.len())


class TooLong(RowFilter):
    name = "too_long"
    produces = {"length": "float64"}
    reason = DropReason.REPEATED_LINES

    def score(self, rows: pd.DataFrame, cfg: Cfg) -> pd.DataFrame:
        return pd.DataFrame({"length": rows["text"].str.len().astype(float)}, index=rows.index)

    def drops(self, scores: pd.DataFrame, cfg: Cfg) -> pd.Series:
        return scores["length"] > cfg.max_len


class SameText(GroupStage):
    name = "same_text"
    key_meta = pd.DataFrame({"hash": pd.Series(dtype=object), "doc_id": pd.Series(dtype=object)})

    def keys(self, part: pd.DataFrame, cfg: Cfg) -> pd.DataFrame:
        return pd.DataFrame({"hash": part["text"].to_numpy(), "doc_id": part["doc_id"].to_numpy()})

    def removals(self, group: pd.DataFrame, cfg: Cfg) -> pd.DataFrame:
        later = group.sort_values(["_part", "_row"]).duplicated("hash")
        rows = group[later.reindex(group.index).to_numpy()]
        return pd.DataFrame({"doc_id": rows["doc_id"], "_part": rows["_part"], DROP_REASON: DropReason.EXACT_DUPLICATE.value,
                             DROP_DETAIL: [detail_json(text=t) for t in rows["hash"]]})


def test_the_kit_puts_produced_columns_before_the_drop_columns_and_records_figures(tmp_path: Path) -> None:
    out, ctx = _run(Annotate(), tmp_path)
    assert list(out.columns) == ["doc_id", "text", "source", "length", "long", DROP_REASON, DROP_DETAIL]
    assert out["long"].tolist() == [False, True, False, True, False, False]
    assert ctx.extra_stats == {"rule": 5, "annotated": {"long": 2}}


def test_a_row_filter_scores_and_drops_rows_of_its_sources_only(tmp_path: Path) -> None:
    out, ctx = _run(TooLong(), tmp_path)
    assert out.loc[out[DROP_REASON].notna(), "doc_id"].tolist() == ["d1"]  # d3 is as long, but code
    assert out.set_index("doc_id").at["d1", DROP_DETAIL] == '{"length": 8.0}'
    assert out.set_index("doc_id").loc[["d2", "d3"], "length"].isna().all()
    assert ctx.extra_stats["scored_documents"] == 4 and ctx.extra_stats["annotated"] == {"scored": 4}


def test_a_group_stage_marks_later_copies_in_place(tmp_path: Path) -> None:
    out, ctx = _run(SameText(), tmp_path)
    assert out["doc_id"].tolist() == [f"d{i}" for i in range(6)]  # documents never move
    assert out.loc[out[DROP_REASON].notna(), "doc_id"].tolist() == ["d4", "d5"]
    assert ctx.extra_stats == {"removed": 2}
