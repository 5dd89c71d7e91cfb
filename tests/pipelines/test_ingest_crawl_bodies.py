"""`curate ingest --quiet` on crawl files with a body labelled chunked that is not, a repeated URL, an
empty page, HTTP header lines over the bound and a file FastWARC stops reading: every record read on,
``duplicate_url`` rows name their file and line, the stopped file is said in a warning, and no
third-party log line shows."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path

from tests.curation.test_warc_damaged import long_warc_header, ok
from tests.curation.test_warc_http_bodies import TE, real_pages, warc
from tests.helpers import read_parts


def test_crawl_bodies_end_to_end(tmp_path: Path) -> None:
    p = real_pages()
    a = warc(tmp_path / "a.warc.gz", [("http://m.example/1", p[0]), ("http://m.example/dechunked", p[1], TE),
                                      ("http://m.example/empty", b"  \n\n  "), ("http://m.example/3", p[2]),
                                      ("https://www.m.example/1#again", p[3])])
    big = b"Content-Type: text/html\r\nSet-Cookie: " + b"a" * 140_000 + b"\r\n"  # over max_html_bytes + 32 KiB of HTTP header lines
    z = warc(tmp_path / "z.warc.gz", [("http://z.example/1", p[4]), ("http://z.example/big", p[5], big), ("http://z.example/3", p[0])])
    # WARC header lines over that bound: FastWARC reads no further
    z.write_bytes(z.read_bytes() + gzip.compress(long_warc_header("long", 140_000)) + gzip.compress(ok("after")))
    run = subprocess.run([sys.executable, "-m", "pipelines.cli", "ingest", "--input", str(a), str(z), "--output", str(tmp_path / "o"),
                          "--quiet", "ingest.tokenizer=whitespace", "ingest.max_html_bytes=100000"], capture_output=True, text=True, cwd=Path(__file__).parents[2])
    assert run.returncode == 0, run.stderr
    kept, ledger = read_parts(tmp_path / "o" / "docs"), read_parts(tmp_path / "o" / "ledger")
    urls = {"http://m.example/1", "http://m.example/dechunked", "http://m.example/3", "http://z.example/1"}
    assert urls | {"http://z.example/3"} == set(kept["url"])
    rows = {r: json.loads(d) for r, d in zip(ledger["reason"], ledger["detail"], strict=True)}
    assert rows["too_large"]["line"] == 2 and rows["too_large"]["error"].startswith("HTTP header lines over")
    assert rows["duplicate_url"]["file"] == str(a) and rows["duplicate_url"]["line"] == 5
    assert rows["extraction_empty"]["line"] == 3
    stopped = rows["truncated_input"]
    assert stopped["file"] == str(z) and stopped["line"] == 4 and stopped["stopped"] is True
    assert "1 crawl file(s) or partitions were not read to the end" in run.stderr and str(z) in run.stderr
    assert "trafilatura" not in run.stderr  # its per-page ERROR lines are no error of the run
