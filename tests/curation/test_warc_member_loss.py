"""A damaged gzip member that holds several WARC records: each record it loses is a ledger row (the
funnel's ``docs in`` counts them), its first row says how many compressed bytes were skipped from the
member's start; and a ``.warc.gz`` of one gzip member over the block is said when the run is planned."""

from __future__ import annotations

import gzip
import io
import logging
import re
from pathlib import Path

import pytest

from curation.ingest.inputs import plan_inputs
from curation.ingest.readers import read_spec
from tests.curation.test_warc_http_bodies import real_pages, response
from tests.curation.test_warc_resync import read, summary

URLS = [f"http://m.example/r{i}" for i in range(5)]


def records(lie: int | None = None) -> list[bytes]:
    """Five response records around real pages, uncompressed; record ``lie`` (0-based) with a
    ``Content-Length`` 40 bytes short of its block."""
    from warcio.warcwriter import WARCWriter

    out = []
    for i, url in enumerate(URLS):
        buf = io.BytesIO()
        response(WARCWriter(buf, gzip=False), url, real_pages()[i])
        # a fixed record id and date: warcio draws a new uuid and takes the clock, and the deflate data
        # a flipped byte garbles (so the rows it leaves) would change from run to run
        data = re.sub(rb"WARC-Record-ID: <urn:uuid:[0-9a-f-]+>", b"WARC-Record-ID: <urn:uuid:%08d-0000-4000-8000-000000000000>" % i,
                      buf.getvalue())
        data = re.sub(rb"WARC-Date: [0-9TZ:.-]+", b"WARC-Date: 2026-01-01T00:00:00Z", data)
        if i == lie:
            head, _, rest = data.partition(b"Content-Length: ")
            n, _, rest = rest.partition(b"\r\n")
            data = head + b"Content-Length: " + str(int(n) - 40).encode() + b"\r\n" + rest
        out.append(data)
    return out


