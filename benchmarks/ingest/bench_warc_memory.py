"""Peak memory of reading one WARC partition against the partition size.

Ingest cuts a WARC on record boundaries (gzip members) into
partitions of at most ``ingest.blocksize_mb``. This script writes a Common-Crawl-style WARC (one
gzip member per record) of ``--mb`` MB uncompressed from the real pages of ``../shared/data``
(``web/web_docs.parquet``: every row with raw ``html``, repeated under new URLs until the size is
reached), plans it at each ``--block`` (MB; 0: the whole file as one partition) and, in a fresh
process per size, reads the largest partition as a worker's parse step does (FastWARC, charset
decoding, schema rows, token counts, language ID), reporting that process's peak RSS.

    python benchmarks/ingest/bench_warc_memory.py --mb 240 --block 16 64 0
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DATA = Path(os.environ.get("CURATION_SHARED_DATA", ROOT.parent / "shared" / "data")) / "web" / "web_docs.parquet"

CHILD = r"""
import json, sys, time
from pathlib import Path
import pandas as pd
from classifiers.langid import annotate as annotate_language
from curation.ingest.inputs import plan_partitions
from curation.ingest.readers import read_group
from curation.tokens import count_tokens
def hwm():  # this process's peak RSS, MB (VmHWM: unlike ru_maxrss, not inherited from the parent across exec)
    return next(int(x.split()[1]) for x in open("/proc/self/status") if x.startswith("VmHWM")) / 1024
path, block = Path(sys.argv[1]), int(sys.argv[2])
groups = plan_partitions([path], blocksize_mb=block or 4096, min_block_mb=block or 4096, min_partitions=1)
group = max(groups, key=lambda g: sum(s.nbytes for s in g))
base = hwm()
t0 = time.perf_counter()
df = read_group(group, 20_000_000, 10_000_000)
ok = df["drop_reason"].isna().to_numpy() & df["text"].notna().to_numpy()
annotate_language(df, ok)
html_mb = df["_html"].dropna().str.len().sum() / 2**20
peak = hwm()
print(json.dumps({"partitions": len(groups), "largest_mb": sum(s.nbytes for s in group) / 2**20, "rows": len(df),
                  "html_mb": html_mb, "base_mb": base, "peak_mb": peak, "seconds": time.perf_counter() - t0}))
"""


def write_warc(path: Path, mb: int) -> int:
    """A gzip-per-record WARC of real pages, ``mb`` MB uncompressed; returns the number of responses."""
    import pandas as pd

    pages = pd.read_parquet(DATA, columns=["html"])["html"].dropna()
    pages = [p.encode("utf-8") for p in pages if len(p) > 2000]
    n, size, target = 0, 0, mb << 20
    with open(path, "wb") as fh:
        while size < target:
            body = pages[n % len(pages)]
            http = (b"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: " + str(len(body)).encode()
                    + b"\r\n\r\n" + body)
            head = (f"WARC/1.0\r\nWARC-Type: response\r\nWARC-Target-URI: https://page{n}.example.org/{n % len(pages)}\r\n"
                    f"WARC-Date: 2024-03-01T00:00:00Z\r\nWARC-Record-ID: <urn:uuid:{uuid.UUID(int=n)}>\r\n"
                    f"Content-Type: application/http; msgtype=response\r\nContent-Length: {len(http)}\r\n\r\n").encode()
            record = head + http + b"\r\n\r\n"
            fh.write(gzip.compress(record, compresslevel=6, mtime=0))
            size += len(record)
            n += 1
    return n


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mb", type=int, default=240, help="uncompressed size of the WARC (default 240)")
    ap.add_argument("--block", type=int, nargs="+", default=[16, 64, 0], help="ingest.blocksize_mb values; 0: one partition")
    args = ap.parse_args()
    if not DATA.exists():
        raise SystemExit(f"{DATA} is missing: this benchmark needs the real pages of ../shared/data")
    with tempfile.TemporaryDirectory(prefix="bench-warc-") as tmp:
        path = Path(tmp) / "crawl.warc.gz"
        t0 = time.perf_counter()
        n = write_warc(path, args.mb)
        print(f"WARC: {n:,} responses, {args.mb} MB uncompressed, {path.stat().st_size / 2**20:.0f} MB on disk "
              f"(written in {time.perf_counter() - t0:.0f} s)\n")
        print("| blocksize_mb | partitions | largest partition MB | its rows | peak RSS MB | over the process's start MB | seconds |")
        print("|---:|---:|---:|---:|---:|---:|---:|")
        for block in args.block:
            out = subprocess.run([sys.executable, "-c", CHILD, str(path), str(block)], capture_output=True, text=True, check=True)
            r = json.loads(out.stdout.strip().splitlines()[-1])
            label = block or "one partition (whole file)"
            print(f"| {label} | {r['partitions']} | {r['largest_mb']:.0f} | {r['rows']:,} | {r['peak_mb']:.0f} | "
                  f"{r['peak_mb'] - r['base_mb']:.0f} | {r['seconds']:.0f} |", flush=True)


if __name__ == "__main__":
    main()
