"""Hostile input, round three (issue 39): cut streams, unencodable records, special files, empty and odd encodings."""

from __future__ import annotations

import contextlib
import gzip
import json
import os
import random
import socket
import threading
import time
import zlib
from pathlib import Path

import pytest

from curation.ingest.inputs import InputError
from tests.helpers import read_parts
from tests.pipelines.test_ingest import _ingest, _write_jsonl


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


def test_a_lone_surrogate_is_a_ledger_row_not_a_stop(tmp_path: Path) -> None:
    f = tmp_path / "s.jsonl"
    f.write_bytes(b'{"id": "a", "text": "fine", "source": "web"}\n'
                  b'{"id": "b", "text": "bad \\ud800 half", "source": "web"}\n'
                  b'{"id": "c", "text": "emoji \\ud83d\\ude00 pair", "source": "web"}\n'
                  b'{"id": "d", "text": "ok", "source": "web", "meta": {"note": "\\udfff"}}\n'
                  b'{"id": "e", "text": "a literal \\\\ud800 is text", "source": "web"}\n')
    _ingest([f], tmp_path / "out")  # on_error: ledger (the recipe's default)
    kept = read_parts(tmp_path / "out" / "docs")
    assert kept["doc_id"].tolist() == ["a", "c", "e"] and kept["text"].iloc[1] == "emoji \U0001f600 pair"
    ledger = read_parts(tmp_path / "out" / "ledger")
    got = [(r, json.loads(d)["file"], json.loads(d)["line"]) for r, d in zip(ledger["reason"], ledger["detail"], strict=True)]
    assert got == [("invalid_utf8", str(f), 2), ("invalid_utf8", str(f), 4)]
    assert "\\ud800" in json.loads(ledger["detail"].iloc[0])["error"]


def _unblock_readers(fifo: Path, stop: threading.Event) -> None:
    """Open ``fifo`` for writing whenever someone reads it (a reader blocks until then): a test never hangs."""
    def run() -> None:
        while not stop.is_set():
            with contextlib.suppress(OSError):  # no reader yet
                os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
            time.sleep(0.02)
    threading.Thread(target=run, daemon=True).start()


@pytest.mark.timeout(300)
def test_fifos_devices_and_sockets_are_refused_with_a_message(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.jsonl"
    os.mkfifo(fifo)
    stop = threading.Event()
    _unblock_readers(fifo, stop)
    try:
        with pytest.raises(InputError, match="is a FIFO"):
            _ingest([fifo], tmp_path / "out")
    finally:
        stop.set()
    folder = tmp_path / "folder"
    folder.mkdir()
    _write_jsonl(folder / "a.jsonl", [{"id": "a", "text": "x", "source": "web"}])
    os.mkfifo(folder / "b.jsonl")
    with pytest.raises(InputError, match="b.jsonl is a FIFO"):
        _ingest([folder], tmp_path / "out")
    (folder / "b.jsonl").unlink()
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(folder / "c.sock"))
    try:
        with pytest.raises(InputError, match="c.sock is a socket"):
            _ingest([folder], tmp_path / "out")
    finally:
        sock.close()
    (folder / "c.sock").unlink()
    os.symlink("/dev/null", tmp_path / "null.jsonl")
    with pytest.raises(InputError, match="is a character device"):
        _ingest([tmp_path / "null.jsonl"], tmp_path / "out")
    assert not (tmp_path / "out").exists()
    _ingest([folder], tmp_path / "out")  # the folder without them reads
    assert read_parts(tmp_path / "out" / "docs")["doc_id"].tolist() == ["a"]


def test_zero_byte_files_read_as_empty_in_every_format(tmp_path: Path) -> None:
    for name in ("e.jsonl", "e.jsonl.gz", "e.jsonl.zst", "e.parquet", "e.warc", "e.warc.gz", "e.html"):
        (tmp_path / name).write_bytes(b"")
    good = _write_jsonl(tmp_path / "good.jsonl", [{"id": "g", "text": "the only document", "source": "web"}])
    res = _ingest(sorted(tmp_path.glob("e.*")) + [good], tmp_path / "out")
    assert read_parts(tmp_path / "out" / "docs")["doc_id"].tolist() == ["g"]
    assert read_parts(tmp_path / "out" / "ledger").empty
    assert res.stats["in"]["documents"] == 1


ARTICLE = "<html><head><title>Tides</title></head><body><article><h1>Tides</h1><p>{}</p></article></body></html>"
BODY = " ".join(f"The tide table for day {i} lists two high waters and two low waters at the harbour." for i in range(12))


