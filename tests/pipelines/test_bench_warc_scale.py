"""The WARC builder of benchmarks/ingest/bench_warc_scale.py: files of the sizes asked, a smaller one a
prefix of a larger, every record its own URL and id, and what the ingest reader reads back is the pages."""

from __future__ import annotations

import importlib.util
import zlib
from pathlib import Path

import pandas as pd

from curation.ingest.inputs import plan_partitions
from curation.ingest.readers import read_group
from curation.ingest.urls import normalize_url

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "ingest" / "bench_warc_scale.py"
PAGES = [(f"https://site{i}.example/a?b={i}" if i % 2 else f"https://www.site{i}.example/p#x",
          f"<html><head><title>P{i}</title></head><body><article><p>{'text ' * (200 + 37 * i)}</p></article></body></html>".encode())
         for i in range(3)]


def _bench():
    spec = importlib.util.spec_from_file_location("bench_warc_scale", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _members(blob: bytes) -> int:
    count, rest = 0, blob
    while rest:
        d = zlib.decompressobj(31)
        d.decompress(rest)
        rest, count = d.unused_data, count + 1
    return count


def test_builder_writes_sizes_as_prefixes_one_member_per_record(tmp_path: Path) -> None:
    bench = _bench()
    small, large = tmp_path / "s.warc.gz", tmp_path / "l.warc.gz"
    done = bench.build_warcs(PAGES, {large: 20_000, small: 6_000})
    assert done[small]["bytes"] == small.stat().st_size >= 6_000 and done[large]["bytes"] == large.stat().st_size >= 20_000
    assert done[large]["records"] > done[small]["records"] > len(PAGES)  # the pages repeat
    assert large.read_bytes().startswith(small.read_bytes())
    assert _members(large.read_bytes()) == done[large]["records"]  # Common Crawl's layout: a gzip member per record


def test_ingest_reads_every_record_as_its_own_page(tmp_path: Path) -> None:
    bench = _bench()
    f = tmp_path / "c.warc.gz"
    n = bench.build_warcs(PAGES, {f: 30_000})[f]["records"]
    whole = pd.concat([read_group(g, 1_000_000, 1_000_000) for g in plan_partitions([f], min_partitions=1)], ignore_index=True)
    assert len(whole) == n and whole["drop_reason"].isna().all()
    assert whole["url"].map(normalize_url).nunique() == n and whole["doc_id"].nunique() == n
    assert whole["_html"].tolist() == [PAGES[i % len(PAGES)][1].decode() for i in range(n)]
