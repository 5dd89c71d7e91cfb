"""A record whose ``Content-Length`` lies (too long: its block takes the next record's header; too
short: the rest of its body follows it) is one ``truncated_input`` row, never a page holding another
record's bytes; in a ``.warc.gz`` reading goes on at the next gzip member that starts a record, in
a plain ``.warc`` the row says how many bytes were not read. An HTTP ``Content-Length`` that
disagrees with a body that is not chunked is a ``truncated_input`` row too."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from curation.ingest.warc import iter_warc
from curation.ingest.warc_plan import warc_chunks
from curation.schema import DropReason
from tests.curation.test_warc_damaged import chunked, ok, page, rec, write
from tests.curation.test_warc_resync import read, summary

LIES = {"long": 500, "short": -500}


@pytest.mark.parametrize("block", [1 << 30, 1 << 12])
@pytest.mark.parametrize("lie", LIES)
def test_in_a_warc_gz_a_lying_record_costs_itself_only(tmp_path: Path, block: int, lie: str, caplog: pytest.LogCaptureFixture) -> None:
    f = write(tmp_path / "l.warc.gz", [ok("a"), rec("liar", page("liar"), clen_delta=LIES[lie]), ok("b"), ok("c")])
    with caplog.at_level(logging.WARNING):
        rows = read(f, block)
    assert summary(rows) == [(1, "a"), (2, "truncated_input"), (3, "b"), (4, "c")]
    assert all("WARC/1.1" not in r.get("html", "") for r in rows)
    liar = rows[1]
    assert liar["url"] == "http://a.example/liar" and "Content-Length" in liar["error"][1] and "does not end it" in liar["error"][1]
    assert "reading went on at the next gzip member that starts a record" in liar["error"][1]
    assert f"{f}: 1 damaged stretch(es) skipped" in caplog.text  # said when the run is planned


@pytest.mark.parametrize("lie", LIES)
def test_in_a_plain_warc_a_lying_record_is_its_row_and_the_rest_is_said(tmp_path: Path, lie: str) -> None:
    recs = [ok("a"), rec("liar", page("liar"), clen_delta=LIES[lie]), ok("b")]
    f = write(tmp_path / "l.warc", recs, gz=False)
    rows = read(f, 1 << 30)
    assert summary(rows) == [(1, "a"), (2, "truncated_input")]
    at = len(recs[0])
    assert rows[1]["offset"] == at and f"the {f.stat().st_size - at} bytes of the file from byte {at} on were not read" in rows[1]["error"][1]


def test_blank_lines_that_end_a_record_keep_it_before_junk(tmp_path: Path) -> None:
    """Bytes that start no record after a record's ``\\r\\n\\r\\n``: the record's length is right, the junk is the damage."""
    f = write(tmp_path / "j.warc.gz", [ok("a"), ok("b") + b"junk!" * 16, ok("c")])
    assert summary(read(f, 1 << 30))[:2] == [(1, "a"), (2, "b")]


def test_an_http_content_length_that_disagrees_with_the_body_is_truncated_input(tmp_path: Path) -> None:
    body = page("x")
    recs = [rec("cut", body[:-300], f"Content-Length: {len(body)}\r\n".encode()),
            rec("more", body, f"Content-Length: {len(body) - 300}\r\n".encode()),
            rec("right", body, f"Content-Length: {len(body)}\r\n".encode()),
            rec("chunked", chunked(body), f"Content-Length: {len(body)}\r\nTransfer-Encoding: chunked\r\n".encode())]
    rows = list(iter_warc(write(tmp_path / "h.warc.gz", recs), 10_000_000))
    assert [r["error"][0] if "error" in r else "html" for r in rows] == [DropReason.TRUNCATED_INPUT] * 2 + ["html"] * 2
    assert f"the body has {len(body) - 300} bytes, its HTTP Content-Length says {len(body)}" in rows[0]["error"][1]


def test_a_sound_file_plans_as_before(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    f = write(tmp_path / "s.warc.gz", [ok(f"p{i}") for i in range(12)])
    with caplog.at_level(logging.WARNING):
        chunks = warc_chunks(f, 10_000)
    assert len(chunks) > 1 and sum(c.docs for c in chunks) == 12 and all(c.cut is None for c in chunks) and not caplog.text
