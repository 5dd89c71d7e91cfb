"""A mistake inside a group stage of one's own (``keys``, ``removals``): an error it raises, key
rows that are not one per document, removals of documents that are not in its group, with another
partition or without a DropReason, is a stage error naming the stage and the method (exit 13); an
error inside the group stage curate ships stays a bug in curate (exit 70)."""

from __future__ import annotations

import dataclasses
import logging
from pathlib import Path
from typing import Any

import dask
import dask.dataframe as dd
import pandas as pd
import pytest

from curation.config import StageConfig
from curation.schema import DROP_DETAIL, DROP_REASON, DropReason
from pipelines.cli_end import ended
from pipelines.kit import GroupStage, StageContext, StageError


@dataclasses.dataclass(frozen=True)
class Cfg(StageConfig):
    pass


class SameText(GroupStage):
    """Every copy of a text but the first is removed."""

    name = "same_text"
    config_cls = Cfg
    key_meta = pd.DataFrame({"hash": pd.Series(dtype=object), "doc_id": pd.Series(dtype=object)})

    def keys(self, part: pd.DataFrame, cfg: Cfg) -> pd.DataFrame:
        return pd.DataFrame({"hash": part["text"].to_numpy(), "doc_id": part["doc_id"].to_numpy()})

    def removals(self, group: pd.DataFrame, cfg: Cfg) -> pd.DataFrame:
        rows = group[group.sort_values(["_part", "_row"]).duplicated("hash").reindex(group.index).to_numpy()]
        return pd.DataFrame(
            {
                "doc_id": rows["doc_id"],
                "_part": rows["_part"],
                DROP_REASON: DropReason.EXACT_DUPLICATE.value,
                DROP_DETAIL: None,
            }
        )


class KeysFail(SameText):
    def keys(self, part: pd.DataFrame, cfg: Cfg) -> pd.DataFrame:
        return pd.DataFrame({"hash": part["body"], "doc_id": part["doc_id"]})


class KeysShort(SameText):
    def keys(self, part: pd.DataFrame, cfg: Cfg) -> pd.DataFrame:
        return super().keys(part, cfg).iloc[1:]


class KeysOtherIds(SameText):
    def keys(self, part: pd.DataFrame, cfg: Cfg) -> pd.DataFrame:
        return super().keys(part, cfg).assign(doc_id=lambda k: k["doc_id"] + "-x")


class KeysNoHash(SameText):
    def keys(self, part: pd.DataFrame, cfg: Cfg) -> pd.DataFrame:
        return super().keys(part, cfg).rename(columns={"hash": "digest"})


class RemovalsFail(SameText):
    def removals(self, group: pd.DataFrame, cfg: Cfg) -> pd.DataFrame:
        return super().removals(group, cfg).assign(detail=lambda r: r["hash"])


class RemovalsOtherIds(SameText):
    def removals(self, group: pd.DataFrame, cfg: Cfg) -> pd.DataFrame:
        return super().removals(group, cfg).assign(doc_id="d9")


class RemovalsOtherPart(SameText):
    def removals(self, group: pd.DataFrame, cfg: Cfg) -> pd.DataFrame:
        return super().removals(group, cfg).assign(_part=lambda r: r["_part"] + 1)


class RemovalsFreeReason(SameText):
    def removals(self, group: pd.DataFrame, cfg: Cfg) -> pd.DataFrame:
        return super().removals(group, cfg).assign(**{DROP_REASON: "same text"})


def _run(stage: Any, tmp_path: Path) -> pd.DataFrame:
    df = pd.DataFrame(
        {"doc_id": [f"d{i}" for i in range(6)], "text": ["a", "b", "a", "c", "b", "a"], "source": ["web"] * 6}
    )
    ctx = StageContext(
        name=stage.name, work_dir=tmp_path / "work", cache_dir=tmp_path / "cache", input_fingerprint="in", quiet=True
    )
    with dask.config.set(scheduler="synchronous"):
        return stage.build(dd.from_pandas(df, npartitions=2), Cfg(), ctx).compute()


def test_a_group_stage_that_keeps_the_contract_removes_the_later_copies(tmp_path: Path) -> None:
    out = _run(SameText(), tmp_path)
    assert out.loc[out[DROP_REASON].notna(), "doc_id"].tolist() == ["d2", "d4", "d5"]


@pytest.mark.parametrize(
    ("stage", "said"),
    [
        (
            KeysFail,
            r"same_text\.keys raised KeyError: 'body' at .*test_group_stage_contract\.py:\d+; fix the stage's keys",
        ),
        (KeysShort, r"same_text\.keys returned 2 key rows for 3 documents: return one row per row of `part`"),
        (KeysOtherIds, r"same_text\.keys returned a key row for doc_id 'd\d-x', which is no document of `part`"),
        (KeysNoHash, r"same_text\.keys returned no column 'hash' \(key_meta names it\)"),
        (RemovalsFail, r"same_text\.removals raised KeyError: 'hash' at .*; fix the stage's removals"),
        (RemovalsOtherIds, r"same_text\.removals returned a removal of doc_id 'd9', which is no key row of `group`"),
        (RemovalsOtherPart, r"same_text\.removals returned doc_id 'd\d' with _part \d, but its key row's _part is \d"),
        (RemovalsFreeReason, r"same_text\.removals returned drop_reason 'same text', which is no DropReason value"),
    ],
)
def test_a_mistake_inside_a_group_stage_of_ones_own_names_the_stage_and_method(
    stage: type, said: str, tmp_path: Path
) -> None:
    with pytest.raises(StageError, match=said) as caught:
        _run(stage(), tmp_path)
    assert ended("run", caught.value) == 13


def test_an_error_inside_the_shipped_group_stage_stays_a_bug_in_curate(caplog: pytest.LogCaptureFixture) -> None:
    from pipelines.kit.group_checks import keys_part
    from pipelines.stages import load_stage

    stage = load_stage("exact_dedup")
    with pytest.raises(KeyError) as caught:
        keys_part(pd.DataFrame({"doc_id": ["a"]}), stage, stage.config_cls())
    assert not isinstance(caught.value, StageError)
    with caplog.at_level(logging.ERROR, logger="curate"):
        assert ended("run", caught.value) == 70
    assert "a bug in curate" in caplog.text and "(in exact_dedup.keys)" in caplog.text
