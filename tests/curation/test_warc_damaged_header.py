"""A ``.warc.gz`` member whose HEADER is damaged (its magic, its flags) costs its record only, as a member
whose data is damaged does: one ``truncated_input`` row per damaged member (the first, a middle one, the
last, two adjacent ones), the other records read, the same rows however the file is partitioned."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from tests.curation.test_warc_damaged import ok
from tests.curation.test_warc_resync import read, summary
from tests.pipelines.test_ingest_damaged_streams import _flip


@pytest.mark.parametrize("block", [1 << 30, 1 << 12])
@pytest.mark.parametrize("byte", [0, 1, 3])
@pytest.mark.parametrize("bad", [[0], [2], [5], [2, 3]])
def test_a_damaged_header_is_one_row_and_reading_goes_on(tmp_path: Path, bad: list[int], byte: int, block: int) -> None:
    members = [gzip.compress(ok(t), mtime=0) for t in "abcdef"]
    for k in bad:
        members[k] = _flip(members[k], byte)
    f = tmp_path / "h.warc.gz"
    f.write_bytes(b"".join(members))
    rows = read(f, block)
    assert summary(rows) == [(k + 1, "truncated_input" if k in bad else t) for k, t in enumerate("abcdef")]
    offsets = [sum(map(len, members[:k])) for k in bad]
    errors = [r for r in rows if "error" in r]
    assert [r["offset"] for r in errors] == offsets
    if byte < 2:  # the magic: said as a member whose header is damaged
        assert all("(a gzip member whose header is damaged)" in r["error"][1] for r in errors)


VALUES = [0x00, 0xFF, 0x1E, 0x01, 0x0A, 0x57, 0x9F, 0x8B]  # 0x00: what gzip's zero padding is made of


@pytest.mark.parametrize("block", [1 << 30, 1 << 12])
@pytest.mark.parametrize("bad", [[0], [2], [5], [2, 3], [0, 1]])
@pytest.mark.parametrize(("byte", "value"), [(0, v) for v in VALUES] + [(1, v) for v in VALUES if v != 0x8B] + [(1, 0x1F)])
def test_every_value_of_a_damaged_magic_byte_is_one_row_at_its_member(tmp_path: Path, bad: list[int], byte: int, value: int,
                                                                       block: int) -> None:
    """A magic byte set to any other value, 0x00 included (taken for zero padding, the first member's
    cost the whole file and the others' rows named the byte after the member), costs its member only."""
    members = [gzip.compress(ok(t), mtime=0) for t in "abcdef"]
    for k in bad:
        members[k] = members[k][:byte] + bytes([value]) + members[k][byte + 1:]
    f = tmp_path / "v.warc.gz"
    f.write_bytes(b"".join(members))
    rows = read(f, block)
    assert summary(rows) == [(k + 1, "truncated_input" if k in bad else t) for k, t in enumerate("abcdef")]
    errors = [r for r in rows if "error" in r]
    assert [r["offset"] for r in errors] == [sum(map(len, members[:k])) for k in bad]
    assert all("(a gzip member whose header is damaged)" in r["error"][1] for r in errors)

