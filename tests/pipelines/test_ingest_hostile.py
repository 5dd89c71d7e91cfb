"""Hostile input: each case gets a clear error or a ledger row, and nothing else is affected."""

import gzip
import json
import os

import pandas as pd
import pytest

from curation.ingest.inputs import InputError
from tests.helpers import read_parts
from tests.pipelines.test_ingest import _ingest, _write_jsonl


def test_truncated_gzip_keeps_what_was_read_and_ledgers_the_rest(tmp_path):
    payload = b"".join(json.dumps({"id": f"t{i}", "text": f"record {i} " * 50, "source": "web"}).encode() + b"\n" for i in range(3000))
    blob = gzip.compress(payload, mtime=0)
    f = tmp_path / "t.jsonl.gz"
    f.write_bytes(blob[: len(blob) * 2 // 3])
    good = _write_jsonl(tmp_path / "good.jsonl", [{"id": "g", "text": "unaffected", "source": "web"}])
    res = _ingest([f, good], tmp_path / "out")
    ledger = read_parts(tmp_path / "out" / "ledger")
    assert ledger["reason"].tolist() == ["truncated_input"]
    assert "later records could not be read" in json.loads(ledger["detail"].iloc[0])["error"]
    kept = read_parts(tmp_path / "out" / "docs")
    assert "g" in set(kept["doc_id"]) and len(kept) > 1000
    assert res.stats["in"]["documents"] == len(kept) + 1


def test_unknown_compression_and_missing_paths_are_clear_errors(tmp_path):
    f = tmp_path / "x.jsonl.gz"
    f.write_bytes(b"BZh91AY&SY not gzip")
    with pytest.raises(InputError, match="not gzip or zstd"):
        _ingest([f], tmp_path / "out")
    loop = tmp_path / "loop.jsonl"
    os.symlink(tmp_path / "loop2.jsonl", loop)
    os.symlink(loop, tmp_path / "loop2.jsonl")
    with pytest.raises(InputError, match="symlink loop"):
        _ingest([loop], tmp_path / "out")
    dangling = tmp_path / "dangling.jsonl"
    os.symlink(tmp_path / "nowhere.jsonl", dangling)
    with pytest.raises(InputError, match="dangling symlink"):
        _ingest([dangling], tmp_path / "out")
    assert not (tmp_path / "out").exists()


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads files whatever their mode")
def test_unreadable_file_is_a_clear_error(tmp_path):
    f = _write_jsonl(tmp_path / "a.jsonl", [{"text": "x", "source": "web"}])
    f.chmod(0)
    with pytest.raises(InputError, match="cannot be read"):
        _ingest([f], tmp_path / "out")


def test_input_list_cannot_escape_its_root(tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    _write_jsonl(root / "a.jsonl", [{"id": "a", "text": "inside", "source": "web"}])
    _write_jsonl(tmp_path / "secret.jsonl", [{"id": "s", "text": "outside", "source": "web"}])
    (root / "ok.txt").write_text("a.jsonl\n")
    _ingest(["@" + str(root / "ok.txt")], tmp_path / "out")
    assert read_parts(tmp_path / "out" / "docs")["doc_id"].tolist() == ["a"]
    (root / "bad.txt").write_text("a.jsonl\n../secret.jsonl\n")
    with pytest.raises(InputError, match="outside the input root"):
        _ingest(["@" + str(root / "bad.txt")], tmp_path / "out2")


def test_wrong_column_types_tiny_and_huge_documents(tmp_path):
    pd.DataFrame({"text": [1, 2], "id": ["n1", "n2"], "source": ["web", "web"]}).to_parquet(tmp_path / "ints.parquet")
    f = _write_jsonl(tmp_path / "a.jsonl", [
        {"id": "one", "text": "x", "source": "web"},
        {"id": "huge", "text": "y" * 25_000_000, "source": "web"},
        {"id": "list", "text": ["a", "b"], "source": "web"},
        {"id": "null", "text": None, "source": "web"},
    ])
    with f.open("a") as out:
        out.write('{"id": "cut", "text": "abc\n')
    _ingest([tmp_path / "ints.parquet", f], tmp_path / "out")
    ledger = read_parts(tmp_path / "out" / "ledger").set_index("doc_id")
    assert ledger.loc["n1", "reason"] == "wrong_type" and ledger.loc["list", "reason"] == "wrong_type"
    error = {doc: json.loads(detail)["error"] for doc, detail in ledger["detail"].items()}
    assert error["n1"] == "'text' is a number, not a string" and error["list"] == "'text' is an array, not a string"
    assert ledger.loc["null", "reason"] == "missing_text" and error["null"] == "'text' is null"
    assert [e for e in error.values() if e.startswith("Unterminated")] == ["Unterminated string starting at (column 23)"]
    assert ledger.loc["huge", "reason"] == "too_large"
    assert read_parts(tmp_path / "out" / "docs")["doc_id"].tolist() == ["one"]


@pytest.mark.parametrize("name", ["bom.jsonl", "bom.jsonl.gz"])
def test_a_utf8_byte_order_mark_and_crlf_line_ends_are_not_part_of_the_records(tmp_path, name):
    """Windows tools open files with EF BB BF and end lines with CRLF; the first record is still a
    record. The same bytes before a later record (files joined with ``cat``) are not part of it
    either: no JSON value starts with them."""
    lines = [json.dumps({"id": f"r{i}", "text": f"record {i}", "source": "web"}).encode() + b"\r" for i in range(4)]
    f = _write_jsonl(tmp_path / name, [b"\xef\xbb\xbf" + lines[0], lines[1], b"\xef\xbb\xbf" * 2 + lines[2], lines[3]])
    _ingest([f], tmp_path / "out")
    docs = read_parts(tmp_path / "out" / "docs")
    assert docs["doc_id"].tolist() == ["r0", "r1", "r2", "r3"]
    assert docs["text"].tolist() == ["record 0", "record 1", "record 2", "record 3"]
    ledger_dir = tmp_path / "out" / "ledger"
    assert not ledger_dir.exists() or len(read_parts(ledger_dir)) == 0


@pytest.mark.parametrize("name", ["data.json", "data.json.gz"])
def test_a_json_array_file_is_refused_with_how_to_convert_it(tmp_path, name):
    body = json.dumps([{"text": f"document {i}", "source": "web"} for i in range(3)], indent=2).encode()
    f = tmp_path / name
    f.write_bytes(gzip.compress(body) if name.endswith(".gz") else body)
    with pytest.raises(InputError, match=r"opens with '\[': a JSON array, not JSON Lines") as err:
        _ingest([f], tmp_path / "out")
    assert ("jq -c '.[]' data.json > data.jsonl" in str(err.value)) == (name == "data.json")
    assert not (tmp_path / "out").exists()


def test_a_pretty_printed_json_object_is_metadata_in_a_folder_and_refused_by_name(tmp_path, caplog):
    """A dataset's metadata.json (json.dump(..., indent=2)) in a data folder was read as JSON Lines:
    one malformed_json row per line of it; now it is passed over and named in the warning. Given by
    name, it is refused: it holds no records a line."""
    folder = tmp_path / "in"
    folder.mkdir()
    _write_jsonl(folder / "docs.jsonl", [{"id": f"d{i}", "text": f"document {i}", "source": "web"} for i in range(3)])
    (folder / "metadata.json").write_text(json.dumps({"name": "corpus", "license": "cc-by", "rows": 3}, indent=2))
    (folder / "one_line.json").write_text(json.dumps({"id": "o", "text": "a record a line is JSON Lines", "source": "web"}) + "\n")
    with caplog.at_level("WARNING"):
        res = _ingest([folder], tmp_path / "out")
    assert sorted(read_parts(tmp_path / "out" / "docs")["doc_id"]) == ["d0", "d1", "d2", "o"]
    assert read_parts(tmp_path / "out" / "ledger").empty and res.stats["in"]["documents"] == 4
    assert "metadata.json (one JSON object over many lines, not JSON Lines: metadata?)" in caplog.text
    with pytest.raises(InputError, match=r"metadata.json opens with a line of '\{' alone: one JSON object written over many lines"):
        _ingest([folder / "metadata.json"], tmp_path / "out2")
    assert not (tmp_path / "out2").exists()


def test_a_nested_text_field_says_fields_are_read_at_the_top_level(tmp_path):
    f = _write_jsonl(tmp_path / "a.jsonl", [{"data": {"body": "nested text"}, "source": "web"}])
    with pytest.raises(InputError, match=r"fields are read at the top level only: flatten the records first \(jq -c '\{text: \.data\.body, source\}'\)"):
        _ingest([f], tmp_path / "out", ["ingest.fields.text=data.body"])


def test_an_empty_datasets_split_is_read_as_empty(tmp_path, caplog):
    """datasets saves a split of 0 rows with no .arrow file and cannot load it (IndexError): ingest
    crashed with exit 70 on a DatasetDict with an empty validation split. It reads as empty, with a
    warning, and the other splits are read."""
    import datasets

    dd = datasets.DatasetDict({"train": datasets.Dataset.from_dict({"text": ["kept text", "more text"], "id": ["t1", "t2"]}),
                               "validation": datasets.Dataset.from_dict({"text": [], "id": []})})
    dd.save_to_disk(str(tmp_path / "hf"))
    with caplog.at_level("WARNING"):
        res = _ingest([tmp_path / "hf"], tmp_path / "out", ["ingest.source=web"])
    assert sorted(read_parts(tmp_path / "out" / "docs")["doc_id"]) == ["t1", "t2"]
    assert res.stats["in"]["documents"] == 2 and "is an empty dataset (0 rows): no documents" in caplog.text


def test_a_mapping_to_a_column_the_file_lacks_is_said(tmp_path, caplog):
    """ingest.fields.id=uuid for a column uid left every id a hash, and fields.repo=repo_name every
    repo empty, without a word; the defaults and the documented none are not said."""
    import curation.ingest.notices as notices

    notices._SAID.clear()
    pd.DataFrame({"content": ["def f(): pass"], "uid": ["u1"], "repo": ["o/r"]}).to_parquet(tmp_path / "c.parquet")
    with caplog.at_level("WARNING"):
        _ingest([tmp_path / "c.parquet"], tmp_path / "out", ["ingest.source=code", "ingest.fields.text=content",
                                                            "ingest.fields.id=uuid", "ingest.fields.repo=repo_name"])
    assert "has no column 'uuid', which ingest.fields.id names: its id is left empty" in caplog.text
    assert "has no column 'repo_name', which ingest.fields.repo names" in caplog.text
    assert "ingest.fields.url" not in caplog.text and "ingest.fields.path" not in caplog.text  # defaults absent: normal
    caplog.clear()
    notices._SAID.clear()
    with caplog.at_level("WARNING"):
        _ingest([tmp_path / "c.parquet"], tmp_path / "out2", ["ingest.source=code", "ingest.fields.text=content", "ingest.fields.id=none"])
    assert "has no column" not in caplog.text


def test_meta_is_strict_json_when_a_column_has_gaps(tmp_path):
    """A float column with gaps put NaN into meta, which strict JSON readers refuse."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.table({"text": ["one text", "two text"], "meta": [{"k": 1}, {"k": 2}], "score": [0.5, float("nan")]}),
                   tmp_path / "f.parquet")
    _ingest([tmp_path / "f.parquet"], tmp_path / "out", ["ingest.source=web"])
    metas = [json.loads(m, parse_constant=lambda c: pytest.fail(f"meta holds {c}")) for m in read_parts(tmp_path / "out" / "docs")["meta"]]
    assert sorted(m["score"] is None for m in metas) == [False, True]


def test_a_git_lfs_pointer_says_to_fetch_the_data(tmp_path):
    """A .parquet that is a Git LFS pointer (a clone without `git lfs pull`) said "check the file's
    permissions and format"."""
    f = tmp_path / "d.parquet"
    f.write_text("version https://git-lfs.github.com/spec/v1\noid sha256:" + "0" * 64 + "\nsize 12345\n")
    with pytest.raises(InputError, match=r"it is a Git LFS pointer, not the data: fetch it \(git lfs pull\)"):
        _ingest([f], tmp_path / "out")


def test_a_source_id_or_path_that_is_no_string_is_a_ledger_row(tmp_path):
    """A source of another type crashed ingest (exit 70, Arrow's 'Expected bytes, got a int'); an id,
    url or path that is an object or array was kept as its Python repr ("{'x': 1}")."""
    f = _write_jsonl(tmp_path / "a.jsonl", [
        {"id": "ok", "text": "fine text", "source": "web"},
        {"id": "num", "text": "x", "source": 5},
        {"id": "arr", "text": "x", "source": ["web"]},
        {"id": {"x": 1}, "text": "x", "source": "web"},
        {"id": "path", "text": "x", "source": "web", "path": ["x"], "repo": 123},
        {"id": "url", "text": "x", "source": "web", "url": {"a": 1}},
    ])
    _ingest([f], tmp_path / "out")
    ledger = read_parts(tmp_path / "out" / "ledger")
    errors = sorted(json.loads(d)["error"] for d in ledger["detail"])
    assert set(ledger["reason"]) == {"wrong_type"} and errors == [
        "'id' is an object, not a string", "'path' is an array, not a string", "'source' is a number, not a string",
        "'source' is an array, not a string", "'url' is an object, not a string"]
    assert read_parts(tmp_path / "out" / "docs")["doc_id"].tolist() == ["ok"]


def test_a_page_nested_too_deep_is_no_content_at_once(tmp_path):
    """Text extraction is quadratic in nesting (200k nested divs: 505 s for a page); past
    curation.ingest.extract.MAX_DEPTH a page is no content, ledgered with the limit, in well under a
    second; so is a page of <div/> (the parser ignores the slash: 80k of them took minutes) and one that
    makes the parser reopen formatting elements past MAX_REOPENED."""
    import time

    deep = tmp_path / "deep.html"
    deep.write_text("<html><body>" + "<div>" * 30_000 + "hidden text " * 100 + "</div>" * 30_000 + "</body></html>")
    slashed = tmp_path / "slashed.html"
    slashed.write_text("<html><body>" + "<div/>" * 80_000 + "hidden text</body></html>")
    reopened = tmp_path / "reopened.html"  # 9 KB the parser makes 401k elements of: each <p> reopens 400 <b>
    reopened.write_text("<html><body><p>" + "".join(f"<b id={i}>" for i in range(400)) + "<p>x" * 1000 + "</body></html>")
    fine = tmp_path / "fine.html"
    fine.write_text("<html><body><article>" + "<p>A real paragraph of words about water pipes.</p>" * 50 + "</article></body></html>")
    from curation.ingest.extract import extract_page

    started = time.process_time()
    assert extract_page(deep.read_text(), "resiliparse_routed")[0] == ""
    assert extract_page(slashed.read_text(), "resiliparse_routed")[0] == ""
    assert time.process_time() - started < 1.0  # ~9 s and minutes of extraction before the guard
    _ingest([deep, slashed, reopened, fine], tmp_path / "out")
    ledger = read_parts(tmp_path / "out" / "ledger")
    assert ledger["reason"].tolist() == ["extraction_empty"] * 3
    assert {json.loads(d)["error"] for d in ledger["detail"]} == {
        "page nests more than 5,000 elements deep or reopens more than 300,000 formatting elements "
        "(MAX_DEPTH, MAX_REOPENED): not extracted"}
    assert len(read_parts(tmp_path / "out" / "docs")) == 1


@pytest.mark.parametrize("first", [True, False])
def test_json_nested_deeper_than_the_parser_goes_is_a_ledger_row(tmp_path, first):
    """1,000 nested objects crashed ingest (RecursionError, exit 70), on the first line or a later one;
    a deeply nested `meta` string (Parquet) is kept as the text it is."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    deep = b'{"id": "deep", "text": "t", "m": ' + b'{"a": ' * 5000 + b"1" + b"}" * 5000 + b"}"
    arrays = b'{"id": "arr", "text": "t", "m": ' + b"[" * 3000 + b"]" * 3000 + b"}"
    ok = {"id": "ok", "text": "fine text", "source": "web"}
    f = _write_jsonl(tmp_path / "deep.jsonl", [deep, ok, arrays] if first else [ok, deep, arrays])
    meta = '{"a": ' * 5000 + "1" + "}" * 5000
    pq.write_table(pa.table({"id": ["pm"], "text": ["parquet text"], "source": ["web"], "meta": [meta]}), tmp_path / "m.parquet")
    res = _ingest([f, tmp_path / "m.parquet"], tmp_path / "out")
    ledger = read_parts(tmp_path / "out" / "ledger")
    assert ledger["reason"].tolist() == ["malformed_json", "malformed_json"]
    assert [json.loads(d)["line"] for d in ledger["detail"]] == ([1, 3] if first else [2, 3])
    assert "nested too deeply to parse" in json.loads(ledger["detail"].iloc[0])["error"]
    docs = read_parts(tmp_path / "out" / "docs").set_index("doc_id")
    assert sorted(docs.index) == ["ok", "pm"] and json.loads(docs.loc["pm", "meta"]) == {"meta": meta}
    assert res.stats["in"]["documents"] == 4


def test_a_dangling_link_to_data_in_an_input_folder_stops_the_run(tmp_path):
    """A git-annex or HF cache folder whose data was not fetched: the link was skipped in silence."""
    folder = tmp_path / "in"
    folder.mkdir()
    _write_jsonl(folder / "data.jsonl", [{"id": "a", "text": "kept", "source": "web"}])
    (folder / "README").symlink_to(tmp_path / "nowhere" / "README")  # a sidecar's link: passed over
    (folder / "gone.jsonl").symlink_to(tmp_path / "nowhere" / "x.jsonl")
    with pytest.raises(InputError, match=r"gone.jsonl is a link to .*nowhere/x.jsonl, which does not exist: fetch the data"):
        _ingest([folder], tmp_path / "out")
    (folder / "gone.jsonl").unlink()
    _ingest([folder], tmp_path / "out")
    assert read_parts(tmp_path / "out" / "docs")["doc_id"].tolist() == ["a"]


def test_the_jq_command_for_a_jsonl_holding_an_array_writes_another_file(tmp_path):
    """It said `jq -c '.[]' a.jsonl > a.jsonl`, which empties the input before jq reads it."""
    f = tmp_path / "a.jsonl"
    f.write_text(json.dumps([{"text": "x"}], indent=2))
    with pytest.raises(InputError, match=r"jq -c '\.\[\]' a\.jsonl > a\.lines\.jsonl\)"):
        _ingest([f], tmp_path / "out")


def test_a_parquet_file_of_many_tiny_row_groups_is_read_in_block_sized_partitions(tmp_path):
    """One partition a row group: 500 one-row groups took 140 s (and every later stage had 500 partitions)."""
    import time

    import pyarrow as pa
    import pyarrow.parquet as pq

    from curation.ingest.inputs import plan_inputs

    n = 2000
    pq.write_table(pa.table({"id": [f"r{i}" for i in range(n)], "text": [f"row {i} text" if i != 7 else " " for i in range(n)],
                             "source": ["web"] * n}), tmp_path / "a.parquet", row_group_size=1)
    assert len(plan_inputs([tmp_path / "a.parquet"])) == 1
    started = time.monotonic()
    res = _ingest([tmp_path / "a.parquet"], tmp_path / "out")
    assert time.monotonic() - started < 60
    docs = read_parts(tmp_path / "out" / "docs")
    assert len(docs) == n - 1 and res.stats["in"]["documents"] == n
    ledger = read_parts(tmp_path / "out" / "ledger")
    assert ledger["reason"].tolist() == ["empty_text"] and json.loads(ledger["detail"].iloc[0])["line"] == 8


def test_a_corrupt_page_of_a_parquet_row_group_is_a_ledger_row_and_the_other_groups_are_read(tmp_path):
    """A damaged data page crashed ingest (OSError from the worker, exit 70)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    f = tmp_path / "a.parquet"
    pq.write_table(pa.table({"id": [f"r{i}" for i in range(1000)], "text": [f"document {i} " * 20 for i in range(1000)]}),
                   f, row_group_size=100, compression="snappy", use_dictionary=False)
    col = pq.ParquetFile(f).metadata.row_group(3).column(1)
    data = bytearray(f.read_bytes())
    for i in range(col.data_page_offset, col.data_page_offset + 12):  # the page's header
        data[i] ^= 0xFF
    f.write_bytes(bytes(data))
    res = _ingest([f], tmp_path / "out", ["ingest.source=web"])
    docs = read_parts(tmp_path / "out" / "docs")
    assert len(docs) == 900 and not set(docs["doc_id"]) & {f"r{i}" for i in range(300, 400)}
    ledger = read_parts(tmp_path / "out" / "ledger")
    assert ledger["reason"].tolist() == ["truncated_input"]
    detail = json.loads(ledger["detail"].iloc[0])
    assert detail["line"] == 301 and detail["rows"] == 100 and "row group 3 (100 rows from row 301) cannot be read" in detail["error"]
    assert res.stats["in"]["documents"] == 901  # the unread group is one row, as a cut JSONL file's rest


def test_a_file_compressed_twice_is_refused_and_one_of_nothing_is_said(tmp_path, caplog):
    """gzip inside gzip became a few invalid_utf8 rows for a file of 20 records; a .gz of nothing gave
    no documents and no word (a 0-byte file is said)."""
    data = b"".join(json.dumps({"id": f"r{i}", "text": f"t {i}", "source": "web"}).encode() + b"\n" for i in range(20))
    twice = tmp_path / "twice.jsonl.gz"
    twice.write_bytes(gzip.compress(gzip.compress(data)))
    with pytest.raises(InputError, match=r"twice.jsonl.gz decompresses to gzip data again \(compressed twice\).*gzip -dc twice.jsonl.gz \| gzip -dc \| gzip > twice.once.jsonl.gz"):
        _ingest([twice], tmp_path / "out")
    empty = tmp_path / "empty.jsonl.gz"
    empty.write_bytes(gzip.compress(b""))
    good = _write_jsonl(tmp_path / "good.jsonl", [{"id": "g", "text": "kept", "source": "web"}])
    with caplog.at_level("WARNING"):
        _ingest([empty, good], tmp_path / "out2")
    assert "empty.jsonl.gz decompresses to nothing (0 bytes): no documents" in caplog.text
    assert read_parts(tmp_path / "out2" / "docs")["doc_id"].tolist() == ["g"]


def test_a_held_out_split_and_hive_folders_are_said(tmp_path, caplog):
    """A DatasetDict's test split, Hugging Face's test-00000-of-00001.parquet and Hive folders
    (lang=en/) were read without a word: the test set as training data, the folder values lost.
    Both are read as before, and said."""
    import datasets

    datasets.DatasetDict({"train": datasets.Dataset.from_dict({"text": ["train text"], "id": ["t1"]}),
                          "test": datasets.Dataset.from_dict({"text": ["test text"], "id": ["x1"]})}).save_to_disk(str(tmp_path / "hf"))
    (tmp_path / "hub").mkdir()
    pd.DataFrame({"text": ["hub test text"], "id": ["h1"]}).to_parquet(tmp_path / "hub" / "test-00000-of-00001.parquet")
    pd.DataFrame({"text": ["hub train text"], "id": ["h2"]}).to_parquet(tmp_path / "hub" / "train-00000-of-00001.parquet")
    (tmp_path / "hive" / "lang=en").mkdir(parents=True)
    _write_jsonl(tmp_path / "hive" / "lang=en" / "a.jsonl", [{"id": "e1", "text": "hive text"}])
    with caplog.at_level("WARNING"):
        _ingest([tmp_path / "hf", tmp_path / "hub", tmp_path / "hive"], tmp_path / "out", ["ingest.source=web"])
    assert sorted(read_parts(tmp_path / "out" / "docs")["doc_id"]) == ["e1", "h1", "h2", "t1", "x1"]  # read as before
    (held,) = [r.message for r in caplog.records if "held-out split" in r.message]
    assert held.startswith("ingest: 2 input file(s)") and "test-00000-of-00001.parquet" in held and str(tmp_path / "hf" / "test") in held
    assert "train-00000" not in held
    assert any("Hive partitions (lang=…)" in r.message for r in caplog.records)
    caplog.clear()
    with caplog.at_level("WARNING"):
        _ingest([tmp_path / "hub" / "train-00000-of-00001.parquet"], tmp_path / "out2", ["ingest.source=web"])
    assert "held-out" not in caplog.text and "Hive" not in caplog.text
