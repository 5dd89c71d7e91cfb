"""A record's own ``source`` field that names no source (a dataset's name: ``wcxb``, ``dolma_cc_raw_wet``)
gives way to the source the user gave its input (``--source`` or an ``ingest.inputs`` entry): the record is
kept under that source, the field's value is kept in ``meta`` under the field's name, and ingest says so
once. A field that names a source is still the record's; with no source given, it is ``unknown_source``."""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from curation.ingest.records import FieldMap, rows_from_records
from pipelines.cli import main
from tests.helpers import read_parts

DATA = Path(os.environ.get("CURATION_SHARED_DATA") or Path(__file__).resolve().parents[2].parent / "shared" / "data")
WEB = DATA / "web" / "web_docs.parquet"
NOTE = "have a source field that names no source"
FIGURES = "source_field_in_meta"  #: stats.json extra


def test_a_dataset_name_gives_way_to_the_input_source_and_a_known_source_stays() -> None:
    records = [
        {"id": "a", "text": "a page", "source": "c4"},
        {"id": "b", "text": "a post", "source": "social"},
        {"id": "c", "text": "no field"},
        {"id": "d", "text": "a page", "source": "c4", "meta": {"source": "mine"}},
    ]
    given = rows_from_records(records, None, "f.jsonl", [1, 2, 3, 4], FieldMap(), "web")
    assert given["source"].tolist() == ["web", "social", "web", "web"] and given["drop_reason"].isna().all()
    assert [json.loads(m) if isinstance(m, str) else None for m in given["meta"]] == [
        {"source": "c4"},
        None,
        None,
        {"source": "mine", "field.source": "c4"},
    ]  # never over the record's own meta
    alone = rows_from_records(records, None, "f.jsonl", [1, 2, 3, 4], FieldMap(), None)
    assert alone["drop_reason"].tolist() == ["unknown_source", None, "unknown_source", "unknown_source"]
    assert "source 'c4' is not one of" in json.loads(alone["drop_detail"][0])["error"]


def test_a_source_in_other_case_is_that_source_and_a_number_gives_way() -> None:
    records = [
        {"id": "a", "text": "x", "source": " Code "},
        {"id": "b", "text": "y", "source": "WEB"},
        {"id": "c", "text": "z", "source": 12},
    ]
    given = rows_from_records(records, None, "f.jsonl", [1, 2, 3], FieldMap(), "social")
    assert given["source"].tolist() == ["code", "web", "social"] and given["drop_reason"].isna().all()
    assert json.loads(given["meta"][2]) == {"source": "12"}
    alone = rows_from_records(records, None, "f.jsonl", [1, 2, 3], FieldMap(), None)
    assert alone["drop_reason"].tolist() == [None, None, "wrong_type"]


@pytest.fixture(scope="module")
def web_rows() -> pd.DataFrame:
    """Real web rows with their ``source`` column of dataset names (three of each of four datasets, text only),
    and one more whose source is ``social``, a source of the recipe."""
    if not WEB.exists():
        pytest.skip(f"{WEB} is absent (set CURATION_SHARED_DATA)")
    df = pd.read_parquet(WEB, columns=["doc_id", "source", "url", "text", "meta"])
    df = df[df["text"].str.strip().str.len() > 200].drop_duplicates("url").sort_values("doc_id")
    picked = pd.concat(
        [df[df["source"] == s].head(3) for s in ("dolma_cc_raw_wet", "dolma_ccnet_head", "wcxb", "scrapinghub_aeb")]
    )
    social = df[df["source"] == "wcxb"].iloc[[3]].assign(source="social")
    rows = pd.concat([picked, social]).rename(columns={"doc_id": "id"}).reset_index(drop=True)
    assert not any("source" in json.loads(m) for m in rows["meta"] if isinstance(m, str))
    return rows


def _write(rows: pd.DataFrame, folder: Path, fmt: str) -> Path:
    folder.mkdir()
    if fmt == "jsonl":
        path = folder / "web.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in rows.to_dict("records")))
    else:
        path = folder / "web.parquet"
        pq.write_table(pa.Table.from_pandas(rows, preserve_index=False), path)
    return path


def _ingest(f: Path, out: Path, *given: str) -> int:
    """``curate ingest`` of ``f`` into ``out`` on one worker, whitespace tokens, with ``given``."""
    return main(
        [
            "ingest",
            "--input",
            str(f),
            "--output",
            str(out),
            "--workers",
            "1",
            "--quiet",
            "ingest.tokenizer=whitespace",
            *given,
        ]
    )


@pytest.mark.parametrize("fmt", ["jsonl", "parquet"])
@pytest.mark.parametrize("given", [["--source", "web"], ['ingest.inputs=[{match: "web.*", source: web}]']])
def test_real_web_rows_named_by_dataset_take_the_source_their_input_was_given(
    tmp_path, caplog, web_rows, fmt, given
) -> None:
    f = _write(web_rows, tmp_path / "raw", fmt)
    out = tmp_path / "out"
    with caplog.at_level(logging.WARNING):
        assert _ingest(f, out, *given) == 0
    docs = read_parts(out / "docs").set_index("doc_id")
    assert sorted(docs.index) == sorted(web_rows["id"])  # none dropped
    datasets = web_rows.set_index("id")["source"]
    assert docs["source"].to_dict() == {i: "social" if s == "social" else "web" for i, s in datasets.items()}
    meta = {i: json.loads(m) for i, m in docs["meta"].items()}
    assert {i: m.get("source") for i, m in meta.items()} == {
        i: None if s == "social" else s for i, s in datasets.items()
    }
    assert all(
        "warc_url" in meta[i] for i in datasets.index[datasets == "dolma_cc_raw_wet"]
    )  # the record's own meta kept
    stats = json.loads((out / "stats.json").read_text())
    assert stats["extra"][FIGURES] == {
        "documents": 12,
        "files": 1,
        "examples": {str(f): 12},
        "values": {"dolma_cc_raw_wet": 3, "dolma_ccnet_head": 3, "scrapinghub_aeb": 3, "wcxb": 3},
    }
    said = [r.getMessage() for r in caplog.records if NOTE in r.getMessage()]
    assert len(said) == 1 and "12 records of 1 file(s)" in said[0] and "wcxb=3" in said[0], said
    assert not [r for r in caplog.records if "could not be read as documents" in r.getMessage()]
    assert main(["verify", str(out)]) == 0


def test_with_no_source_given_a_dataset_name_is_still_unknown_source(tmp_path, caplog, web_rows) -> None:
    f = _write(web_rows, tmp_path / "raw", "jsonl")
    out = tmp_path / "out"
    with caplog.at_level(logging.WARNING):
        assert _ingest(f, out) == 0
    assert read_parts(out / "docs")["source"].tolist() == ["social"]
    ledger = read_parts(out / "ledger")
    assert set(ledger["reason"]) == {"unknown_source"} and len(ledger) == 12
    assert FIGURES not in json.loads((out / "stats.json").read_text())["extra"]
    warned = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert any("unknown_source=12" in m and "give --source or an ingest.inputs entry" in m for m in warned), warned
    assert not any(NOTE in m for m in warned)
