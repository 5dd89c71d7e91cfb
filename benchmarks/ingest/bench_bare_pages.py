"""Rows and CPU of planning and reading real pages (``web/web_docs.parquet``, every page with HTML) written
three ways, for source trees side by side: one gzip member per record (Common Crawl's layout), the same
records gzipped whole (one member, as ``gzip file.warc`` writes), and one member per record where every
20th record holds its page without an HTTP header block, on one line (no blank line in its first 32 KiB).

    python benchmarks/ingest/bench_bare_pages.py --data ../shared/data --tree before=/tmp/old --tree after=.

Each (file, tree) is planned (``warc_chunks``) and read partition by partition (``iter_warc``), as ingest
reads it, in a fresh process ``--reps`` times, interleaved; the median CPU seconds of each part, the rows by
outcome and a digest of the rows' outcomes and of their offsets are printed.
"""

from __future__ import annotations

import argparse
import collections
import gzip
import hashlib
import json
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path


def record(n: int, http: bytes) -> bytes:
    head = (f"WARC/1.0\r\nWARC-Type: response\r\nWARC-Record-ID: <urn:uuid:{uuid.UUID(int=n)}>\r\n"
            f"WARC-Target-URI: http://p.example/{n}\r\nWARC-Date: 2024-01-02T03:04:05Z\r\n"
            f"Content-Type: application/http; msgtype=response\r\nContent-Length: {len(http)}\r\n\r\n")
    return head.encode() + http + b"\r\n\r\n"


def write(pages: list[bytes], folder: Path) -> None:
    ok = [record(i, b"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n\r\n" + p) for i, p in enumerate(pages)]
    bare = [record(i, b" ".join(p.split())) if i % 20 == 19 else r for i, (p, r) in enumerate(zip(pages, ok, strict=True))]
    (folder / "members.warc.gz").write_bytes(b"".join(gzip.compress(r, mtime=0) for r in ok))
    (folder / "one.warc.gz").write_bytes(gzip.compress(b"".join(ok), mtime=0))
    (folder / "bare.warc.gz").write_bytes(b"".join(gzip.compress(r, mtime=0) for r in bare))


def read_once(tree: str, path: str) -> None:
    sys.path.insert(0, tree)
    from curation.ingest.warc import iter_warc, until_cut
    from curation.ingest.warc_plan import warc_chunks

    t0 = time.process_time()
    chunks = warc_chunks(Path(path), 1 << 30)
    t1 = time.process_time()
    rows = []
    for c in chunks:
        one = {"one_member": c.one_member} if hasattr(c, "one_member") else {}
        rows += until_cut(iter_warc(Path(path), 10_000_000, c.start, c.end, c.first_line, c.docs if c.docs >= 0 else None, **one), c.cut, path)
    t2 = time.process_time()
    outcome = [str(getattr(r["error"][0], "value", r["error"][0])) + ("+stopped" if r.get("stopped") else "") if "error" in r else "html" for r in rows]
    print(json.dumps({"plan": t1 - t0, "read": t2 - t1, "rows": dict(collections.Counter(outcome)),
                      "outcomes": hashlib.sha256(json.dumps([[r["line"], o, r.get("html")] for r, o in zip(rows, outcome, strict=True)]).encode()).hexdigest()[:12],
                      "offsets": hashlib.sha256(json.dumps([r["offset"] for r in rows]).encode()).hexdigest()[:12]}))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", type=Path, required=True)
    ap.add_argument("--tree", action="append", required=True, help="NAME=PATH of a source tree")
    ap.add_argument("--reps", type=int, default=3)
    args = ap.parse_args()
    import pandas as pd

    df = pd.read_parquet(args.data / "web" / "web_docs.parquet", columns=["html"])
    pages = [h.encode() for h in df["html"].dropna() if h]
    tmp = Path(tempfile.mkdtemp())
    write(pages, tmp)
    print(f"{len(pages)} pages")
    runs: dict[tuple[str, str], list[dict]] = {}
    for _ in range(args.reps):
        for f in ("members", "one", "bare"):
            for name, tree in (t.split("=", 1) for t in args.tree):
                out = subprocess.run([sys.executable, __file__, "--data", ".", "--tree", "x=x", "--once", tree, str(tmp / f"{f}.warc.gz")],
                                     capture_output=True, text=True, check=True).stdout
                runs.setdefault((f, name), []).append(json.loads(out))
    for (f, name), outs in runs.items():
        med = {k: sorted(o[k] for o in outs)[len(outs) // 2] for k in ("plan", "read")}
        o = outs[0]
        print(f"{f:8} {name:7} plan {med['plan']:.2f} CPU-s read {med['read']:.2f} CPU-s rows {o['rows']} "
              f"outcomes {o['outcomes']} offsets {o['offsets']}")


if __name__ == "__main__":
    if "--once" in sys.argv:
        read_once(*sys.argv[sys.argv.index("--once") + 1:][:2])
    else:
        main()
