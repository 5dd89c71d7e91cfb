"""CPU per page of reading a WARC (``iter_warc``: records, bodies decoded, charsets) for source trees
side by side, on a WARC as it is and on a copy whose every body is sent ``Transfer-Encoding: chunked``.

    python benchmarks/ingest/bench_warc_bodies.py --warc pages.warc.gz --tree before=/tmp/old --tree after=.

Each (file, tree) is read in a fresh process ``--reps`` times, interleaved; the median CPU seconds and
a digest of every row (HTML or error) are printed, so the trees are compared on the same outputs.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import subprocess
import sys
import time
from pathlib import Path


def chunked_copy(src: Path, dst: Path, size: int = 8192) -> None:
    from fastwarc.warc import ArchiveIterator, WarcRecordType
    from warcio.warcwriter import WARCWriter

    with open(dst, "wb") as out, open(src, "rb") as fh:
        w = WARCWriter(out, gzip=True)
        for r in ArchiveIterator(fh, parse_http=True, record_types=WarcRecordType.response):
            h, body = r.http_headers, r.reader.read()
            lines = [h.status_line.encode()] + [f"{k}: {v}".encode() for k, v in h.items() if k.lower() not in ("content-length", "transfer-encoding")]
            chunks = b"".join(b"%x\r\n" % len(body[i:i + size]) + body[i:i + size] + b"\r\n" for i in range(0, len(body), size))
            http = b"\r\n".join(lines) + b"\r\nTransfer-Encoding: chunked\r\n\r\n" + chunks + b"0\r\n\r\n"
            w.write_record(w.create_warc_record(r.headers.get("WARC-Target-URI"), "response", payload=io.BytesIO(http), length=len(http),
                                                warc_content_type="application/http; msgtype=response",
                                                warc_headers_dict={"WARC-Record-ID": r.headers.get("WARC-Record-ID")}))


def read_once(tree: str, path: str) -> None:
    sys.path.insert(0, tree)
    from curation.ingest.warc import iter_warc

    t0 = time.process_time()
    rows = list(iter_warc(Path(path), 10_000_000))
    cpu = time.process_time() - t0
    digest = hashlib.sha256("".join(r.get("html") or str(r.get("error")) for r in rows).encode()).hexdigest()[:16]
    print(json.dumps({"cpu": cpu, "rows": len(rows), "digest": digest}))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--warc", type=Path, required=True)
    ap.add_argument("--tree", action="append", required=True, help="NAME=PATH of a source tree")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--once", nargs=2, help=argparse.SUPPRESS)
    args = ap.parse_args()
    files = {"as is": args.warc, "chunked": args.warc.with_name(args.warc.name.replace(".warc.gz", ".chunked.warc.gz"))}
    if not files["chunked"].exists():
        chunked_copy(args.warc, files["chunked"])
    trees = dict(t.split("=", 1) for t in args.tree)
    res: dict[tuple[str, str], list[dict]] = {}
    for _ in range(args.reps):
        for f, path in files.items():
            for t, tree in trees.items():
                out = subprocess.run([sys.executable, __file__, "--warc", str(args.warc), "--tree", "x=x", "--once", tree, str(path)],
                                     capture_output=True, text=True, check=True).stdout
                res.setdefault((f, t), []).append(json.loads(out))
    for (f, t), outs in res.items():
        cpu = sorted(o["cpu"] for o in outs)[len(outs) // 2]
        print(f"{f:8} {t:8} rows={outs[0]['rows']} median CPU {cpu:.3f} s = {1000 * cpu / outs[0]['rows']:.3f} ms/page digest={outs[0]['digest']}")


if __name__ == "__main__":
    if "--once" in sys.argv:
        read_once(*sys.argv[sys.argv.index("--once") + 1:][:2])
    else:
        main()
