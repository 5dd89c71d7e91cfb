"""`curate ingest` on damaged or hostile WARC files: exit 0 with ledger rows, or exit 4 naming the file; no traceback."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from pipelines.cli import main as curate
from tests.curation.test_warc_damaged import chunked, long_warc_header, ok, page, rec, write
from tests.helpers import read_parts


def ingest(inputs: list[Path], out: Path, *settings: str) -> int:
    return curate(["ingest", "--input", *map(str, inputs), "--output", str(out), "--scheduler", "synchronous", "--quiet",
                   "--cache-dir", str(out.parent / ".cache"), "tokenizer=whitespace", *settings])


def test_damaged_and_hostile_records_are_ledgered(tmp_path: Path) -> None:
    gz = b"Content-Encoding: gzip\r\n"
    files = [
        write(tmp_path / "a.warc.gz", [ok("a1"), rec("a2", chunked(gzip.compress(page("a2"))), gz + b"Transfer-Encoding: chunked\r\n"), ok("a3")]),
        write(tmp_path / "b.warc.gz", [ok("b1"), rec("b2", page("b2"), gz), ok("b3")]),
        write(tmp_path / "d.warc.gz", [ok("d1"), rec("d2", page("d2"), clen_delta=-500), ok("d3")]),
        write(tmp_path / "h.warc.gz", [ok("h1"), rec("h2", gzip.compress(page("h2") + bytes(range(256)) * 4)[:300], gz), ok("h3")]),
    ]
    assert ingest(files, tmp_path / "out") == 0
    kept, ledger = read_parts(tmp_path / "out" / "docs"), read_parts(tmp_path / "out" / "ledger")
    urls = set(kept["url"])
    assert {f"http://a.example/{t}" for t in ("a1", "a2", "a3", "b1", "b2", "b3", "d1", "h1", "h3")} <= urls
    details = [json.loads(d) for d in ledger["detail"]]
    by_file = {Path(d["file"]).name: r for d, r in zip(details, ledger["reason"], strict=True)}
    assert by_file == {"d.warc.gz": "truncated_input", "h.warc.gz": "truncated_input"}


def test_a_warc_nothing_can_be_read_from_is_exit_4(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    # WARC header lines over max_html_bytes plus 32 KiB: FastWARC reads no record
    f = write(tmp_path / "z.warc.gz", [long_warc_header("z")])
    assert ingest([f], tmp_path / "out", "max_html_bytes=30000") == 4
    assert "z.warc.gz" in caplog.text and "Traceback" not in caplog.text


def test_a_corrupt_member_costs_its_record_only_and_is_said_with_quiet(tmp_path: Path) -> None:
    import subprocess
    import sys

    members = [gzip.compress(ok(f"p{i}")) for i in range(6)]
    bad = bytearray(members[2])
    bad[len(bad) // 2] ^= 0xFF
    members[2] = bytes(bad)
    f = tmp_path / "c.warc.gz"
    f.write_bytes(b"".join(members))
    run = subprocess.run([sys.executable, "-m", "pipelines.cli", "ingest", "--input", str(f), "--output", str(tmp_path / "o"),
                          "--quiet", "ingest.tokenizer=whitespace"], capture_output=True, text=True, cwd=Path(__file__).parents[2])
    assert run.returncode == 0, run.stderr
    assert f"{f}: 1 damaged stretch(es) skipped" in run.stderr and "corrupt gzip data" in run.stderr
    kept, ledger = read_parts(tmp_path / "o" / "docs"), read_parts(tmp_path / "o" / "ledger")
    assert sorted(kept["url"]) == [f"http://a.example/p{i}" for i in (0, 1, 3, 4, 5)]
    assert ledger["reason"].tolist() == ["truncated_input"] and json.loads(ledger["detail"].iloc[0])["line"] == 3