def flip(member: bytes, crc_only: bool) -> bytes:
    b = bytearray(member)
    b[-8 if crc_only else len(b) // 2] ^= 0xFF  # the CRC32 trailer, or a byte in the middle of the deflate data
    return bytes(b)


@pytest.mark.parametrize("block", [1 << 30, 1 << 15])
@pytest.mark.parametrize("crc_only", [False, True])
def test_a_damaged_member_of_three_records_is_three_rows(tmp_path: Path, block: int, crc_only: bool) -> None:
    """Two members, records 1-3 and 4-5; the first fails its check. Record 1 was decoded before the
    damage but its member's check failed: not kept, a row of its own, as records 2 and 3."""
    recs = records()
    first = flip(gzip.compress(b"".join(recs[:3])), crc_only)
    f = tmp_path / "m.warc.gz"
    f.write_bytes(first + gzip.compress(b"".join(recs[3:])))
    rows = read(f, block)
    assert summary(rows) == [
        (1, "truncated_input"),
        (2, "truncated_input"),
        (3, "truncated_input"),
        (4, "r3"),
        (5, "r4"),
    ]
    why = rows[0]["error"][1]
    # a flipped byte that changes the records' lengths leaves them counted by their header lines: "at least"
    counts = ["its 3"] if crc_only else ["its 3", "at least 3"]
    assert "failed its check" in why
    assert any(f"{c} document record(s) (row(s) 1..3) are not kept" in why for c in counts)
    assert f"{len(first)} compressed bytes from the gzip member at byte 0 on skipped" in why
    assert all(r["offset"] == 0 and "record 1's row says why" in r["error"][1] for r in rows[1:3])


@pytest.mark.parametrize("crc_only", [False, True])
def test_the_same_records_in_one_gzip_stream_are_a_row_each(tmp_path: Path, crc_only: bool) -> None:
    """What ``gzip file.warc`` writes, damaged: no record is kept, each has a row. Records are counted
    by their header lines in the member's data; a byte flipped in the middle garbles what follows it
    (deflate may copy a record's header lines anew), so the count is as near as the bytes allow."""
    f = tmp_path / "w.warc.gz"
    f.write_bytes(flip(gzip.compress(b"".join(records())), crc_only))
    specs = plan_inputs([f])
    frames = [read_spec(s, 1 << 20) for s in specs]
    ledger = [r.drop_reason for df in frames for r in df.itertuples()]
    assert set(ledger) == {"truncated_input"} and (len(ledger) == 5 if crc_only else len(ledger) >= 5)
    n = len(ledger)
    said = f"document record(s) (row(s) 1..{n})"
    assert any(
        f"the {f.stat().st_size} bytes of the file from byte 0 on were not read; {c} {n} {said}" in specs[-1].cut.error
        for c in (["its"] if crc_only else ["its", "at least"])
    )


def test_a_wrong_length_in_a_sound_member_keeps_the_records_before_it(tmp_path: Path) -> None:
    """Record 2's ``Content-Length`` does not end it, its member passes its check: record 1 is kept,
    record 2 and record 3 after it in the member are rows (record 3 found by its ``WARC/1.0`` line)."""
    recs = records(lie=1)
    first = gzip.compress(b"".join(recs[:3]))
    f = tmp_path / "l.warc.gz"
    f.write_bytes(first + gzip.compress(b"".join(recs[3:])))
    rows = read(f, 1 << 30)
    assert summary(rows) == [(1, "r0"), (2, "truncated_input"), (3, "truncated_input"), (4, "r3"), (5, "r4")]
    why = rows[1]["error"][1]
    assert "record 2's Content-Length" in why and "the 1 document record(s) before it in that member" in why
    assert (
        "1 after it in its member, found by their WARC/1.x lines" in why
        and f"{len(first)} compressed bytes from the gzip member at byte 0" in why
    )


def test_a_single_member_warc_gz_over_the_block_is_said_with_the_fix(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Planning can cut a ``.warc.gz`` only where a member starts: one member over the block
    (ingest.blocksize_mb lowered to 1) is one partition, said once with the command that fixes it."""
    recs = records() * 8  # ~1.6 MB of records
    whole, each = tmp_path / "whole.warc.gz", tmp_path / "each.warc.gz"
    whole.write_bytes(gzip.compress(b"".join(recs)))
    each.write_bytes(b"".join(gzip.compress(r) for r in recs))
    with caplog.at_level(logging.WARNING, logger="curation.ingest.warc_plan"):
        assert len(plan_inputs([whole], blocksize_mb=1, crawl_min_block_mb=1)) == 1
    said = [r.getMessage() for r in caplog.records]
    assert len(said) == 1 and f"one gzip member of {whole.stat().st_size:,} bytes" in said[0]
    assert "one worker reads it whole" in said[0] and f"warcio recompress {whole} OUT.warc.gz" in said[0]  # the path as given: it runs from any folder
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="curation.ingest.warc_plan"):
        assert len(plan_inputs([each], blocksize_mb=1, crawl_min_block_mb=1)) > 1
        assert len(plan_inputs([whole], crawl_min_block_mb=1)) == 1  # within the 16 MB block: nothing to say
    assert not caplog.records


def test_a_member_whose_data_stops_inflating_counts_the_records_before_the_damage(tmp_path: Path) -> None:
    """A member of three records whose data stops inflating after the second (a block of a type
    deflate does not have): the two records before the damage are counted, each a row, and the row
    says that records after it are not."""
    import zlib

    from warcio.warcwriter import WARCWriter

    from curation.ingest.warc_heads import member_heads

    recs = []
    for i, url in enumerate(URLS):  # small records: the whole member inflates in one call of 64 KiB of output
        buf = io.BytesIO()
        response(WARCWriter(buf, gzip=False), url, real_pages()[i][:3000])
        recs.append(buf.getvalue())
    co = zlib.compressobj(9, zlib.DEFLATED, 31)  # a gzip member
    # flushed to a byte boundary after two records, then 0xFF: a final block of the reserved type 3
    bad = co.compress(recs[0] + recs[1]) + co.flush(zlib.Z_FULL_FLUSH) + b"\xff" * 64 + zlib.compress(recs[2])
    with pytest.raises(zlib.error, match="invalid block type"):
        zlib.decompressobj(31).decompress(bad)
    f = tmp_path / "s.warc.gz"
    first = gzip.compress(recs[3])
    f.write_bytes(first + bad + gzip.compress(recs[4]))
    assert member_heads(f, len(first)) == (2, False, False)
    rows = read(f, 1 << 30)
    lost = [r for r in rows if r.get("error") and r["error"][0].value == "truncated_input"]
    assert len(lost) == 2 and "records after that are not counted" in lost[0]["error"][1]
    assert [r["url"] for r in rows if not r.get("error")] == [URLS[3], URLS[4]]
