"""A record's ``meta`` is bounded (``ingest.max_meta_chars``): past the bound its largest fields are left
out and named in ``meta.meta_left_out``, counted in ``stats.json`` and said once; the document is kept.
A JSON line that writes a key twice keeps the last value, as before, and is counted and said once, naming
the key and the file. The warning about records ingest could not use counts ``too_large`` too."""

from __future__ import annotations

import gzip
import json
import logging
import os
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from pipelines.cli import main as curate
from tests.helpers import read_parts

DATA = Path(os.environ.get("CURATION_SHARED_DATA") or Path(__file__).resolve().parents[2].parent / "shared" / "data")
WEB = DATA / "web" / "web_docs.parquet"
NOTES = DATA / "zh" / "zh_tech_notes.jsonl.gz"


def _ingest(out: Path, f: Path, *extra: str) -> int:
    return curate(
        [
            "ingest",
            "--input",
            str(f),
            "--output",
            str(out),
            "--source",
            "web",
            "--workers",
            "1",
            "--quiet",
            "ingest.tokenizer=whitespace",
            *extra,
        ]
    )


def _warned(caplog, words: str) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelname == "WARNING" and words in r.getMessage()]


@pytest.mark.parametrize("fmt", ["jsonl", "parquet"])
def test_meta_over_the_bound_leaves_its_largest_fields_out_names_them_and_keeps_the_document(tmp_path, caplog, fmt):
    big = "x" * 3_000_000  # over the default bound, 1,000,000 characters
    rows = [
        {"id": "big", "text": "a page with a huge field", "title": "kept", "raw": big, "tags": "t" * 500},
        {"id": "small", "text": "a page with small fields", "title": "kept too", "raw": "r", "tags": "t"},
    ]
    f = tmp_path / f"in.{fmt}"
    if fmt == "jsonl":
        f.write_text("".join(json.dumps(r) + "\n" for r in rows))
    else:
        pq.write_table(pa.Table.from_pylist(rows), f)
    with caplog.at_level(logging.WARNING):
        assert _ingest(tmp_path / "out", f) == 0
    docs = read_parts(tmp_path / "out" / "docs").set_index("doc_id")
    assert sorted(docs.index) == ["big", "small"]  # none dropped
    meta = {i: json.loads(m) for i, m in docs["meta"].items()}
    assert meta["big"] == {"title": "kept", "tags": "t" * 500, "meta_left_out": {"raw": len(big) + 9}}  # '"raw": "…"'
    assert meta["small"] == {"title": "kept too", "raw": "r", "tags": "t"}
    stats = json.loads((tmp_path / "out" / "stats.json").read_text())
    assert stats["extra"]["meta_left_out"] == {
        "documents": 1,
        "files": 1,
        "values": {"raw": 1},
        "examples": {str(f): 1},
        "max_meta_chars": 1_000_000,
    }
    said = _warned(caplog, "ingest.max_meta_chars")
    assert len(said) == 1 and "raw=1" in said[0] and "1,000,000 characters" in said[0] and str(f) in said[0], said
    assert curate(["verify", str(tmp_path / "out")]) == 0
    caplog.clear()
    with caplog.at_level(logging.WARNING):  # a bound of its own: the big record's tags go too, after its raw
        assert _ingest(tmp_path / "out2", f, "ingest.max_meta_chars=100") == 0
    meta = {i: json.loads(m) for i, m in read_parts(tmp_path / "out2" / "docs").set_index("doc_id")["meta"].items()}
    assert meta["big"] == {"title": "kept", "meta_left_out": {"raw": len(big) + 9, "tags": 510}}
    assert meta["small"] == {"title": "kept too", "raw": "r", "tags": "t"}
    said = _warned(caplog, "ingest.max_meta_chars")
    assert len(said) == 1 and "(100 characters)" in said[0] and "[raw, tags]=1" in said[0], said


