"""Ingest: formats, field mapping, sources, and a ledger row (or a clear error) for each bad input."""

import gzip
import json
from pathlib import Path

import pandas as pd
import pytest

from curation.config import ConfigError
from curation.ingest.inputs import InputError
from pipelines.recipe import load_recipe
from pipelines.runner import run_stage
from tests.helpers import read_parts


def _ingest(inputs, out, overrides=()):
    import dask

    rec = load_recipe(None, ["ingest.tokenizer=whitespace", *overrides])
    with dask.config.set({"scheduler": "synchronous", "dataframe.convert-string": False}):
        return run_stage("ingest", rec, stage_dir=out, inputs=[str(p) for p in inputs], quiet=True)


def _write_jsonl(path: Path, lines: list) -> Path:
    data = b"".join((ln if isinstance(ln, bytes) else json.dumps(ln).encode()) + b"\n" for ln in lines)
    path.write_bytes(gzip.compress(data, mtime=0) if path.name.endswith(".gz") else data)
    return path


def test_each_bad_record_gets_a_ledger_row_with_file_line_and_reason(tmp_path):
    f = _write_jsonl(tmp_path / "bad.jsonl", [
        {"id": "ok1", "text": "fine text", "source": "web"},
        b"{not json",
        b'{"id": "u", "text": "bad \xff byte", "source": "web"}',
        {"id": "nul", "text": "a\u0000b", "source": "web"},
        {"id": "empty", "text": "", "source": "web"},
        {"id": "ws", "text": "  \n\t ", "source": "web"},
        {"id": "ok1", "text": "same id again", "source": "web"},
        {"id": "notext", "body": "x", "source": "web"},
        {"id": "num", "text": 42, "source": "web"},
        {"id": "src", "text": "weird source", "source": "martian"},
        b"[1, 2]",
    ])
    res = _ingest([f], tmp_path / "out")
    ledger = read_parts(tmp_path / "out" / "ledger").sort_values("reason")
    got = {(r.reason, json.loads(r.detail)["line"]) for r in ledger.itertuples()}
    assert got == {
        ("malformed_json", 2), ("invalid_utf8", 3), ("nul_byte", 4), ("empty_text", 5), ("empty_text", 6),
        ("duplicate_id", 7), ("missing_text", 8), ("wrong_type", 9), ("unknown_source", 10), ("malformed_json", 11),
    }
    assert all(json.loads(d)["file"].endswith("bad.jsonl") for d in ledger["detail"])
    dup = ledger[ledger["reason"] == "duplicate_id"].iloc[0]
    assert dup["doc_id"] == "ok1@bad.jsonl:7" and json.loads(dup["detail"])["original_id"] == "ok1"
    kept = read_parts(tmp_path / "out" / "docs")
    assert kept["doc_id"].tolist() == ["ok1"] and kept["text"].tolist() == ["fine text"]
    assert res.stats["in"]["documents"] == 11 and res.stats["kept"]["documents"] == 1


def test_on_error_fail_names_file_and_line(tmp_path):
    f = _write_jsonl(tmp_path / "a.jsonl", [{"text": "ok", "source": "web"}, b"{oops"])
    with pytest.raises(Exception, match=r"a\.jsonl line 2: malformed_json"):
        _ingest([f], tmp_path / "out", ["ingest.on_error=fail"])
    assert not (tmp_path / "out").exists()


