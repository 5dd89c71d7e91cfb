"""A cluster run's task stream: how many tasks, their compute time by prefix, and where the workers
sat idle between tasks.

Runs ``curate run`` on a cluster in this process, records Dask's task stream from the first
second, and writes one JSON file (``rows``: key, worker, start, stop, seconds from the start).

    python benchmarks/recipe/task_stream.py /tmp/w2-stream.json -- run pipelines/configs/glm45.yaml \\
        --input benchmarks/_work/recipe/corpus-250mb --output /tmp/w2 --quiet --workers 2 --profile cpu
    python benchmarks/recipe/task_stream.py --summary /tmp/w2-stream.json

The summary gives the task count and compute seconds per prefix, each worker's busy and idle
seconds between the first task and the last, and the idle gaps above 20 ms grouped by the prefixes
before and after them.
"""

from __future__ import annotations

import collections
import contextlib
import itertools
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
os.environ.setdefault("DASK_DISTRIBUTED__SCHEDULER__DASHBOARD__TASKS__TASK_STREAM_LENGTH", "10000000")

# Spawned workers import the driver's __main__ before they join: task_cpu imports the CLI, as
# `curate` would make them.
from task_cpu import run_curate  # noqa: E402


def record(out: str, args: list[str]) -> None:
    import pipelines.cluster as cluster

    t0 = time.time()
    open_client = cluster.open_client

    @contextlib.contextmanager
    def streamed_client(*a, **k):
        with open_client(*a, **k) as client:
            if client is None:
                raise SystemExit("task_stream.py needs a cluster (--workers N or --scheduler ADDRESS)")
            client.get_task_stream(start=t0)  # the first call installs the scheduler's recorder
            yield client
            rows = []
            for r in client.get_task_stream(start=t0):
                spans = {s["action"]: (s["start"], s["stop"]) for s in r["startstops"]}
                if "compute" in spans:
                    rows.append([str(r["key"]), r["worker"], spans["compute"][0] - t0, spans["compute"][1] - t0])
            Path(out).write_text(json.dumps({"rows": rows}))

    cluster.open_client = streamed_client
    run_curate(args)
    print(f"wall {time.time() - t0:.1f} s; task stream in {out}")


def summary(path: str) -> None:
    from dask.utils import key_split

    rows = json.loads(Path(path).read_text())["rows"]
    by_prefix = collections.defaultdict(lambda: [0, 0.0])
    workers = collections.defaultdict(list)
    for key, worker, start, stop in rows:
        by_prefix[key_split(key)][0] += 1
        by_prefix[key_split(key)][1] += stop - start
        workers[worker].append((start, stop, key_split(key)))
    print(f"{len(rows)} tasks, {sum(v[1] for v in by_prefix.values()):.1f} s of compute")
    for prefix, (n, seconds) in sorted(by_prefix.items(), key=lambda x: -x[1][1])[:15]:
        print(f"  {prefix:<24} {n:>5} tasks {seconds:>8.2f} s")
    first, last = min(r[2] for r in rows), max(r[3] for r in rows)
    gaps: dict = collections.defaultdict(lambda: [0, 0.0])
    for worker, spans in sorted(workers.items()):
        spans.sort()
        busy = sum(b - a for a, b, _ in spans)
        print(f"{worker}: busy {busy:.1f} s of {last - first:.1f} s from the first task to the last")
        for (_, stop, before), (start, _, after) in itertools.pairwise(spans):
            if start - stop > 0.02:
                gaps[(before, after)][0] += 1
                gaps[(before, after)][1] += start - stop
    print(f"idle gaps above 20 ms: {sum(g[1] for g in gaps.values()):.2f} core-s; the largest:")
    for (before, after), (n, seconds) in sorted(gaps.items(), key=lambda x: -x[1][1])[:10]:
        print(f"  {seconds:6.2f} core-s in {n:>3} gaps  {before} -> {after}")


def main() -> None:
    if sys.argv[1:2] == ["--summary"] and len(sys.argv) == 3:
        summary(sys.argv[2])
    elif len(sys.argv) >= 4 and sys.argv[2] == "--":
        record(sys.argv[1], sys.argv[3:])
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main()
