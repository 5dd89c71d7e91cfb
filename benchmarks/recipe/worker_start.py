"""What a 2-worker run pays before its first task: the embedded cluster's start, then each worker's
first imports (``dask.dataframe`` and the ingest stage's module), which a one-process run pays once,
before it plans ingest, and a worker pays when it unpickles its first task.

    python benchmarks/recipe/worker_start.py --turns 3

Each turn is a fresh process (as ``curate run --workers 2``): it opens the embedded LocalCluster of
``pipelines.cluster.open_client`` and times it, then asks every worker to import the two modules
and report the CPU seconds each took and the wall seconds of the whole call. Prints each turn and
the medians as JSON.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _first_imports() -> dict[str, float]:
    start_cpu, start = time.process_time(), time.time()
    import dask.dataframe  # noqa: F401

    middle = time.process_time()
    import pipelines.stages.ingest  # noqa: F401

    return {"dask_dataframe_cpu_s": middle - start_cpu, "ingest_stage_cpu_s": time.process_time() - middle,
            "wall_s": time.time() - start}


def one_turn(workers: int) -> dict[str, object]:
    from pipelines.cluster import open_client

    start = time.time()
    with open_client(None, workers=workers) as client:
        started = time.time()
        per_worker = client.run(_first_imports)
        imported = time.time()
    return {"cluster_start_s": round(started - start, 3), "first_imports_wall_s": round(imported - started, 3),
            "workers": [{k: round(v, 3) for k, v in w.items()} for w in per_worker.values()]}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--turns", type=int, default=3)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--one", action="store_true", help=argparse.SUPPRESS)  # a turn, in its own process
    args = ap.parse_args()
    if args.one:
        print(json.dumps(one_turn(args.workers)))
        return 0
    turns = []
    for _ in range(args.turns):
        proc = subprocess.run([sys.executable, __file__, "--one", "--workers", str(args.workers)], cwd=ROOT,
                              capture_output=True, text=True, check=True)
        turns.append(json.loads(proc.stdout.strip().splitlines()[-1]))
    imports = [w["dask_dataframe_cpu_s"] + w["ingest_stage_cpu_s"] for t in turns for w in t["workers"]]
    out = {"turns": turns, "median": {
        "cluster_start_s": statistics.median(t["cluster_start_s"] for t in turns),
        "first_imports_wall_s": statistics.median(t["first_imports_wall_s"] for t in turns),
        "first_imports_cpu_s_per_worker": round(statistics.median(imports), 3)}}
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