def test_unreadable_or_textless_input_fails_before_any_output(tmp_path):
    f = _write_jsonl(tmp_path / "a.jsonl", [{"content": "x", "source": "web"}])
    with pytest.raises(InputError, match="no 'text' field"):
        _ingest([f], tmp_path / "out")
    with pytest.raises(InputError, match="does not exist"):
        _ingest([tmp_path / "missing.jsonl"], tmp_path / "out")
    odd = tmp_path / "x.csv"
    odd.write_text("a,b\n")
    with pytest.raises(InputError, match="unknown format"):
        _ingest([odd], tmp_path / "out")
    pq_file = tmp_path / "t.parquet"
    pd.DataFrame({"body": ["x"]}).to_parquet(pq_file)
    with pytest.raises(InputError, match="no text column"):
        _ingest([pq_file], tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_formats_field_mapping_and_source_precedence(tmp_path):
    import datasets
    import zstandard

    d = tmp_path / "in"
    d.mkdir()
    _write_jsonl(d / "a.jsonl.gz", [{"id": "g1", "text": "gzip text", "source": "math_science"}])
    (d / "b.jsonl.zst").write_bytes(zstandard.ZstdCompressor().compress(json.dumps({"id": "z1", "text": "zstd text"}).encode() + b"\n"))
    pd.DataFrame({"content": ["def f(): pass"], "max_stars_repo_name": ["o/r"], "max_stars_repo_path": ["f.py"]}).to_parquet(d / "code.parquet")
    datasets.Dataset.from_dict({"text": ["from datasets"], "id": ["h1"]}).save_to_disk(str(tmp_path / "hf"))
    overrides = [
        "ingest.source=web",
        'ingest.inputs=[{match: "*code.parquet", source: code, fields: {text: content, repo: max_stars_repo_name, path: max_stars_repo_path}}]',
    ]
    _ingest([d, tmp_path / "hf"], tmp_path / "out", overrides)
    kept = read_parts(tmp_path / "out" / "docs").set_index("text")
    assert kept.loc["gzip text", "source"] == "math_science"  # the input's own column wins
    assert kept.loc["zstd text", "source"] == "web"  # --source / ingest.source
    assert kept.loc["def f(): pass", "source"] == "code"  # the recipe's entry for that input
    assert kept.loc["def f(): pass", "repo"] == "o/r" and kept.loc["def f(): pass", "path"] == "f.py"
    assert kept.loc["from datasets", "doc_id"] == "h1"
    assert (kept["n_tokens"] > 0).all()


def test_content_ids_are_stable_and_distinct_for_copies(tmp_path):
    f = _write_jsonl(tmp_path / "a.jsonl", [{"text": "same", "source": "web"}, {"text": "same", "source": "web"}])
    _ingest([f], tmp_path / "o1")
    _ingest([f], tmp_path / "o2", ["ingest.blocksize_mb=2"])
    a = read_parts(tmp_path / "o1" / "docs")["doc_id"].tolist()
    b = read_parts(tmp_path / "o2" / "docs")["doc_id"].tolist()
    assert a == b and len(set(a)) == 2


def test_large_plain_jsonl_is_split_on_line_boundaries(tmp_path):
    recs = [{"id": f"r{i}", "text": "word " * 60000 if i % 50 == 0 else f"doc {i}", "source": "web"} for i in range(400)]
    f = _write_jsonl(tmp_path / "big.jsonl", recs + [b"{broken"])
    res = _ingest([f], tmp_path / "out", ["ingest.blocksize_mb=1"])
    assert len(list((tmp_path / "out" / "docs").glob("part-*.parquet"))) > 1
    ledger = read_parts(tmp_path / "out" / "ledger")
    assert json.loads(ledger["detail"].iloc[0])["line"] == 401  # absolute line numbers across chunks
    assert res.stats["kept"]["documents"] == 400


def test_split_gzip_on_two_workers_equals_one_synchronous_partition(tmp_path):
    from distributed import Client, LocalCluster

    recs = [{"id": f"r{i % 3000}", "text": f"doc {i} " + "z" * (i % 900), "source": "web"} for i in range(3200)]  # 200 duplicate ids
    f = _write_jsonl(tmp_path / "big.jsonl.gz", recs[:1500] + [b"{broken"] + recs[1500:])  # ~1.5 MB decompressed
    _ingest([f], tmp_path / "one")
    rec = load_recipe(None, ["ingest.tokenizer=whitespace", "ingest.blocksize_mb=1", "ingest.min_block_mb=1"])
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=":0") as cluster, Client(cluster) as client:
        import dask

        with dask.config.set({"dataframe.convert-string": False}):
            run_stage("ingest", rec, stage_dir=tmp_path / "two", inputs=[str(f)], client=client, quiet=True)
    assert len(list((tmp_path / "two" / "artifacts" / "parsed").glob("part-*.parquet"))) == 2
    for kind in ("docs", "ledger"):
        a, b = read_parts(tmp_path / "one" / kind), read_parts(tmp_path / "two" / kind)
        pd.testing.assert_frame_equal(a, b)
    ledger = read_parts(tmp_path / "two" / "ledger")
    assert json.loads(ledger[ledger["reason"] == "malformed_json"]["detail"].iloc[0])["line"] == 1501