def test_utf16_and_utf32_pages_are_decoded_not_binary(tmp_path: Path) -> None:
    from tests.curation.test_warc import write_warc

    page = ARTICLE.format(BODY)
    write_warc(tmp_path / "c.warc.gz", [
        {"url": "https://a.example/16", "body": page.encode("utf-16"), "http": [("Content-Type", "text/html; charset=utf-16")]},
        {"url": "https://a.example/16le", "body": page.encode("utf-16-le"), "http": [("Content-Type", "text/html; charset=UTF-16LE")]},
        {"url": "https://a.example/32", "body": page.encode("utf-32"), "http": [("Content-Type", "text/html")]},  # BOM only
        {"url": "https://a.example/png", "body": b"\x89PNG\r\n\x1a\n\x00\x00", "http": [("Content-Type", "text/html; charset=utf-16")]},
    ])
    (tmp_path / "p.html").write_bytes(page.replace("Tides", "Tide tables").encode("utf-16"))
    _ingest([tmp_path / "c.warc.gz", tmp_path / "p.html"], tmp_path / "out", ["ingest.url_dedup_sources=[]"])
    kept = read_parts(tmp_path / "out" / "docs")
    assert sorted(kept["url"].dropna()) == ["https://a.example/16", "https://a.example/16le", "https://a.example/32"]
    assert len(kept) == 4 and kept["text"].str.contains("two high waters").all()
    ledger = read_parts(tmp_path / "out" / "ledger")
    assert ledger["reason"].tolist() == ["binary_content"]


def test_binary_parquet_text_columns_of_utf8_are_text(tmp_path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.table({"id": pa.array([b"b1", b"b2", b"b3"], pa.binary()),
                      "text": pa.array(["caf\u00e9 au lait".encode(), b"plain words", b"\xff\xfe not utf-8"], pa.binary()),
                      "source": ["web", "web", "web"]})
    pq.write_table(table, tmp_path / "bin.parquet")
    _ingest([tmp_path / "bin.parquet"], tmp_path / "out")
    kept = read_parts(tmp_path / "out" / "docs")
    assert kept["doc_id"].tolist() == ["b1", "b2"] and kept["text"].tolist() == ["caf\u00e9 au lait", "plain words"]
    ledger = read_parts(tmp_path / "out" / "ledger")
    assert ledger["reason"].tolist() == ["invalid_utf8"] and ledger["doc_id"].tolist() == ["b3"]


def test_many_small_files_share_size_balanced_partitions(tmp_path: Path) -> None:
    folder = tmp_path / "many"
    folder.mkdir()
    for i in range(120):
        rows = [{"id": f"f{i}-{k}", "text": f"file {i} record {k}", "source": "web", "url": f"https://a.example/{i}/{k}"}
                for k in range(3)]
        if i == 90:
            rows[1]["id"] = "f10-2"  # a duplicate id: the first in input order (file 10) is kept
        if i == 100:
            rows[2]["url"] = "https://a.example/20/0"  # a duplicate URL: the first in input order (file 20) is kept
        _write_jsonl(folder / f"f{i:03d}.jsonl{'.gz' if i % 2 else ''}", rows)
    _ingest([folder], tmp_path / "out")
    parts = list((tmp_path / "out" / "artifacts" / "parsed").glob("part-*.parquet"))
    assert 8 <= len(parts) < 2 * 16  # about min_partitions (greedy packing: under twice it), not one per file
    kept = read_parts(tmp_path / "out" / "docs")
    expected = [f"f{i}-{k}" for i in range(120) for k in range(3) if (i, k) not in ((90, 1), (100, 2))]
    assert kept["doc_id"].tolist() == expected
    ledger = read_parts(tmp_path / "out" / "ledger").set_index("reason")
    assert json.loads(ledger.loc["duplicate_id", "detail"])["first_file"].endswith("f010.jsonl")
    assert json.loads(ledger.loc["duplicate_url", "detail"])["duplicate_of"] == "f20-0"


def test_a_group_of_small_files_reads_as_its_files_one_by_one(tmp_path: Path) -> None:
    import pandas as pd

    from curation.ingest.inputs import plan_inputs
    from curation.ingest.readers import read_group, read_spec

    _write_jsonl(tmp_path / "a.jsonl", [{"id": "a", "text": "one", "source": "web"}, b"{bad"])
    _write_jsonl(tmp_path / "b.jsonl.gz", [{"id": "b", "text": "two"}, {"id": "b2", "text": ""}])
    blob = gzip.compress(_records(200, seed=2), mtime=0)
    (tmp_path / "c.jsonl.gz").write_bytes(blob[: len(blob) // 2])
    pd.DataFrame({"text": ["pq"], "id": ["p"], "source": ["web"]}).to_parquet(tmp_path / "d.parquet")
    _write_jsonl(tmp_path / "e.jsonl", [{"id": "e", "text": "five", "source": "web"}])
    specs = plan_inputs([tmp_path], source="code")
    one_by_one = pd.concat([read_spec(s, 1000) for s in specs], ignore_index=True)
    together = read_group(specs, 1000, 1000)
    assert together["_file"].tolist() == one_by_one["_file"].tolist() and len(together) > 10
    for col in ("doc_id", "text", "source", "_line", "drop_reason", "drop_detail"):
        assert together[col].tolist() == one_by_one[col].tolist(), col
    assert json.loads(together["drop_detail"].dropna().iloc[-1])["offset"] > 0
