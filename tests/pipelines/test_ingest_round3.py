"""Hostile input, round three (issue 39): cut streams, unencodable records, special files, empty and odd encodings."""

from __future__ import annotations

import gzip
import json
import random
import zlib
from pathlib import Path

from tests.helpers import read_parts
from tests.pipelines.test_ingest import _ingest


def _complete_lines(blob: bytes) -> int:
    """What ``zcat`` gives back from a cut gzip: the complete lines before the cut."""
    data = zlib.decompressobj(31).decompress(blob)
    return data.count(b"\n")


def _records(n: int, seed: int = 0) -> bytes:
    rng = random.Random(seed)  # varied words: the compressed file is not tiny, so a cut lands mid-stream
    words = [f"w{rng.randrange(100_000)}" for _ in range(5000)]
    return b"".join(json.dumps({"id": f"r{i}", "text": " ".join(rng.choices(words, k=60)), "source": "web"}).encode() + b"\n"
                    for i in range(n))


def test_a_cut_gzip_keeps_every_complete_record_and_ledgers_the_cut_with_its_offset(tmp_path: Path) -> None:
    blob = gzip.compress(_records(175), mtime=0)
    f = tmp_path / "half.jsonl.gz"
    f.write_bytes(blob[: len(blob) // 2])
    complete = _complete_lines(f.read_bytes())
    assert complete > 50
    _ingest([f], tmp_path / "out")
    kept = read_parts(tmp_path / "out" / "docs")
    assert kept["doc_id"].tolist() == [f"r{i}" for i in range(complete)]
    ledger = read_parts(tmp_path / "out" / "ledger")
    assert ledger["reason"].tolist() == ["truncated_input"]
    detail = json.loads(ledger["detail"].iloc[0])
    assert detail["line"] == complete + 1
    assert detail["offset"] == len(b"".join(_records(175).splitlines(keepends=True)[:complete]))


def test_a_cut_gzip_cut_into_chunks_keeps_every_complete_record(tmp_path: Path) -> None:
    payload = _records(6000, seed=1)  # ~3 MB decompressed: several 1 MB chunks
    blob = gzip.compress(payload, mtime=0)
    f = tmp_path / "big.jsonl.gz"
    f.write_bytes(blob[: len(blob) * 9 // 10])
    complete = _complete_lines(f.read_bytes())
    _ingest([f], tmp_path / "out", ["ingest.blocksize_mb=1", "ingest.min_block_mb=1"])
    kept = read_parts(tmp_path / "out" / "docs")
    assert len(list((tmp_path / "out" / "docs").glob("part-*"))) >= 3
    assert kept["doc_id"].tolist() == [f"r{i}" for i in range(complete)]
    ledger = read_parts(tmp_path / "out" / "ledger")
    assert ledger["reason"].tolist() == ["truncated_input"] and json.loads(ledger["detail"].iloc[0])["line"] == complete + 1
