"""WARC/WET files cut into partitions on record boundaries (issue 40), and cut files (issue 39.9)."""

from __future__ import annotations

import dataclasses
import gzip
import json
import random
import zlib
from pathlib import Path

import pandas as pd
import pytest

from curation.ingest.inputs import plan_inputs
from curation.ingest.readers import read_spec
from tests.curation.test_warc import write_warc
from tests.helpers import read_parts
from tests.pipelines.test_ingest import _ingest

ARTICLE = "<html><head><title>{t}</title></head><body><nav>Home</nav><article><h1>{t}</h1><p>{b}</p></article></body></html>"


def _crawl(path: Path, pages: int, words: int = 400, gzip_it: bool = True, seed: int = 0) -> Path:
    rng = random.Random(seed)
    vocab = [f"w{rng.randrange(50_000)}" for _ in range(3000)]
    records = []
    for i in range(pages):
        body = ARTICLE.format(t=f"Page {i}", b=" ".join(rng.choices(vocab, k=words))).encode()
        records.append({"url": f"https://a.example/p/{i}", "kind": "request", "body": b"GET / HTTP/1.1\r\n\r\n",
                        "ctype": "application/http; msgtype=request"})
        status = "404 Not Found" if i % 17 == 5 else "200 OK"
        records.append({"url": f"https://a.example/p/{i}", "body": body, "status": status,
                        "http": [("Content-Type", "text/html; charset=utf-8")]})
        if i % 23 == 7:  # the same page again: a duplicate URL across partitions
            records.append({"url": f"http://a.example/p/{i}", "body": body, "http": [("Content-Type", "text/html")]})
    write_warc(path, records, gzip_it=gzip_it)
    return path


def _members(blob: bytes) -> list[int]:
    out, pos = [], 0
    while pos < len(blob):
        d = zlib.decompressobj(31)
        d.decompress(blob[pos:])
        out.append(pos)
        pos = len(blob) - len(d.unused_data)
    return out


@pytest.mark.parametrize("gzip_it", [True, False])
def test_a_warc_read_in_small_partitions_gives_the_rows_of_one(tmp_path: Path, gzip_it: bool) -> None:
    from curation.ingest.warc_plan import warc_chunks

    f = _crawl(tmp_path / ("c.warc.gz" if gzip_it else "c.warc"), 60, gzip_it=gzip_it)
    chunks = warc_chunks(f, 20_000)
    assert len(chunks) >= 5 and chunks[-1].end == -1
    assert max(c.nbytes for c in chunks) < 2 * 20_000
    [spec] = plan_inputs([f], blocksize_mb=1, min_block_mb=1)  # 1 MB holds it: one partition
    whole = _values(read_spec(spec, 1_000_000))
    parts = [read_spec(dataclasses.replace(spec, start=c.start, end=c.end, first_line=c.first_line, nbytes=c.nbytes, docs=c.docs), 1_000_000)
             for c in chunks]
    pd.testing.assert_frame_equal(_values(pd.concat(parts, ignore_index=True)), whole)
    assert whole["_line"].tolist() == list(range(1, len(whole) + 1))
    assert whole["drop_reason"].notna().sum() >= 3 and json.loads(whole["drop_detail"].dropna().iloc[-1])["offset"] > 0


def _values(df: pd.DataFrame) -> pd.DataFrame:
    """The frame's values, whatever dtype pandas inferred for an all-null column of a partition."""
    return df.astype(object).where(df.notna(), None)


def test_ingest_output_is_the_same_whatever_the_warc_partitioning(tmp_path: Path) -> None:
    f = _crawl(tmp_path / "c.warc.gz", 500)  # ~1.5 MB of records: 1 MB blocks cut it in two
    small = tmp_path / "small"
    _ingest([f], small, ["ingest.blocksize_mb=1", "ingest.min_block_mb=1", "ingest.extractor=resiliparse"])
    one = tmp_path / "one"
    _ingest([f], one, ["ingest.extractor=resiliparse"])
    assert len(list((small / "artifacts" / "parsed").glob("part-*"))) >= 2
    assert len(list((one / "artifacts" / "parsed").glob("part-*"))) == 1
    for folder in ("docs", "ledger"):
        a, b = read_parts(small / folder), read_parts(one / folder)
        assert len(a) > 100 if folder == "docs" else len(a) > 10
        pd.testing.assert_frame_equal(a, b)
    assert set(read_parts(one / "ledger")["reason"]) == {"http_status", "duplicate_url"}


