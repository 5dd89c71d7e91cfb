"""What the file checks cost: recording a stage's files in ``_SUCCESS``, the resume
check (names, sizes, Parquet footers) and ``curate verify``'s re-hash, per stage of a finished run,
next to the stage's own run time (its peer).

    python benchmarks/safety/bench_markers.py RUN_DIR [--synthetic-mb 1024]

``--synthetic-mb`` also writes a docs folder of that many MB of random text (64 MB parts) under
/tmp and times the same three checks on it, for the throughput on larger stages.
"""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from pipelines.io import write_frame
from pipelines.marker import check_files, file_records


def _time(fn) -> tuple[float, object]:  # type: ignore[no-untyped-def]
    t = time.perf_counter()
    out = fn()
    return time.perf_counter() - t, out


def measure(folder: Path) -> dict[str, float]:
    size = sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())
    record_s, files = _time(lambda: file_records(folder))
    marker = {"files": files}
    resume_s, problems = _time(lambda: check_files(folder, marker))
    verify_s, problems2 = _time(lambda: check_files(folder, marker, checksums=True))
    assert not problems and not problems2, (problems, problems2)
    return {"files": len(files), "mb": round(size / 1e6, 1), "record_s": round(record_s, 3),
            "resume_check_s": round(resume_s, 4), "verify_rehash_s": round(verify_s, 3)}


def synthetic(mb: int) -> Path:
    root = Path(tempfile.mkdtemp(prefix="bench_markers_"))
    rng = np.random.default_rng(0)
    words = np.array(["".join(rng.choice(list("abcdefghij"), 6)) for _ in range(5000)])
    part_mb, i = 64, 0
    while i * part_mb < mb:
        n = 64_000
        text = [" ".join(rng.choice(words, 140)) for _ in range(n // 8)] * 8
        df = pd.DataFrame({"doc_id": [f"{i}-{k}" for k in range(n)], "text": text})
        write_frame(df, root / "docs" / f"part-{i:05d}.parquet")
        i += 1
    return root


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("run_dir", type=Path)
    ap.add_argument("--synthetic-mb", type=int, default=0)
    args = ap.parse_args()
    rows = []
    for stage in sorted(p for p in args.run_dir.iterdir() if p.is_dir() and (p / "stats.json").exists()):
        stats = json.loads((stage / "stats.json").read_text())
        rows.append({"stage": stage.name, "stage_s": stats.get("seconds"), **measure(stage)})
    if args.synthetic_mb:
        root = synthetic(args.synthetic_mb)
        try:
            rows.append({"stage": f"synthetic docs ({args.synthetic_mb} MB text)", "stage_s": None, **measure(root)})
        finally:
            shutil.rmtree(root, ignore_errors=True)
    df = pd.DataFrame(rows)
    print("| " + " | ".join(df.columns) + " |\n|" + "---|" * len(df.columns))
    for row in df.itertuples(index=False):
        print("| " + " | ".join("" if v is None or v != v else str(v) for v in row) + " |")


if __name__ == "__main__":
    main()
