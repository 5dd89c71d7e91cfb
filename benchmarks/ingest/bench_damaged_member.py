"""A multi-member .jsonl.gz of real records with one damaged member in the middle: what ingest keeps.

Recompresses a real JSONL file as bgzip does (a gzip member per 64 KiB of decompressed bytes, cut
anywhere, mid-record too), flips one byte in the middle member (``--damage data``: in the middle of
its deflate data; ``header``: its first byte, the gzip magic; ``--members 2``: the next member's
too), and runs ``curate ingest`` on it and on the sound file: documents kept, ledger rows, CPU
seconds and peak RSS of the command. ``--long-line MB``: the file is cut at the line start nearest
its middle, a member holding one record, a line of MB MiB, goes there, and the member(s) before it
are the damaged ones: the first line reading goes on at is that long line. Run it from the checkout
whose code is measured (the current folder and ``PYTHONPATH``).

    python benchmarks/ingest/bench_damaged_member.py ../shared/data/zh/zh_reviews.jsonl.gz --out /tmp/dm
    python benchmarks/ingest/bench_damaged_member.py ../shared/data/zh/zh_reviews.jsonl.gz --out /tmp/dmh --damage header --members 2
    python benchmarks/ingest/bench_damaged_member.py ../shared/data/zh/zh_reviews.jsonl.gz --out /tmp/dml --long-line 300
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq


def _members(data: bytes, size: int = 1 << 16) -> list[bytes]:
    return [gzip.compress(data[k : k + size], mtime=0) for k in range(0, len(data), size)]


def _run(path: Path, out: Path) -> tuple[int, int, float, float]:
    """Documents, ledger rows, CPU seconds and peak RSS (MB) of one ingest. The peak is GNU time's (a child of
    this process would start from this process's RSS, which the files' making raised, and keep it as its peak)."""
    rss = out.with_suffix(".rss")
    before = os.times()
    subprocess.run(["/usr/bin/time", "-o", str(rss), "-f", "%M", sys.executable, "-m", "pipelines.cli", "ingest", "--input",
                    str(path), "--output", str(out), "--source", "web", "--quiet", "ingest.tokenizer=whitespace"],
                   check=True, capture_output=True)
    after = os.times()
    count = lambda d: sum(pq.ParquetFile(p).metadata.num_rows for p in sorted(d.glob("*.parquet"))) if d.exists() else 0  # noqa: E731
    cpu = (after.children_user - before.children_user) + (after.children_system - before.children_system)
    return count(out / "docs"), count(out / "ledger"), cpu, int(rss.read_text().split()[-1]) / 1024


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("input", type=Path)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--damage", choices=["data", "header"], default="data")
    ap.add_argument("--members", type=int, default=1, help="damaged members, one after the other")
    ap.add_argument("--long-line", type=int, default=0, help="MiB of the first line after the damage (one record)")
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    data = gzip.decompress(args.input.read_bytes())
    members = _members(data)
    mid = len(members) // 2
    if args.long_line:  # ... the members of the first half, the damaged one(s) last, the long line, the second half
        cut = data.index(b"\n", len(data) // 2) + 1
        text = ("长评论" * (args.long_line << 20))[: (args.long_line << 20) // 6]  # json.dumps writes each as \uXXXX: 6 bytes
        head = _members(data[:cut])
        members = [*head, gzip.compress(json.dumps({"id": "long", "text": text}).encode() + b"\n", mtime=0), *_members(data[cut:])]
        mid = len(head) - args.members
    sound, bad = args.out / "sound.jsonl.gz", args.out / "damaged.jsonl.gz"
    sound.write_bytes(b"".join(members))
    damaged = list(members)
    for k in range(mid, mid + args.members):
        flipped = bytearray(members[k])
        flipped[len(flipped) // 2 if args.damage == "data" else 0] ^= 0xFF
        damaged[k] = bytes(flipped)
    bad.write_bytes(b"".join(damaged))
    print(f"{len(members)} members, member(s) {mid}..{mid + args.members - 1} damaged ({args.damage})")
    for name, path in (("sound", sound), ("damaged", bad)):
        docs, rows, cpu, rss = _run(path, args.out / f"run_{name}")
        print(f"{name}: {docs} documents, {rows} ledger rows, {cpu:.1f} CPU-s, peak RSS {rss:.0f} MB")


if __name__ == "__main__":
    main()