def _cut_inside_header(blob: bytes) -> bytes:
    """``blob`` cut 60 bytes into the header of its 10th record (inside its WARC-Target-URI or before)."""
    m = _members(blob)
    record = zlib.decompressobj(31).decompress(blob[m[9]:m[10]])
    return blob[: m[9]] + gzip.compress(record[:120], mtime=0)


@pytest.mark.parametrize("where", ["header", "header-member", "payload", "plain-header", "plain-payload"])
def test_a_warc_cut_anywhere_is_one_truncated_input_row(tmp_path: Path, where: str) -> None:
    plain = where.startswith("plain")
    f = _crawl(tmp_path / ("c.warc" if plain else "c.warc.gz"), 8, gzip_it=not plain)
    blob = f.read_bytes()
    if where == "header":  # the file ends in the gzip member of a record, inside its header
        m = _members(blob)
        blob = blob[: m[9] + 40]
    elif where == "header-member":  # a complete gzip member that holds a header cut short
        blob = _cut_inside_header(blob)
    elif where == "payload":
        m = _members(blob)
        blob = blob[: m[9]] + blob[m[9]: m[10]][:-200]
    elif where == "plain-header":
        blob = blob[: blob.index(b"WARC/1", blob.index(b"https://a.example/p/4\r\n")) + 150]
    else:
        blob = blob[: blob.index(b"<article>", blob.index(b"https://a.example/p/4\r\n"))]
    f.write_bytes(blob)
    out = tmp_path / "out"
    _ingest([f], out, ["ingest.extractor=resiliparse"])
    kept, ledger = read_parts(out / "docs"), read_parts(out / "ledger")
    cut = ledger[ledger["reason"] == "truncated_input"]
    assert len(cut) == 1, ledger[["reason", "detail"]]
    detail = json.loads(cut["detail"].iloc[0])
    assert "cut inside the record" in detail["error"] or "compressed stream cut" in detail["error"]
    assert isinstance(detail["offset"], int)
    assert set(ledger["reason"]) == {"truncated_input"}
    assert sorted(kept["url"]) == [f"https://a.example/p/{i}" for i in range(4)]  # every page before the cut, none after
    assert detail["line"] == 5 and (detail.get("url") is None or detail["url"] == "https://a.example/p/4")


def test_chunks_of_a_compressed_file_are_never_grouped_back(tmp_path: Path) -> None:
    """Grouping is for small files: a chunk's share of the (compressed) disk size is small, its bytes are not."""
    from curation.ingest.inputs import plan_partitions

    warc = _crawl(tmp_path / "c.warc.gz", 500)
    lines = b"".join(json.dumps({"id": f"j{i}", "text": f"{i} " * 300, "source": "web"}).encode() + b"\n" for i in range(3000))
    (tmp_path / "j.jsonl.gz").write_bytes(gzip.compress(lines, mtime=0))
    for f in (warc, tmp_path / "j.jsonl.gz"):
        groups = plan_partitions([f], blocksize_mb=1, min_block_mb=1, min_partitions=1)
        assert len(groups) >= 2 and all(len(g) == 1 for g in groups)
        assert all(g[0].nbytes <= 1 << 20 for g in groups)


def test_a_crawl_file_is_cut_in_blocks_of_at_least_crawl_min_block_mb_and_jsonl_is_not(tmp_path: Path) -> None:
    """A page's text is a few % of its record: crawl files get a block of their own (ingest.crawl_min_block_mb),
    so that the partitions every later stage reads are not a few hundred KB of documents."""
    from curation.ingest.inputs import plan_partitions

    warc = _crawl(tmp_path / "c.warc.gz", 1500)
    raw = len(gzip.decompress(warc.read_bytes()))
    assert 3 << 20 < raw < 8 << 20
    lines = b"".join(json.dumps({"id": f"j{i}", "text": f"{i} " * 300, "source": "web"}).encode() + b"\n" for i in range(5000))
    (tmp_path / "j.jsonl").write_bytes(lines)

    def parts(f: Path, crawl_mb: int | None) -> list:
        extra = {} if crawl_mb is None else {"crawl_min_block_mb": crawl_mb}
        return plan_partitions([f], blocksize_mb=8, min_block_mb=1, min_partitions=16, **extra)

    assert len(parts(warc, 1)) == -(-raw // (1 << 20))  # the JSONL rule's 1 MB block
    assert len(parts(warc, 2)) == -(-raw // (2 << 20))
    assert len(parts(warc, None)) == 1  # the default (128 MB), capped by blocksize_mb (8): the whole file
    jsonl = [len(parts(tmp_path / "j.jsonl", mb)) for mb in (1, 2, None)]
    assert jsonl[0] == jsonl[1] == jsonl[2] == -(-len(lines) // (1 << 20))
