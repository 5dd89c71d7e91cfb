"""Damaged compressed JSONL (issue s59): a member (frame) that fails its check is dropped whole in
every chunk and reading goes on at the next member, a cut stream keeps its complete records, both
are said in a warning and one ledger row."""

from __future__ import annotations

import gzip
import json
import logging
import random
from pathlib import Path

import pytest
import zstandard

from curation.ingest.inputs import InputError, plan_inputs
from curation.ingest.readers import read_spec
from tests.helpers import read_parts
from tests.pipelines.test_ingest import _ingest


def _lines(first: int, n: int, seed: int = 0) -> list[bytes]:
    rng = random.Random(seed + first)  # varied words: members do not compress to nothing
    words = [f"w{rng.randrange(100_000)}" for _ in range(3000)]
    return [json.dumps({"id": f"r{i}", "text": " ".join(rng.choices(words, k=60)), "source": "web"}).encode() + b"\n"
            for i in range(first, first + n)]


def _flip(blob: bytes, at: int) -> bytes:
    b = bytearray(blob)
    b[at] ^= 0xFF
    return bytes(b)


def _three_members(tmp_path: Path, lines: list[bytes], zstd: bool = False) -> tuple[Path, int, int]:
    """A file of three members (frames) whose second one is damaged in its middle; members 2 and 3
    start inside a record (as bgzip cuts), so the record across each boundary is not kept either.
    Returns the file, the number of records wholly inside member 1 and the first record wholly inside member 3."""
    data = b"".join(lines)
    cuts = [len(data) // 3 + 17, 2 * len(data) // 3 + 5]
    parts = [data[: cuts[0]], data[cuts[0] : cuts[1]], data[cuts[1] :]]
    pack = (lambda b: zstandard.ZstdCompressor(write_checksum=True).compress(b)) if zstd else (lambda b: gzip.compress(b, mtime=0))
    members = [pack(p) for p in parts]
    members[1] = _flip(members[1], len(members[1]) // 2)
    f = tmp_path / ("d.jsonl.zst" if zstd else "d.jsonl.gz")
    f.write_bytes(b"".join(members))
    return f, data[: cuts[0]].count(b"\n"), data[: cuts[1]].count(b"\n") + 1


@pytest.mark.parametrize("zstd", [False, True])
def test_a_member_that_fails_its_check_is_dropped_whole_in_every_chunk(tmp_path: Path, zstd: bool) -> None:
    lines = _lines(0, 9000)  # ~4 MB decompressed: chunks of 1 MB, several of them inside the damaged member
    f, whole, after = _three_members(tmp_path, lines, zstd)
    specs = plan_inputs([f], source="web", blocksize_mb=1, min_block_mb=1)
    assert len(specs) >= 3 and sum(s.damaged is not None for s in specs) == 1 and specs[-1].resume is not None
    _ingest([f], tmp_path / "out", ["ingest.blocksize_mb=1", "ingest.min_block_mb=1"])
    kept = read_parts(tmp_path / "out" / "docs")
    # not one record of member 2, nor the two across its ends; every record wholly inside member 3 is kept
    assert kept["doc_id"].tolist() == [f"r{i}" for i in [*range(whole), *range(after, 9000)]]
    assert kept["text"].tolist() == [json.loads(x)["text"] for x in lines[:whole] + lines[after:]]
    ledger = read_parts(tmp_path / "out" / "ledger")
    assert ledger["reason"].tolist() == ["truncated_input"]
    detail = json.loads(ledger["detail"].iloc[0])
    assert detail["line"] == whole + 1 and detail["offset"] == len(b"".join(lines[:whole]))
    assert "failed its check" in detail["error"] and f"no record from line {whole + 1}" in detail["error"] and "were kept" not in detail["error"]
    assert "is not kept" in detail["error"] and detail["resumed_at"] == detail["member"] + detail["skipped_bytes"]


def test_a_crc_error_is_said_as_corrupt_not_empty_and_a_cut_file_is_said(tmp_path: Path, caplog) -> None:
    lines = _lines(0, 20)
    bad = tmp_path / "crc.jsonl.gz"
    bad.write_bytes(_flip(gzip.compress(b"".join(lines), mtime=0), -6))  # only the CRC32 trailer is wrong
    cut = tmp_path / "cut.jsonl.gz"
    blob = gzip.compress(b"".join(_lines(0, 3000)), mtime=0)
    cut.write_bytes(blob[: len(blob) // 2])
    with caplog.at_level(logging.WARNING):
        specs = plan_inputs([bad, cut], source="web")
    said = {p: next(m for r in caplog.records if (m := r.getMessage()).startswith(f"{p}:")) for p in (str(bad), str(cut))}
    assert "decompresses to nothing" not in said[str(bad)] and "incorrect data check" in said[str(bad)]
    assert "compressed stream cut" in said[str(cut)] and "could not be read" in said[str(cut)]
    df = read_spec(specs[0], 1000)
    assert df["drop_reason"].tolist() == ["truncated_input"] and "corrupt gzip data" in df["drop_detail"].iloc[0]


def test_the_warning_shows_with_quiet_and_on_error_fail_never_says_kept(tmp_path: Path) -> None:
    import subprocess
    import sys

    cut = tmp_path / "cut.jsonl.gz"
    blob = gzip.compress(b"".join(_lines(0, 3000)), mtime=0)
    cut.write_bytes(blob[: len(blob) // 2])
    run = subprocess.run([sys.executable, "-m", "pipelines.cli", "ingest", "--input", str(cut), "--output", str(tmp_path / "o"),
                          "--source", "web", "--quiet", "ingest.tokenizer=whitespace"], capture_output=True, text=True, cwd=Path(__file__).parents[2])
    assert run.returncode == 0, run.stderr
    assert "WARNING" in run.stderr and f"{cut}: compressed stream cut" in run.stderr
    with pytest.raises(InputError) as err:
        _ingest([cut], tmp_path / "out", ["ingest.on_error=fail"])
    assert "truncated_input" in str(err.value) and "were kept" not in str(err.value)


def test_a_zstd_file_opening_with_a_skippable_frame_is_read(tmp_path: Path) -> None:
    lines = _lines(0, 50)
    skip = b"\x5a\x2a\x4d\x18" + (6).to_bytes(4, "little") + b"pzstd!"  # what pzstd and seekable-zstd writers put first
    f = tmp_path / "p.jsonl.zst"
    f.write_bytes(skip + zstandard.ZstdCompressor().compress(b"".join(lines[:20])) + skip
                  + zstandard.ZstdCompressor().compress(b"".join(lines[20:])) + skip)
    _ingest([f], tmp_path / "out")
    assert read_parts(tmp_path / "out" / "docs")["doc_id"].tolist() == [f"r{i}" for i in range(50)]
    assert not (tmp_path / "out" / "ledger").exists() or read_parts(tmp_path / "out" / "ledger").empty
    warc = tmp_path / "p.warc.zst"
    warc.write_bytes(skip + zstandard.ZstdCompressor().compress(b"WARC/1.0\r\n"))
    with pytest.raises(InputError, match="zstd skippable frame"):
        plan_inputs([warc])


def test_a_cut_zstd_file_names_its_frame_not_a_member(tmp_path: Path) -> None:
    """zstd's pieces are frames (the corruption message said so; the cut one said "zstd member")."""
    blob = zstandard.ZstdCompressor().compress(b"".join(_lines(0, 2000)))
    cut = tmp_path / "cut.jsonl.zst"
    cut.write_bytes(blob[: len(blob) // 2])
    _ingest([cut], tmp_path / "out", ["ingest.source=web"])
    (detail,) = read_parts(tmp_path / "out" / "ledger")["detail"]
    assert "the zstd frame at compressed byte 0" in detail and "member" not in json.loads(detail)["error"].split(";")[0]
