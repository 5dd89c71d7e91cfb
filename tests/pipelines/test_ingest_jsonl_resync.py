"""A damaged gzip member (zstd frame) in the middle of a multi-member JSONL file costs that member only:
reading goes on at the next member that decompresses, one truncated_input row per damaged member says
what was skipped and where reading went on, and the warning shows under --quiet."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
import tracemalloc
from pathlib import Path

import pandas as pd
import pytest
import zstandard

from curation.ingest.inputs import plan_inputs
from curation.ingest.readers import read_group
from pipelines.recipe import load_recipe, stage_config
from pipelines.stages.ingest import STAGE
from tests.helpers import read_parts
from tests.pipelines.test_ingest import _ingest
from tests.pipelines.test_ingest_damaged_streams import _flip, _lines


def _pack(data: bytes, zstd: bool) -> bytes:
    return zstandard.ZstdCompressor(write_checksum=True).compress(data) if zstd else gzip.compress(data, mtime=0)


def _members(path: Path, groups: list[list[bytes]], damaged: dict[int, str], zstd: bool = False) -> Path:
    """One member (frame) per group of lines (``cat a.gz b.gz``), those in ``damaged`` with a data byte
    (``data``) or their check (``check``: gzip's CRC32, zstd's content checksum) flipped."""
    members = [_pack(b"".join(g), zstd) for g in groups]
    for k, how in damaged.items():
        members[k] = _flip(members[k], len(members[k]) // 2 if how == "data" else (-4 if zstd else -6))
    path.write_bytes(b"".join(members))
    return path


def _ids(first: int, n: int) -> list[str]:
    return [f"r{i}" for i in range(first, first + n)]


@pytest.mark.parametrize("zstd", [False, True])
@pytest.mark.parametrize("how", ["data", "check"])
def test_the_records_after_a_damaged_middle_member_are_kept(tmp_path: Path, zstd: bool, how: str) -> None:
    lines = _lines(0, 30)
    f = _members(tmp_path / ("m.jsonl.zst" if zstd else "m.jsonl.gz"), [lines[:10], lines[10:15], lines[15:]], {1: how}, zstd)
    _ingest([f], tmp_path / "out")
    assert read_parts(tmp_path / "out" / "docs")["doc_id"].tolist() == _ids(0, 10) + _ids(15, 15)
    (row,) = read_parts(tmp_path / "out" / "ledger").itertuples()
    detail = json.loads(row.detail)
    start = len(_pack(b"".join(lines[:10]), zstd))  # the damaged member's compressed offset
    assert row.reason == "truncated_input" and detail["member"] == start and detail["line"] == 11
    assert detail["resumed_at"] == start + len(_pack(b"".join(lines[10:15]), zstd)) == start + detail["skipped_bytes"]
    # the members end at line ends: the resumed stream's first line parses and is kept
    assert "reading went on at the next" in detail["error"] and "parses as a JSON object and is read" in detail["error"]


def test_each_damaged_member_is_one_row_and_a_damaged_last_member_ends_the_file(tmp_path: Path) -> None:
    lines = _lines(0, 60)
    groups = [lines[k : k + 10] for k in range(0, 60, 10)]
    f = _members(tmp_path / "m.jsonl.gz", groups, {1: "data", 3: "check", 5: "data"})
    _ingest([f], tmp_path / "out")
    assert read_parts(tmp_path / "out" / "docs")["doc_id"].tolist() == _ids(0, 10) + _ids(20, 10) + _ids(40, 10)
    ledger = read_parts(tmp_path / "out" / "ledger")
    details = [json.loads(d) for d in ledger["detail"]]
    assert ledger["reason"].tolist() == ["truncated_input"] * 3
    assert [d["member"] for d in details] == [sum(len(_pack(b"".join(g), False)) for g in groups[:k]) for k in (1, 3, 5)]
    assert ["resumed_at" in d for d in details] == [True, True, False]
    assert "the file is not read past it (no later gzip member decompresses)" in details[2]["error"]
    assert len({d["line"] for d in details}) == 3 and details[0]["line"] == 11


def test_a_single_member_file_loses_the_rest_and_its_row_says_so(tmp_path: Path) -> None:
    f = _members(tmp_path / "one.jsonl.gz", [_lines(0, 20)], {0: "check"})
    _ingest([f], tmp_path / "out")
    assert not (tmp_path / "out" / "docs").exists() or read_parts(tmp_path / "out" / "docs").empty
    (detail,) = [json.loads(d) for d in read_parts(tmp_path / "out" / "ledger")["detail"]]
    assert "it is the file's first gzip member, so none of the file's records is kept" in detail["error"]
    assert "not read past it" in detail["error"] and "resumed_at" not in detail


@pytest.mark.parametrize("zstd", [False, True])
def test_records_without_ids_after_a_mid_line_resync_get_unique_ids_and_no_partial_line_is_kept(tmp_path: Path, zstd: bool) -> None:
    """bgzip cuts members anywhere: the resumed stream's first line is the tail of a record, passed over;
    small blocks put the damaged member and the resync point inside chunks of their own."""
    texts = [json.loads(x)["text"] for x in _lines(0, 8000)]
    data = b"".join(json.dumps({"text": t, "source": "web"}).encode() + b"\n" for t in texts)
    cuts = [len(data) // 4 + 11, len(data) // 2 + 7, 3 * len(data) // 4 + 3]
    parts = [data[a:b] for a, b in zip([0, *cuts], [*cuts, len(data)], strict=True)]
    f = tmp_path / ("b.jsonl.zst" if zstd else "b.jsonl.gz")
    members = [_pack(p, zstd) for p in parts]
    members[1] = _flip(members[1], len(members[1]) // 3)
    f.write_bytes(b"".join(members))
    specs = plan_inputs([f], blocksize_mb=1, min_block_mb=1)
    assert len(specs) >= 3 and [s.resume is not None for s in specs].count(True) >= 2
    _ingest([f], tmp_path / "out", ["ingest.blocksize_mb=1", "ingest.min_block_mb=1", "ingest.source=web"])
    docs = read_parts(tmp_path / "out" / "docs")
    first, resumed = data[: cuts[0]].count(b"\n"), data[: cuts[1]].count(b"\n") + 1
    assert docs["text"].tolist() == texts[:first] + texts[resumed:]  # no garbled, partial or lost record
    assert docs["doc_id"].is_unique
    (detail,) = [json.loads(d) for d in read_parts(tmp_path / "out" / "ledger")["detail"]]
    assert "does not parse as a JSON object" in detail["error"] and "is not kept" in detail["error"]
    whole = plan_inputs([f])  # one block: the same records as in small chunks
    assert len(whole) == 2 and whole[1].first_line > detail["line"]


def test_the_warning_shows_with_quiet(tmp_path: Path) -> None:
    lines = _lines(0, 30)
    f = _members(tmp_path / "m.jsonl.gz", [lines[:10], lines[10:15], lines[15:]], {1: "data"})
    run = subprocess.run([sys.executable, "-m", "pipelines.cli", "ingest", "--input", str(f), "--output", str(tmp_path / "o"),
                          "--source", "web", "--quiet", "ingest.tokenizer=whitespace"], capture_output=True, text=True,
                         cwd=Path(__file__).parents[2])
    assert run.returncode == 0, run.stderr
    assert f"{f}: 1 damaged gzip member(s) skipped, reading went on after each" in run.stderr


def test_a_sound_multi_member_file_is_planned_as_one_stream(tmp_path: Path) -> None:
    lines = _lines(0, 3000)
    data = b"".join(lines)
    one = tmp_path / "one.jsonl.gz"
    one.write_bytes(gzip.compress(data, mtime=0))
    many = _members(tmp_path / "many.jsonl.gz", [lines[k : k + 100] for k in range(0, 3000, 100)], {})
    a, b = (plan_inputs([p], blocksize_mb=1, min_block_mb=1) for p in (one, many))
    assert [(s.start, s.end, s.first_line, s.resume, s.damaged) for s in a] == [(s.start, s.end, s.first_line, s.resume, s.damaged) for s in b]
    assert len(a) >= 2 and all(s.resume is None and s.damaged is None for s in a)



@pytest.mark.parametrize("tail", [False, True])
def test_a_long_first_line_after_a_damaged_member_is_too_large_and_never_held(tmp_path: Path, tail: bool) -> None:
    """The first line of the member reading goes on at, over 12 x max_chars bytes, is read past a piece at a
    time when the run is planned and when it is read: a too_large row, whether it is a whole record or the
    end of one that began in the damaged member; the records around it are kept."""
    size = 32_000_000
    long = b'{"id": "long", "text": "' + b"a" * size + b'", "source": "web"}\n'
    lines = _lines(0, 20)
    damaged = [b'{"id": "cut", "text": "' + b"b" * 5000] if tail else _lines(100, 10)  # tail: it ends mid-record
    f = _members(tmp_path / "m.jsonl.gz", [lines[:10], damaged, [long[30:] if tail else long, *lines[10:]]], {1: "data"})
    cfg = stage_config(load_recipe(None, ["ingest.source=web", "ingest.max_chars=1000"]), "ingest", STAGE.config_cls)
    tracemalloc.start()
    try:
        groups = STAGE.plan_inputs([f], cfg)  # the run's planning pass, then its readers
        df = pd.concat([read_group(g, cfg.max_chars, cfg.max_html_bytes) for g in groups], ignore_index=True)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < size // 4, f"peak {peak:,} bytes for a {size:,}-byte line"
    assert df.loc[df["drop_reason"].isna(), "doc_id"].tolist() == _ids(0, 20)
    bad = df[df["drop_reason"].notna()]
    details = [json.loads(d) for d in bad["drop_detail"]]
    assert bad["drop_reason"].tolist() == ["truncated_input", "too_large"]
    assert f"its lines numbered from line {details[1]['line']} " in details[0]["error"]
    assert details[1]["error"] == f"a line of {len(long) - 30 * tail} bytes > 12000 (12 x max_chars 1000), not parsed"
    assert f"its first line, of {len(long) - 30 * tail} bytes, is over the line bound and is not parsed" in details[0]["error"]
