"""Input that ingest cannot read is refused before any output, or said; never dropped unsaid
(pure: discovery and planning, no Dask)."""

import bz2
import gzip
import json
import logging
import lzma
from pathlib import Path

import pandas as pd
import pytest

from curation.ingest.discover import InputError, find_inputs, scan_inputs
from curation.ingest.inputs import plan_inputs
from curation.ingest.jsonl_head import text_encoding
from curation.ingest.notices import duplicate_examples, duplicate_id_warning
from curation.ingest.unread import hint, kind

RECORDS = [{"id": f"d{i}", "text": f"document {i} with a few words", "source": "web"} for i in range(5)]
BODY = "".join(json.dumps(r) + "\n" for r in RECORDS)


@pytest.fixture
def folder(tmp_path):
    raw = tmp_path / "raw"
    raw.mkdir()
    (raw / "a.jsonl").write_text(BODY)
    return raw


@pytest.mark.parametrize(("name", "data", "says"), [
    ("b.jsonl.bz2", bz2.compress(BODY.encode()), "bzip2: recompress as gzip or zstd, e.g. bzip2 -dc b.jsonl.bz2 | gzip > b.jsonl.gz"),
    ("c.jsonl.xz", lzma.compress(BODY.encode()), "xz: recompress as gzip or zstd"),
    ("d.csv", b"id,text\n1,hello\n", ".csv: convert it to JSON Lines or Parquet"),
    ("e.arrow", b"ARROW1", ".arrow: convert it"),
    ("f.txt.gz", gzip.compress(b"plain text\n"), ".txt: convert it"),
    ("h.jsonl.zstd", b"x", "rename it to h.jsonl.zst (ingest reads .zst and .gz)"),
    ("g.parquet.gz", gzip.compress(b"PAR1"), "decompress it, e.g. gzip -d g.parquet.gz"),
])
def test_data_in_a_folder_that_ingest_cannot_read_stops_it_naming_the_file_and_the_fix(folder, name, data, says):
    (folder / name).write_bytes(data)
    with pytest.raises(InputError) as err:
        find_inputs([folder])
    message = str(err.value)
    assert f"1 file(s) in the input folders look like data ingest cannot read: {folder / name} ({says}" in message
    assert f"give only the files to read (e.g. --input '{folder}/**/*.jsonl')" in message
    with pytest.raises(InputError, match="unknown format"):  # named, it says what to do too
        find_inputs([folder / name])
    assert find_inputs([folder / "*.jsonl"]) == [(folder / "a.jsonl", "jsonl")]  # what the message says to do


def test_sidecars_pass_quietly_and_other_files_are_returned_to_be_said(folder, caplog):
    for name in ("_SUCCESS", "_committed_123", "LICENSE", "README.txt", "README.md", "notes.md", "SHA256SUMS",
                 "a.jsonl.sha256", "load_dataset.py", ".hidden.csv", "LICENSE-APACHE.txt", "README-zh.txt",
                 "THIRD_PARTY_NOTICES.txt", "requirements-dev.txt"):
        (folder / name).write_text("x\n")
    (folder / ".cache").mkdir()
    (folder / ".cache" / "x.csv").write_text("x\n")
    for bookkeeping in ("_delta_log", "_temporary"):  # Delta's and Spark's folders: JSON commits, half-written parts
        (folder / bookkeeping).mkdir()
        (folder / bookkeeping / "00000000000000000000.json").write_text('{"commitInfo": {}}\n')
    assert scan_inputs([folder]) == ([(folder / "a.jsonl", "jsonl")], [])
    for name in ("logo.png", "notes.yaml", "blob.gz", "d.xml", "CMakeLists.txt"):
        (folder / name).write_text("x\n")
    files, other = scan_inputs([folder])
    assert files == [(folder / "a.jsonl", "jsonl")] and [p.name for p in other] == ["CMakeLists.txt", "blob.gz", "d.xml", "logo.png", "notes.yaml"]
    with caplog.at_level(logging.WARNING):
        plan_inputs([folder], source="web")
    warned = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert warned == [f"ingest: passed over 5 file(s) in the input folders, of formats it does not read: {folder / 'CMakeLists.txt'}, "
                      f"{folder / 'blob.gz'}, {folder / 'd.xml'} and 2 more; ingest reads .jsonl/.json/.ndjson[.gz|.zst], "
                      ".parquet, .warc/.wet[.gz|.zst], .html or a datasets folder (convert any that hold documents)"]


def test_kinds_of_names():
    assert [kind(n) for n in ("_metadata", "CITATION.cff", "run.sh", "x.tar.gz", "x.zip", "x.warc.bz2", "page.html.zst", "x.bin")] == [
        "sidecar", "sidecar", "sidecar", "data", "data", "data", "data", "other"]
    assert hint("x.tar.gz") == "an archive: extract it" and hint("x.jsonl.snappy") == "snappy: recompress as gzip or zstd"