def test_real_meta_is_kept_whole_under_the_default_and_left_out_under_a_small_bound(tmp_path, caplog):
    """The real web rows' meta (their largest: 1,578 characters, the ``with_snippets`` of WCXB pages) is far
    under the default bound; at 1,000 characters the snippets are what is left out."""
    if not WEB.exists():
        pytest.skip(f"{WEB} is absent (set CURATION_SHARED_DATA)")
    rows = pd.read_parquet(WEB, columns=["doc_id", "source", "text", "with_snippets", "without_snippets", "meta"])
    rows = rows[(rows["source"] == "wcxb") & (rows["text"].str.len() > 200)].sort_values("doc_id").head(20)
    f = tmp_path / "web.parquet"
    pq.write_table(pa.Table.from_pandas(rows.rename(columns={"doc_id": "id"}), preserve_index=False), f)
    assert _ingest(tmp_path / "out", f) == 0
    assert "meta_left_out" not in json.loads((tmp_path / "out" / "stats.json").read_text())["extra"]
    whole = {i: json.loads(m) for i, m in read_parts(tmp_path / "out" / "docs").set_index("doc_id")["meta"].items()}
    assert len(whole) == 20 and all("with_snippets" in m for m in whole.values())
    with caplog.at_level(logging.WARNING):
        assert _ingest(tmp_path / "small", f, "ingest.max_meta_chars=1000") == 0
    bounded = {i: json.loads(m) for i, m in read_parts(tmp_path / "small" / "docs").set_index("doc_id")["meta"].items()}
    over = {i for i, m in whole.items() if len(json.dumps(m, ensure_ascii=False, sort_keys=True)) > 1000}
    assert over and {i for i, m in bounded.items() if "meta_left_out" in m} == over
    for i in over:
        assert len(json.dumps(bounded[i], ensure_ascii=False)) <= 1000
        assert {k: v for k, v in bounded[i].items() if k != "meta_left_out"} == {
            k: v for k, v in whole[i].items() if k not in bounded[i]["meta_left_out"]
        }
    stats = json.loads((tmp_path / "small" / "stats.json").read_text())["extra"]["meta_left_out"]
    assert stats["documents"] == len(over) and len(_warned(caplog, "ingest.max_meta_chars")) == 1


def test_a_key_written_twice_keeps_its_last_value_and_is_counted_and_said_once_naming_key_and_file(tmp_path, caplog):
    if not NOTES.exists():
        pytest.skip(f"{NOTES} is absent (set CURATION_SHARED_DATA)")
    with gzip.open(NOTES, "rt", encoding="utf-8") as fh:
        lines = fh.read().splitlines()[:6]
    # a writer that appended a text it already wrote: the second text is the record's, as JSON readers read it
    lines[1] = lines[1][:-1] + ', "text": "the second text of record two"}'
    lines[3] = lines[3][:-1] + ', "origin": "again", "meta": {"k": 1, "k": 2}}'
    f = tmp_path / "notes.jsonl"
    f.write_text("\n".join(lines) + "\n")
    with caplog.at_level(logging.WARNING):
        assert _ingest(tmp_path / "out", f) == 0
    first = [json.loads(x) for x in lines]
    by_id = read_parts(tmp_path / "out" / "docs").set_index("doc_id")
    assert len(by_id) == 6 and by_id.loc[first[1]["id"], "text"] == "the second text of record two"
    assert json.loads(by_id.loc[first[3]["id"], "meta"])["origin"] == "again"
    stats = json.loads((tmp_path / "out" / "stats.json").read_text())["extra"]
    assert stats["repeated_keys"] == {
        "documents": 2,
        "files": 1,
        "values": {"k, origin": 1, "text": 1},
        "examples": {str(f): 2},
    }
    said = _warned(caplog, "write a key twice")
    assert len(said) == 1 and "text=1" in said[0] and str(f) in said[0] and "last value" in said[0], said
    assert curate(["verify", str(tmp_path / "out")]) == 0


def test_the_warning_about_records_not_used_counts_too_large(tmp_path, caplog):
    f = tmp_path / "in.jsonl"
    rows = [{"id": "ok", "text": "a short text"}, {"id": "long", "text": "word " * 400}, {"id": "none"}]
    f.write_text("".join(json.dumps(r) + "\n" for r in rows))
    with caplog.at_level(logging.WARNING):
        assert _ingest(tmp_path / "out", f, "ingest.max_chars=1000") == 0
    said = _warned(caplog, "could not be read as documents")
    assert (
        len(said) == 1 and "2 of 3 records" in said[0] and "too_large=1" in said[0] and "missing_text=1" in said[0]
    ), said
    assert "ingest.max_chars" in said[0]  # what to change


def test_meta_of_many_small_fields_stays_within_the_bound_and_the_warning_brackets_a_record_s_fields():
    """Each field left out used to add a note entry about as large as itself, so meta stayed ~16x the bound."""
    from curation.ingest.language_field import figures_head
    from curation.ingest.record_meta import bounded_meta

    fields = {f"k{i:07d}": i for i in range(20_000)}
    text, names = bounded_meta(fields, 10_000)
    assert len(text) <= 10_000
    note = json.loads(text)["meta_left_out"]
    assert len(note) == 101 and sum(note.values()) == sum(len(json.dumps({k: v})) - 2 for k, v in fields.items() if k not in json.loads(text))
    text, _ = bounded_meta(fields, 200)  # the note of 100 names is over the bound too: its summary alone
    assert json.loads(text) == {"meta_left_out": {"… (20000 more fields)": sum(len(json.dumps({k: v})) - 2 for k, v in fields.items())}}
    stats = {"stage": "ingest", "extra": {"meta_left_out": {"documents": 2, "files": 1, "examples": ["a.jsonl"],
                                                            "values": {"raw, raw2": 1, "big": 1}}}}
    assert figures_head(stats, "meta_left_out")[1] == "big=1, [raw, raw2]=1"
