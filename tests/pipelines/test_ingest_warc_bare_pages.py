"""A response record that holds a page without its HTTP header block, with no blank line in its first
32 KiB (FastWARC's own limit on header lines), is one ``undecodable`` row and the records after it are
read, in a plain ``.warc``, a ``.warc.gz`` of one member per record and one of a single member. A
row's ``offset`` in a ``.warc.gz`` of one gzip member (what ``gzip file.warc`` writes) is the record's
byte in the decompressed file, said by ``offset_in``; the other files' offsets stay bytes on disk.

Records are real pages (``web/web_docs.parquet`` of the shared data, synthetic pages where it is absent),
written byte by byte: no writer would store a page without its HTTP header block.
"""

from __future__ import annotations

import gzip
import json
import uuid
from pathlib import Path

from curation.ingest.warc import iter_warc
from curation.ingest.warc_plan import warc_chunks
from pipelines.cli import main as curate
from tests.curation.test_warc_http_bodies import members, real_pages
from tests.helpers import read_parts
from tests.pipelines.test_runner import _run


def record(n: int, url: str, http: bytes) -> bytes:
    head = (f"WARC/1.0\r\nWARC-Type: response\r\nWARC-Record-ID: <urn:uuid:{uuid.UUID(int=n)}>\r\nWARC-Target-URI: {url}\r\n"
            f"WARC-Date: 2024-01-02T03:04:05Z\r\nContent-Type: application/http; msgtype=response\r\nContent-Length: {len(http)}\r\n\r\n")
    return head.encode() + http + b"\r\n\r\n"


def bare_page() -> bytes:
    """40 KiB of a real page's text on one line: no blank line, no HTTP status line."""
    text = b" ".join(b"".join(real_pages()).split())
    return text[:40 * 1024]


def records(site: str, base: int) -> list[bytes]:
    """Five response records; the second holds the bare page."""
    p = real_pages()
    http = [b"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n\r\n" + p[i] for i in range(5)]
    http[1] = bare_page()
    assert b"\n\n" not in http[1] and b"\r\n\r\n" not in http[1] and len(http[1]) > 32 * 1024
    return [record(base + i, f"http://{site}/{i + 1}", h) for i, h in enumerate(http)]


def write(folder: Path) -> dict[str, tuple[Path, list[bytes]]]:
    """The three layouts, each its own URLs and record ids."""
    folder.mkdir()
    out = {}
    for kind, name, base in (("plain", "p.warc", 0), ("members", "m.warc.gz", 10), ("one", "o.warc.gz", 20)):
        recs = records(f"{kind}.example", base)
        blob = {"plain": b"".join(recs), "members": b"".join(gzip.compress(r, mtime=0) for r in recs),
                "one": gzip.compress(b"".join(recs), mtime=0)}[kind]
        (folder / name).write_bytes(blob)
        out[kind] = (folder / name, recs)
    return out


def read(path: Path) -> list[dict]:
    """The rows of a file as ingest reads it: planned, then partition by partition."""
    rows = []
    for c in warc_chunks(path, 1 << 27):
        rows += iter_warc(path, 10_000_000, c.start, c.end, c.first_line, c.docs, None, c.one_member)
    return rows


def test_a_page_without_its_http_header_block_is_one_row_and_the_file_is_read_on(tmp_path: Path) -> None:
    for kind, (path, _) in write(tmp_path / "in").items():
        rows = list(iter_warc(path, 10_000_000))  # FastWARC stopped at record 2: records 3 to 5 were lost
        assert [r["line"] for r in rows] == [1, 2, 3, 4, 5], kind
        assert ["error" in r for r in rows] == [False, True, False, False, False], kind
        assert rows[1]["error"][0].value == "undecodable" and "no HTTP status line" in rows[1]["error"][1], kind
        assert not any(r.get("stopped") for r in rows), kind
        assert [r["url"] for r in rows] == [f"http://{kind}.example/{i}" for i in range(1, 6)]


def test_offsets_of_a_one_member_warc_gz_are_decompressed_bytes_and_of_others_bytes_on_disk(tmp_path: Path) -> None:
    files = write(tmp_path / "in")
    path, recs = files["one"]
    starts = [sum(len(r) for r in recs[:i]) for i in range(5)]
    rows = read(path)
    assert [r["offset"] for r in rows] == starts and all(r["offset_in"] == "decompressed" for r in rows)
    whole = gzip.decompress(path.read_bytes())
    for r, rec in zip(rows, recs, strict=True):  # skip `offset` decompressed bytes: the record starts there
        assert whole[r["offset"]:].startswith(rec[:300])
    path, recs = files["members"]  # Common Crawl's layout: the start of the record's own member, as before
    rows = read(path)
    assert [r["offset"] for r in rows] == [c for c, _ in members(path.read_bytes())] and not any("offset_in" in r for r in rows)
    path, recs = files["plain"]
    assert [r["offset"] for r in read(path)] == [sum(len(r) for r in recs[:i]) for i in range(5)]


def test_a_run_keeps_the_records_after_a_bare_page_ledgers_it_and_verifies(tmp_path: Path) -> None:
    files = write(tmp_path / "in")
    _run(tmp_path / "in", tmp_path / "run", scheduler=None, workers=1)  # the embedded LocalCluster
    assert curate(["verify", str(tmp_path / "run")]) == 0
    kept = read_parts(tmp_path / "run" / "00_ingest" / "docs")
    ledger = read_parts(tmp_path / "run" / "00_ingest" / "ledger")
    assert sorted(kept["url"]) == sorted(f"http://{k}.example/{i}" for k in files for i in (1, 3, 4, 5))
    rows = {json.loads(d)["file"].rsplit("/", 1)[-1]: (reason, json.loads(d)) for reason, d in zip(ledger["reason"], ledger["detail"], strict=True)}
    assert sorted(rows) == ["m.warc.gz", "o.warc.gz", "p.warc"] and {r for r, _ in rows.values()} == {"undecodable"}
    assert all(d["line"] == 2 and "stopped" not in d for _, d in rows.values())
    one = files["one"][1]
    assert rows["o.warc.gz"][1]["offset"] == len(one[0]) and rows["o.warc.gz"][1]["offset_in"] == "decompressed"
    assert rows["m.warc.gz"][1]["offset"] == members(files["members"][0].read_bytes())[1][0] and "offset_in" not in rows["m.warc.gz"][1]
    assert rows["p.warc"][1]["offset"] == len(files["plain"][1][0]) and "offset_in" not in rows["p.warc"][1]


def test_header_lines_over_32_kib_are_read_up_to_max_html_bytes(tmp_path: Path) -> None:
    """A 40 KiB WARC header line or HTTP cookie is read (FastWARC alone stops the file at 32 KiB of header lines)."""
    p = real_pages()
    ok = b"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n\r\n"
    cookie = b"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nSet-Cookie: " + b"a" * 40_000 + b"\r\n\r\n"
    warc_line = record(2, "http://h.example/2", ok + p[1]).replace(b"WARC-Date:", b"X-Note: " + b"b" * 40_000 + b"\r\nWARC-Date:")
    f = tmp_path / "h.warc.gz"
    f.write_bytes(b"".join(gzip.compress(r) for r in (record(1, "http://h.example/1", ok + p[0]), warc_line,
                                                       record(3, "http://h.example/3", cookie + p[2]), record(4, "http://h.example/4", ok + p[3]))))
    rows = read(f)
    assert [r.get("html") for r in rows] == [p[i].decode() for i in range(4)]