@pytest.mark.parametrize(("encoding", "bom", "says"), [
    ("utf-16", True, "is UTF-16LE text (with a byte order mark), not UTF-8: JSON Lines must be UTF-8; "
                     "convert it first (iconv -f UTF-16 -t UTF-8 < a.jsonl > a.utf8.jsonl)"),
    ("utf-16-le", False, "is UTF-16LE text (no byte order mark), not UTF-8: JSON Lines must be UTF-8; "
                         "convert it first (iconv -f UTF-16LE -t UTF-8 < a.jsonl > a.utf8.jsonl)"),
    ("utf-16-be", False, "is UTF-16BE text (no byte order mark)"),
    ("utf-32", True, "is UTF-32LE text (with a byte order mark)"),
    ("utf-32-le", False, "is UTF-32LE text (no byte order mark)"),
])
def test_utf16_and_utf32_jsonl_is_refused_with_the_iconv_command(tmp_path, encoding, bom, says):
    f = tmp_path / "a.jsonl"
    f.write_bytes(BODY.replace("document 1", "文書 1").encode(encoding))
    assert text_encoding(f.read_bytes())[1] is bom
    with pytest.raises(InputError) as err:
        plan_inputs([f], source="web")
    assert str(err.value).startswith(f"{f} {says}")


def test_compressed_utf16_says_to_decompress_first(tmp_path):
    f = tmp_path / "a.jsonl.gz"
    f.write_bytes(gzip.compress(BODY.encode("utf-16")))
    with pytest.raises(InputError, match=r"\(gzip -dc a.jsonl.gz \| iconv -f UTF-16 -t UTF-8 > a.utf8.jsonl\)"):
        plan_inputs([f], source="web")


def test_lone_cr_line_ends_are_refused_and_crlf_still_reads(tmp_path):
    from curation.ingest.readers import read_spec

    cr = tmp_path / "cr.jsonl"
    cr.write_bytes(BODY.replace("\n", "\r").encode())
    with pytest.raises(InputError, match=r"cr.jsonl: its lines end with a carriage return alone .* convert them to LF first "
                                         r"\(tr '\\r' '\\n' < cr.jsonl > cr.lf.jsonl\)"):
        plan_inputs([cr], source="web")
    crlf = tmp_path / "crlf.jsonl"
    crlf.write_bytes(BODY.replace("\n", "\r\n").encode())
    rows = pd.concat([read_spec(s, 10_000) for s in plan_inputs([crlf], source="web")])
    assert rows["doc_id"].tolist() == [r["id"] for r in RECORDS] and rows["drop_reason"].isna().all()


def test_a_crlf_cut_between_cr_and_lf_at_the_end_of_the_first_chunk_is_no_lone_cr(tmp_path):
    from curation.ingest.jsonl_head import _HEAD

    long = json.dumps({"id": "x", "text": "y" * (_HEAD - 20)})
    f = tmp_path / "long.jsonl"
    f.write_bytes((long + " " * (_HEAD - 1 - len(long)) + "\r\n" + json.dumps(RECORDS[0]) + "\r\n").encode())
    assert len(plan_inputs([f], source="web")) == 1


def test_datasets_folder_without_its_text_column_says_how_to_map_one(tmp_path):
    import datasets

    datasets.Dataset.from_dict({"doc": ["a"], "content": ["some text"]}).save_to_disk(str(tmp_path / "hf"))
    with pytest.raises(InputError, match=r"no text column 'text' nor HTML column 'html' \(columns: \['doc', 'content'\]\); "
                                         r"map one with ingest.fields.text=<column>"):
        plan_inputs([tmp_path / "hf"], source="web")
    assert len(plan_inputs([tmp_path / "hf"], source="web", fields={"text": "content"})) == 1


def test_duplicate_id_warning_counts_shows_ids_and_says_how_to_avoid_them(tmp_path):
    ledger = tmp_path / "ledger"
    ledger.mkdir()
    rows = [{"doc_id": f"{i}@b.parquet:{i + 1}", "reason": "duplicate_id",
             "detail": json.dumps({"original_id": str(i), "file": "b.parquet", "first_file": "a.parquet"})} for i in range(4)]
    pd.DataFrame([{"doc_id": "z", "reason": "empty_text", "detail": "{}"}, *rows]).to_parquet(ledger / "part-00000.parquet")
    stats = {"stage": "ingest", "in": {"documents": 10}, "dropped_by_reason": {"duplicate_id": {"documents": 4, "tokens": 9}}}
    assert duplicate_examples(ledger) == ["0", "1", "2"]
    message = duplicate_id_warning(stats, ledger)
    assert message.startswith("ingest: 4 of 10 documents dropped as duplicate_id: an earlier record (input order) has "
                              "the same id (e.g. '0', '1', '2'); the first occurrence keeps the id")
    assert str(ledger) in message and "ingest.fields.id=none" in message and "unique across files" in message
    assert duplicate_id_warning({**stats, "dropped_by_reason": {}}, ledger) is None
    assert duplicate_id_warning({**stats, "stage": "exact_dedup"}, ledger) is None
    assert "(e.g." not in duplicate_id_warning(stats, tmp_path / "nowhere")  # no ledger: the count alone


def test_lone_cr_after_a_first_record_longer_than_the_first_chunk_is_found(tmp_path):
    from curation.ingest.jsonl_head import _HEAD

    f = tmp_path / "long_cr.jsonl"
    f.write_bytes((json.dumps({"id": "x", "text": "y" * 2 * _HEAD, "source": "web"}) + "\r" + BODY.replace("\n", "\r")).encode())
    with pytest.raises(InputError, match="carriage return alone"):
        plan_inputs([f], source="web")


def test_an_input_list_inside_the_folder_it_lists_is_no_data_file(folder):
    (folder / "inputs.txt").write_text(".\n")
    assert find_inputs([Path(f"@{folder / 'inputs.txt'}")]) == [(folder / "a.jsonl", "jsonl")]