def test_tokens_are_counted_with_the_qwen_tokenizer(tmp_path):
    import dask

    f = _write_jsonl(tmp_path / "a.jsonl", [{"id": "a", "text": "Hello world, tokenizers!", "source": "web"}])
    rec = load_recipe(None)
    with dask.config.set({"scheduler": "synchronous", "dataframe.convert-string": False}):
        run_stage("ingest", rec, stage_dir=tmp_path / "out", inputs=[str(f)], quiet=True)
    n = read_parts(tmp_path / "out" / "docs")["n_tokens"].iloc[0]
    assert 4 <= n <= 8  # BPE tokens, not words (3) or characters (24)


def test_bad_config_value_says_what_to_change():
    from pipelines.recipe import stage_config
    from pipelines.stages import load_stage

    rec = load_recipe(None, ["ingest.on_error=explode"])
    with pytest.raises(ConfigError, match="choose one of"):
        stage_config(rec, "ingest", load_stage("ingest").config_cls)


def test_every_kept_document_gets_its_natural_language_and_source_code_is_und(tmp_path):
    f = _write_jsonl(tmp_path / "mixed.jsonl", [
        {"id": "zh", "text": "Redis 的持久化有两种方式：快照和只追加文件。快照会把某一时刻的数据写入磁盘。", "source": "web"},
        {"id": "zh-short", "text": "物流很快，好评", "source": "web"},
        {"id": "en", "text": "Snapshots write the whole data set to disk at one point in time.", "source": "web"},
        {"id": "code", "text": "def main():\n    return 0  # the entry point\n", "source": "code", "language": "Python"},
        {"id": "digits", "text": "12345 678", "source": "web"},
        {"id": "empty", "text": "", "source": "web"},
    ])
    res = _ingest([f], tmp_path / "out")
    kept = read_parts(tmp_path / "out" / "docs").set_index("doc_id")
    assert res.stats["by_lang"]["zh"]["kept"]["documents"] == 2 and res.stats["by_lang"]["und"]["dropped"]["documents"] == 1
    assert kept["lang"].to_dict() == {"zh": "zh", "zh-short": "zh", "en": "en", "code": "und", "digits": "und"}
    assert kept.loc["zh", "lang_score"] > 0.5 and kept.loc["code", "lang_score"] == 0.0
    assert kept.loc["code", "language"] == "Python"


def test_an_up_to_date_ingest_is_skipped_without_planning_its_input(tmp_path, monkeypatch):
    """Planning reads compressed files to cut them; the runner decides from the file list alone."""
    from pipelines.stages.ingest import IngestStage

    f = _write_jsonl(tmp_path / "in.jsonl.gz", [{"id": f"r{i}", "text": f"doc {i}", "source": "web"} for i in range(50)])
    assert not _ingest([f], tmp_path / "out").skipped
    planned = []
    original = IngestStage.plan_inputs
    monkeypatch.setattr(IngestStage, "plan_inputs", lambda self, *a, **k: planned.append(1) or original(self, *a, **k))
    assert _ingest([f], tmp_path / "out").skipped and not planned
    _write_jsonl(f, [{"id": "r0", "text": "a changed file", "source": "web"}])
    res = _ingest([f], tmp_path / "out")
    assert not res.skipped and planned == [1] and res.stats["kept"]["documents"] == 1
