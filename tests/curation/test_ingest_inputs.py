"""Input planning and partition readers (pure: no Dask)."""

import gzip
import json
from pathlib import Path

import pandas as pd
import pytest

from curation.ingest.discover import read_list
from curation.ingest.inputs import InputError, block_bytes, plan_inputs
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


@pytest.mark.parametrize("name", ["a.jsonl.gz", "a.jsonl.zst"])
def test_compressed_jsonl_is_cut_into_chunks_that_read_back_as_one_partition(tmp_path, name):
    import zstandard

    lines = [json.dumps({"id": f"d{i}", "text": f"doc {i} " + "y" * (i % 700)}) for i in range(9000)]
    lines[4321] = "{broken json"
    lines[7000] = ""
    data = ("\n".join(lines) + "\n").encode()  # ~3.2 MB decompressed
    (tmp_path / name).write_bytes(gzip.compress(data, mtime=0) if name.endswith(".gz") else zstandard.ZstdCompressor().compress(data))
    whole = plan_inputs([tmp_path / name], source="web", blocksize_mb=128, min_block_mb=64)
    chunks = plan_inputs([tmp_path / name], source="web", blocksize_mb=1, min_block_mb=1)
    assert len(whole) == 1 and whole[0].end == -1 and len(chunks) == 4
    assert [s.start for s in chunks[1:]] == [s.end for s in chunks[:-1]] and chunks[-1].end == len(data)
    one = read_spec(whole[0], 100_000)
    split = pd.concat([read_spec(s, 100_000) for s in chunks], ignore_index=True)
    pd.testing.assert_frame_equal(one, split)  # the same rows, ids, line numbers and ledger rows, in order
    bad = split[split["drop_reason"].notna()]
    assert bad["drop_reason"].tolist() == ["malformed_json"] and bad["_line"].tolist() == [4322]


def test_a_large_parquet_row_group_is_cut_into_row_ranges(tmp_path):
    df = pd.DataFrame({"text": [f"doc {i} " + "w" * 1000 for i in range(3000)]})  # ~3 MB, one row group
    df.to_parquet(tmp_path / "a.parquet", row_group_size=10_000)
    whole = plan_inputs([tmp_path / "a.parquet"], source="web", min_block_mb=64)
    parts = plan_inputs([tmp_path / "a.parquet"], source="web", blocksize_mb=1, min_block_mb=1)
    assert len(whole) == 1 and whole[0].rows == (0, -1) and len(parts) == 3
    one = read_spec(whole[0], 100_000)
    pd.testing.assert_frame_equal(one, pd.concat([read_spec(s, 100_000) for s in parts], ignore_index=True))
    assert one["_line"].tolist() == list(range(1, 3001))


def test_block_size_comes_from_the_inputs_total_within_its_bounds():
    mb = 1 << 20
    assert block_bytes(3 * mb) == 16 * mb  # a small corpus: the min block (the sample keeps one partition a file)
    assert block_bytes(320 * mb) == 20 * mb  # total / min_partitions
    assert block_bytes(100_000 * mb) == 128 * mb  # blocksize_mb is the upper bound
    assert block_bytes(160 * mb, blocksize_mb=4) == 4 * mb  # and wins over min_block_mb
    assert block_bytes(160 * mb, min_partitions=4, blocksize_mb=32) == 32 * mb


def test_plan_splits_a_small_corpus_into_near_equal_chunks(tmp_path):
    files = [_jsonl(tmp_path / f"{n}.jsonl", n * 300, pad=1000) for n in (1, 5, 12)]  # ~0.3, 1.5, 3.6 MB
    specs = plan_inputs(files, source="web", min_block_mb=1, min_partitions=4)  # block = max(1 MB, 5.4 MB / 4)
    counts = {f.name: sum(s.path == f for s in specs) for f in files}
    assert counts == {"1.jsonl": 1, "5.jsonl": 2, "12.jsonl": 3}
    sizes = [s.end - s.start for s in specs if s.path.name == "12.jsonl"]
    assert max(sizes) - min(sizes) < 2 * 1024  # balanced within the file: equal up to a line


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
