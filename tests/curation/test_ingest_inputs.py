"""Input planning and partition readers (pure: no Dask)."""

import gzip
import json
from pathlib import Path

import pytest

from curation.ingest.inputs import InputError, plan_inputs, read_list
from curation.ingest.readers import read_spec


def _jsonl(path, n, pad=0):
    path.write_text("".join(json.dumps({"id": f"d{i}", "text": f"doc {i} " + "x" * pad}) + "\n" for i in range(n)))
    return path


def test_big_jsonl_is_split_on_line_boundaries_and_read_back_whole(tmp_path):
    f = _jsonl(tmp_path / "a.jsonl", 3000, pad=400)  # ~1.2 MB > 1 MB blocks
    specs = plan_inputs([f], blocksize_mb=1, source="web")
    assert len(specs) == 2 and specs[0].end == specs[1].start and specs[1].first_line > 1
    frames = [read_spec(s, 10_000) for s in specs]
    ids = [i for df in frames for i in df["doc_id"]]
    assert ids == [f"d{i}" for i in range(3000)]
    assert frames[1]["_line"].iloc[0] == specs[1].first_line


def test_entries_set_source_and_fields_per_file(tmp_path):
    (tmp_path / "code.jsonl").write_text(json.dumps({"content": "x = 1", "id": "c"}) + "\n")
    _jsonl(tmp_path / "web.jsonl", 2)
    specs = plan_inputs([tmp_path], source="web", inputs=[{"match": "code*", "source": "code", "fields": {"text": "content"}}])
    by_name = {s.path.name: s for s in specs}
    assert by_name["code.jsonl"].source == "code" and by_name["code.jsonl"].fields.text == "content"
    assert by_name["web.jsonl"].source == "web" and by_name["web.jsonl"].fields.text == "text"
    assert read_spec(by_name["code.jsonl"], 100)["text"].tolist() == ["x = 1"]


def test_a_truncated_gzip_keeps_what_was_read_and_ledgers_the_rest(tmp_path):
    blob = gzip.compress("".join(json.dumps({"id": f"d{i}", "text": "t" * 50}) + "\n" for i in range(2000)).encode())
    (tmp_path / "t.jsonl.gz").write_bytes(blob[: len(blob) // 2])
    df = read_spec(plan_inputs([tmp_path / "t.jsonl.gz"], source="web")[0], 1000)
    assert df["drop_reason"].iloc[-1] == "truncated_input" and df["drop_reason"].iloc[:-1].isna().all()


def test_unusable_input_fails_before_anything_is_read(tmp_path):
    (tmp_path / "x.csv").write_text("a,b\n")
    with pytest.raises(InputError, match="unknown format"):
        plan_inputs([tmp_path / "x.csv"])
    (tmp_path / "list.txt").write_text("../outside.jsonl\n")
    with pytest.raises(InputError, match="outside the input root"):
        read_list(Path(f"@{tmp_path / 'list.txt'}"))
