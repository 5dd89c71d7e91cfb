"""Planning a Common-Crawl-style ``.warc.gz`` (one gzip member per record) for source trees side by side: the
CPU of ``warc_chunks`` on a sound file, and what a damaged copy keeps (records read, ``truncated_input`` rows).

    python benchmarks/ingest/bench_member_search.py --warc /tmp/ms/pages.warc.gz --mb 100 --tree before=/tmp/old --tree after=.

``--warc`` is built when it is absent (``--mb`` MB on disk of the real pages of ``../shared/data``, as
``bench_warc_scale.py`` writes them), with two damaged copies beside it: ``zeros``, 512 zero bytes between
two members in the middle of a partition (gzip skips zero padding after the last member only, FastWARC stops
at it); ``header``, the first member's first byte flipped (its header damaged: the member search runs from
it). The sound file is planned ``--reps`` times in fresh processes, interleaved across trees (median CPU
seconds, and a digest of the chunks: the same plan); each damaged copy is planned and read once per tree.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys
import time
from pathlib import Path

BLOCK = 128 << 20  # ingest.crawl_min_block_mb: a crawl file's partitions


def build(warc: Path, mb: int) -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from bench_warc_scale import build_warcs, load_pages

    warc.parent.mkdir(parents=True, exist_ok=True)
    build_warcs(load_pages(), {warc: mb << 20})
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from curation.ingest.streams import open_input

    with open_input(warc) as fh:  # each member's start
        while fh.read(1 << 24):
            pass
        starts = [c for c, _d in fh.raw.members]
    data = warc.read_bytes()
    mid = starts[len(starts) * 3 // 5]  # inside a partition, not at its start
    warc.with_name("zeros." + warc.name).write_bytes(data[:mid] + bytes(512) + data[mid:])
    warc.with_name("header." + warc.name).write_bytes(bytes([data[0] ^ 0xFF]) + data[1:])


def once(tree: str, path: str, read: bool) -> None:
    sys.path.insert(0, tree)
    from curation.ingest.warc import iter_warc, until_cut
    from curation.ingest.warc_plan import warc_chunks

    t0 = time.process_time()
    chunks = warc_chunks(Path(path), BLOCK)
    cpu = time.process_time() - t0
    out = {"cpu": cpu, "chunks": len(chunks), "planned": sum(max(c.docs, 0) for c in chunks),
           "digest": hashlib.sha256(repr(chunks).encode()).hexdigest()[:16]}
    if read:
        rows = [r for c in chunks for r in until_cut(iter_warc(Path(path), 10_000_000, c.start, c.end, c.first_line,
                                                               c.docs if c.docs >= 0 else None), c.cut, path)]
        out |= {"docs": sum("error" not in r for r in rows), "rows": sum("error" in r for r in rows),
                "why": [r["error"][1][:160] for r in rows if "error" in r][:2]}
    print(json.dumps(out))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--warc", type=Path, required=True)
    ap.add_argument("--mb", type=int, default=100)
    ap.add_argument("--tree", action="append", required=True, help="NAME=PATH of a source tree")
    ap.add_argument("--reps", type=int, default=3)
    args = ap.parse_args()
    if not args.warc.exists():
        build(args.warc, args.mb)
    trees = dict(t.split("=", 1) for t in args.tree)

    def run(tree: str, path: Path, read: bool) -> dict:
        cmd = [sys.executable, __file__, "--once", tree, str(path), str(int(read))]
        return json.loads(subprocess.run(cmd, capture_output=True, text=True, check=True).stdout.splitlines()[-1])

    sound: dict[str, list[dict]] = {}
    for _ in range(args.reps):
        for name, tree in trees.items():
            sound.setdefault(name, []).append(run(tree, args.warc, False))
    for name, outs in sound.items():
        cpu, each = sorted(o["cpu"] for o in outs)[len(outs) // 2], ", ".join(f"{o['cpu']:.2f}" for o in outs)
        print(f"sound  {name:8} chunks={outs[0]['chunks']} records planned={outs[0]['planned']} "
              f"plan median CPU {cpu:.2f} s ({each}) digest={outs[0]['digest']}")
    for kind in ("zeros", "header"):
        for name, tree in trees.items():
            o = run(tree, args.warc.with_name(f"{kind}.{args.warc.name}"), True)
            print(f"{kind:6} {name:8} plan CPU {o['cpu']:.2f} s, records read {o['docs']}, truncated_input rows {o['rows']}: {o['why']}")


if __name__ == "__main__":
    if "--once" in sys.argv:
        tree, path, read = sys.argv[sys.argv.index("--once") + 1:][:3]
        once(tree, path, read == "1")
    else:
        main()
