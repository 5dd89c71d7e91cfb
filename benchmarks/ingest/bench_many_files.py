"""Many small files against one file of the same bytes: ingest's cost follows the bytes, not the file count.

Ingest groups small files into size-balanced partitions; this script writes ``--files`` JSONL files of ``--kb`` KB in all (every record its own
URL and id, synthetic words, half of the files gzipped), the same records as one file, and times
``curate ingest`` (the embedded recipe, a LocalCluster of one worker per core: ``--workers auto``) on each.

    python benchmarks/ingest/bench_many_files.py --files 1000 3000 10000 --kb 700
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def write_corpus(root: Path, files: int, kb: int, seed: int = 0) -> tuple[Path, Path]:
    """``files`` small files and one file holding the same records, under ``root``."""
    rng = random.Random(seed)
    vocab = [f"w{rng.randrange(100_000)}" for _ in range(5000)]
    per_file = kb * 1024 // files
    many, one = root / "many", root / "one"
    many.mkdir(parents=True)
    one.mkdir()
    lines = []
    for i in range(files):
        rec = {"id": f"d{i}", "url": f"https://a.example/{i}", "source": "web", "text": ""}
        base = len(json.dumps(rec)) + 1
        words = []
        while base + len(" ".join(words)) < per_file:
            words.append(rng.choice(vocab))
        rec["text"] = " ".join(words) or "x"
        line = (json.dumps(rec) + "\n").encode()
        lines.append(line)
        name = many / f"{i // 1000:03d}" / f"f{i:06d}.jsonl{'.gz' if i % 2 else ''}"
        name.parent.mkdir(exist_ok=True)
        name.write_bytes(gzip.compress(line, mtime=0) if i % 2 else line)
    (one / "all.jsonl").write_bytes(b"".join(lines))
    return many, one


def run_ingest(inputs: Path, out: Path, timeout: float) -> dict:
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "pipelines.cli", "ingest", "--input", str(inputs), "--output", str(out), "--quiet", "--workers", "auto"],
                          capture_output=True, text=True, timeout=timeout)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise SystemExit(f"ingest failed ({proc.returncode}): {proc.stderr[-2000:]}")
    stats = json.loads((out / "stats.json").read_text())
    parts = len(list((out / "artifacts" / "parsed").glob("part-*.parquet")))
    return {"wall_s": wall, "cpu_s": stats.get("cpu_seconds"), "docs": stats["kept"]["documents"], "partitions": parts}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--files", type=int, nargs="+", default=[1000, 3000, 10_000])
    ap.add_argument("--kb", type=int, default=700, help="size of the corpus in KB (default 700)")
    ap.add_argument("--timeout", type=float, default=600)
    args = ap.parse_args()
    print("| files | input | partitions | documents | wall s | CPU s |")
    print("|---:|---|---:|---:|---:|---:|")
    for n in args.files:
        root = Path(tempfile.mkdtemp(prefix="bench-many-"))
        try:
            many, one = write_corpus(root, n, args.kb)
            for label, inputs in ((f"{n:,} files", many), ("1 file", one)):
                r = run_ingest(inputs, root / f"out-{inputs.name}", args.timeout)
                cpu = f"{r['cpu_s']:.1f}" if r["cpu_s"] is not None else "-"
                print(f"| {n:,} | {label} | {r['partitions']} | {r['docs']:,} | {r['wall_s']:.1f} | {cpu} |", flush=True)
        finally:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
