"""WARC reading (FastWARC vs warcio) and WARC → documents end to end, in MB per CPU-second.

    python benchmarks/extract/bench_crawl.py [--pages 300,600] [--extractor trafilatura]   # rows of other extractors stay in crawl_results.json

Real pages (``html`` of ../shared/data/web/web_docs.parquet: WCXB, trafilatura's evaluation
pages, scrapinghub, raw Common Crawl responses) are written into gzipped WARC files with warcio,
each as a request + response pair as in Common Crawl. Then, per size:

1. **read**: iterate the response records and read their payloads, FastWARC vs warcio (the two
   maintained readers on PyPI), CPU seconds of this process;
2. **end to end**: ``curate ingest`` on the file with one worker process (``--workers 1``): read,
   decode, extract, count tokens, write Parquet. MB/s per core = uncompressed WARC MB / CPU
   seconds of the worker and the client (``resource`` children + self), so the other load on the
   machine does not enter.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[2]
DATA = Path(os.environ.get("CURATION_SHARED_DATA", ROOT.parent / "shared" / "data")) / "web" / "web_docs.parquet"
OUT = Path(__file__).resolve().parent / "crawl_results.json"


def write_warc(pages: pd.DataFrame, path: Path) -> int:
    """Write ``pages`` (url, html) as request/response pairs; returns the uncompressed bytes written."""
    from warcio.statusandheaders import StatusAndHeaders
    from warcio.warcwriter import WARCWriter

    raw = 0
    with open(path, "wb") as fh:
        writer = WARCWriter(fh, gzip=True)
        for i, (url, html) in enumerate(zip(pages["url"], pages["html"], strict=True)):
            url = url or f"https://page{i}.example/"
            body = html.encode("utf-8", "surrogatepass")
            req = writer.create_warc_record(url, "request", payload=io.BytesIO(b"GET / HTTP/1.1\r\n\r\n"),
                                            warc_content_type="application/http; msgtype=request")
            writer.write_record(req)
            http = StatusAndHeaders("200 OK", [("Content-Type", "text/html; charset=utf-8")], protocol="HTTP/1.1")
            writer.write_record(writer.create_warc_record(url, "response", payload=io.BytesIO(body), http_headers=http))
            raw += len(body) + 600
    return raw


def read_fastwarc(path: Path) -> int:
    from fastwarc.warc import ArchiveIterator, WarcRecordType

    n = 0
    for rec in ArchiveIterator(str(path), record_types=WarcRecordType.response, parse_http=True, fsspec_args=False):
        n += len(rec.reader.read())
    return n


def read_warcio(path: Path) -> int:
    from warcio.archiveiterator import ArchiveIterator

    n = 0
    with open(path, "rb") as fh:
        for rec in ArchiveIterator(fh):
            if rec.rec_type == "response":
                n += len(rec.content_stream().read())
    return n


def cpu_of(fn, *args) -> tuple[float, object]:
    t = time.process_time()
    out = fn(*args)
    return time.process_time() - t, out


def end_to_end(path: Path, work: Path, extractor: str) -> dict:
    out = work / f"run-{path.stem}-{extractor}"
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.time()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run([sys.executable, "-m", "pipelines.cli", "ingest", "--input", str(path), "--output", str(out),
                           "--workers", "1", "--quiet", f"extractor={extractor}"], cwd=ROOT, env=env, capture_output=True, text=True)
    wall = time.time() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(proc.stderr[-3000:])
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    stats = json.loads((out / "stats.json").read_text())
    return {"cpu_s": round(cpu, 1), "wall_s": round(wall, 1), "kept": stats["kept"]["documents"], "in": stats["in"]["documents"]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pages", default="300,600", help="WARC sizes in pages (two at least: how cost grows)")
    ap.add_argument("--extractor", default="trafilatura")
    args = ap.parse_args()
    if not DATA.exists():
        sys.exit(f"{DATA} is absent: this benchmark needs the shared real pages")
    df = pd.read_parquet(DATA, columns=["source", "url", "html"])
    df = df[df["html"].str.len() > 0].sample(frac=1.0, random_state=0).reset_index(drop=True)
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        for n in [int(x) for x in args.pages.split(",")]:
            path = work / f"pages{n}.warc.gz"
            raw = write_warc(df.head(n), path)
            mb = raw / 1e6
            fw_cpu, fw_bytes = cpu_of(read_fastwarc, path)
            wi_cpu, wi_bytes = cpu_of(read_warcio, path)
            assert abs(fw_bytes - wi_bytes) < 1e-4 * wi_bytes, (fw_bytes, wi_bytes)  # payload readers differ by a few bytes of HTTP framing
            e2e = end_to_end(path, work, args.extractor)
            row = {"pages": n, "warc_mb_uncompressed": round(mb, 2), "warc_mb_gz": round(path.stat().st_size / 1e6, 2),
                   "fastwarc_mb_per_cpu_s": round(mb / fw_cpu, 1), "warcio_mb_per_cpu_s": round(mb / wi_cpu, 1),
                   "extractor": args.extractor, **{f"e2e_{k}": v for k, v in e2e.items()},
                   "e2e_mb_per_cpu_s": round(mb / e2e["cpu_s"], 3), "e2e_pages_per_cpu_s": round(n / e2e["cpu_s"], 1)}
            print(json.dumps(row), flush=True)
            results.append(row)
    done = {(r["pages"], r["extractor"]) for r in results}  # rows of other extractors stay, one file for the table
    kept = [r for r in (json.loads(OUT.read_text()) if OUT.exists() else []) if (r["pages"], r["extractor"]) not in done]
    OUT.write_text(json.dumps(kept + results, indent=1) + "\n")


if __name__ == "__main__":
    main()
