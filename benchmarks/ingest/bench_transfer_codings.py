"""Rows and CPU of reading real pages (``web/web_docs.parquet``, every page with HTML) written three ways, for
source trees side by side: plain bodies, bodies sent ``Transfer-Encoding: gzip, chunked``, and a multi-member
``.warc.gz`` whose first byte is 0x00 (planned and read partition by partition, as ingest reads it).

    python benchmarks/ingest/bench_transfer_codings.py --data ../shared/data --tree before=/tmp/old --tree after=.
"""

from __future__ import annotations

import argparse
import collections
import gzip
import io
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def write(pages: list[bytes], path: Path, te: bool) -> None:
    from warcio.warcwriter import WARCWriter

    with open(path, "wb") as fh:
        w = WARCWriter(fh, gzip=True)
        for i, body in enumerate(pages):
            head = b"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n"
            if te:
                z = gzip.compress(body, mtime=0)
                head, body = head + b"Transfer-Encoding: gzip, chunked\r\n", b"%x\r\n" % len(z) + z + b"\r\n0\r\n\r\n"
            http = head + b"\r\n" + body
            w.write_record(w.create_warc_record(f"http://p.example/{i}", "response", payload=io.BytesIO(http), length=len(http),
                                                warc_content_type="application/http; msgtype=response"))


def read_once(tree: str, path: str) -> None:
    sys.path.insert(0, tree)
    from curation.ingest.inputs import InputError
    from curation.ingest.warc import iter_warc, until_cut
    from curation.ingest.warc_plan import warc_chunks

    t0, rows = time.process_time(), []
    try:
        for c in warc_chunks(Path(path), 1 << 30):
            rows += until_cut(iter_warc(Path(path), 10_000_000, c.start, c.end, c.first_line, c.docs if c.docs >= 0 else None), c.cut, path)
    except InputError:
        rows.append({"error": ("exit 4",)})
    outcome = collections.Counter(str(getattr(r["error"][0], "value", r["error"][0])) if "error" in r else "html" for r in rows)
    print(json.dumps({"cpu": time.process_time() - t0, "rows": dict(outcome)}))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", type=Path, required=True)
    ap.add_argument("--tree", action="append", required=True, help="NAME=PATH of a source tree")
    args = ap.parse_args()
    import pandas as pd

    df = pd.read_parquet(args.data / "web" / "web_docs.parquet", columns=["html"])
    pages = [h.encode() for h in df["html"].dropna() if h]
    tmp = Path(tempfile.mkdtemp())
    write(pages, tmp / "plain.warc.gz", False)
    write(pages, tmp / "te.warc.gz", True)
    blob = bytearray((tmp / "plain.warc.gz").read_bytes())
    blob[0] = 0
    (tmp / "zero.warc.gz").write_bytes(bytes(blob))
    print(f"{len(pages)} pages")
    for f in ("plain", "te", "zero"):
        for name, tree in (t.split("=", 1) for t in args.tree):
            out = subprocess.run([sys.executable, __file__, "--data", ".", "--tree", "x=x", "--once", tree, str(tmp / f"{f}.warc.gz")],
                                 capture_output=True, text=True, check=True).stdout
            r = json.loads(out)
            print(f"{f:6} {name:7} CPU {r['cpu']:.2f} s rows {r['rows']}")


if __name__ == "__main__":
    if "--once" in sys.argv:
        read_once(*sys.argv[sys.argv.index("--once") + 1:][:2])
    else:
        main()
