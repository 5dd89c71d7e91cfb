"""The search for the next gzip member of a damaged ``.warc.gz`` (:mod:`curation.ingest.unit_heads`) takes no
magic inside a member's data for a member: a damaged member is one row, every record after it kept; and zero
bytes between two members (which FastWARC does not read past) are one row, no record lost."""

from __future__ import annotations

import gzip
import random
import re
import uuid
import zlib
from pathlib import Path

import pytest

from tests.curation.test_warc_damaged import ok, rec
from tests.curation.test_warc_resync import read, summary
from tests.helpers import read_parts
from tests.pipelines.test_ingest import _ingest
from tests.pipelines.test_ingest_damaged_streams import _flip, _lines

_NEAR = re.compile(b"(?=.\x8b\x08|\x1f.\x08|\x1f\x8b.)", re.S)  # gzip's magic with at most one byte wrong


def _false_magic(members: list[bytes]) -> bool:
    """Whether a near magic inside the first member (past its own header) starts a WARC record once its
    magic (and flags, as gzip, Python and bgzip write them) is restored: a member the search would take."""
    first, rest = members[0], b"".join(members[1:])
    for m in _NEAR.finditer(first, 1):
        for flags in (0, 4, 8):
            data = b"\x1f\x8b\x08" + bytes([flags]) + first[m.start() + 4:] + rest
            try:
                if zlib.decompressobj(31).decompress(data, 8).startswith(b"WARC/"):
                    return True
            except zlib.error:
                pass
    return False


@pytest.fixture(scope="module")
def false_magic_members() -> list[bytes]:
    """Six members (one record each, as Common Crawl writes them) whose first one holds, inside its deflate
    data, a near magic that starts a WARC record with its header restored (with random record ids, about
    one file in 200): record ids are searched for such a file, so the case is built whatever zlib writes."""
    for seed in range(20_000):
        rng = random.Random(seed)
        ids = iter([uuid.UUID(int=rng.getrandbits(128), version=4) for _ in range(6)])
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(uuid, "uuid4", ids.__next__)
            members = [gzip.compress(ok(t), mtime=0) for t in "abcdef"]
        if _false_magic(members):
            return members
    raise AssertionError("no record ids put a false gzip magic inside the first member")


@pytest.mark.parametrize("block", [1 << 30, 1 << 12])
@pytest.mark.parametrize(("byte", "crc"), [(0, False), (1, False), (3, False), (3, True)])  # the magic, the flags
def test_a_false_magic_inside_a_damaged_first_member_is_no_member(tmp_path: Path, false_magic_members: list[bytes],
                                                                  byte: int, crc: bool, block: int) -> None:
    """The member decodes whole with its header restored: the search starts after it. With its CRC damaged
    too it does not, and the false magic's restored header is refused for its other fields (XFL, OS)."""
    members = list(false_magic_members)
    members[0] = _flip(members[0], byte)
    if crc:
        members[0] = _flip(members[0], len(members[0]) - 8)
    f = tmp_path / "h.warc.gz"
    f.write_bytes(b"".join(members))
    rows = read(f, block)
    assert summary(rows) == [(1, "truncated_input"), (2, "b"), (3, "c"), (4, "d"), (5, "e"), (6, "f")]
    assert rows[0]["offset"] == 0 and f"byte {len(members[0])}" in rows[0]["error"][1]  # reading went on at member 2


@pytest.mark.parametrize("block", [1 << 30, 1 << 12])
def test_a_warc_gz_stored_in_a_damaged_member_gives_no_record(tmp_path: Path, block: int) -> None:
    """A record whose payload is a ``.warc.gz`` (a crawler fetched one) is stored by deflate as it is: its
    bytes hold a sound gzip member that starts a WARC record. When the header of the member that holds the
    record is damaged, the search goes on after that member (it decodes whole with its header restored),
    not at the member in its payload, whose record is no record of the file."""
    inner = gzip.compress(ok("inner"), mtime=0)
    stored = zlib.compressobj(0, zlib.DEFLATED, 31)  # deflate stores what does not compress
    first = stored.compress(rec("a", inner)) + stored.flush()
    assert inner in first
    members = [_flip(first, 0)] + [gzip.compress(ok(t), mtime=0) for t in "bcd"]
    f = tmp_path / "s.warc.gz"
    f.write_bytes(b"".join(members))
    rows = read(f, block)
    assert summary(rows) == [(1, "truncated_input"), (2, "b"), (3, "c"), (4, "d")]
    assert f"{len(first)} bytes that are not gzip data (a gzip member whose header is damaged)" in rows[0]["error"][1]


@pytest.mark.parametrize("block", [1 << 30, 1 << 12])
@pytest.mark.parametrize("zeros", [1, 512])
def test_zero_bytes_between_two_members_are_one_row_and_no_record_is_lost(tmp_path: Path, block: int, zeros: int) -> None:
    """gzip skips zero padding after the last member only, and FastWARC stops at zeros between two members
    (records 4..6 were lost where no partition started after them): the planning pass ends a partition before
    them and starts the next at the member after them, with one row that says how many bytes it skipped."""
    members = [gzip.compress(ok(t), mtime=0) for t in "abcdef"]
    f = tmp_path / "z.warc.gz"
    f.write_bytes(b"".join(members[:3]) + bytes(zeros) + b"".join(members[3:]))
    rows = read(f, block)
    assert summary(rows) == [(1, "a"), (2, "b"), (3, "c"), (4, "truncated_input"), (5, "d"), (6, "e"), (7, "f")]
    at = sum(map(len, members[:3]))
    assert rows[3]["offset"] == at
    assert f"{zeros} zero bytes between two gzip members (padding, which FastWARC does not read past) at compressed byte {at}" \
        in rows[3]["error"][1] and f"reading went on at the gzip member at byte {at + zeros}" in rows[3]["error"][1]


def test_zero_bytes_between_two_members_of_a_jsonl_gz_cost_nothing(tmp_path: Path) -> None:
    """The JSONL reader decompresses the file itself and skips zeros between members as after the last:
    every record kept, no row."""
    lines = _lines(0, 60)
    members = [gzip.compress(b"".join(lines[k : k + 10]), mtime=0) for k in range(0, 60, 10)]
    f = tmp_path / "z.jsonl.gz"
    f.write_bytes(b"".join(members[:3]) + bytes(512) + b"".join(members[3:]))
    _ingest([f], tmp_path / "out")
    assert read_parts(tmp_path / "out" / "docs")["doc_id"].tolist() == [f"r{i}" for i in range(60)]
    assert not (tmp_path / "out" / "ledger").exists() or read_parts(tmp_path / "out" / "ledger").empty
