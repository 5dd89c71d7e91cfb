"""Where a run's CPU goes: the tasks' own thread CPU against everything around them.

Runs ``curate run`` in this process and writes one JSON file:

- ``tasks``: CPU and wall seconds of the tasks, by task prefix. With ``--scheduler synchronous``
  they come from a Dask callback around each task. On a cluster they come from the workers'
  fine performance metrics (``Worker.digests_total``: ``thread-cpu`` and ``thread-noncpu`` per
  prefix). The two schedulers fuse tasks differently, so compare the totals, not the prefixes.
- ``threads``: CPU seconds of every thread of the driver and of each worker, from
  ``/proc/self/task``, read when the run ends. The names come from ``threading`` where Python
  knows the thread; native threads (Arrow's pool) show as ``python``.
- ``process_cpu``: user and system seconds of the driver and of each worker process.

    python benchmarks/recipe/task_cpu.py /tmp/sync.json -- run pipelines/configs/glm45.yaml \\
        --input benchmarks/_work/recipe/corpus-250mb --output /tmp/sync --quiet --scheduler synchronous --profile cpu
    python benchmarks/recipe/task_cpu.py /tmp/w2.json -- run pipelines/configs/glm45.yaml \\
        --input benchmarks/_work/recipe/corpus-250mb --output /tmp/w2 --quiet --workers 2 --profile cpu
    python benchmarks/recipe/task_cpu.py --compare /tmp/sync.json /tmp/w2.json

Linux only (``/proc``). The corpora come from ``bench_recipe.py`` (``--mb 250`` is 133 MB).
"""

from __future__ import annotations

import collections
import contextlib
import json
import os
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

# Spawned workers import the driver's __main__ before they join. Importing the CLI here means
# they import what `curate` would make them import; without it their first task imports them.
import pipelines.cli  # noqa: E402,F401


def thread_cpu() -> list[list]:
    """[name, user s, system s] of every thread of this process."""
    names = {t.native_id: t.name for t in threading.enumerate()}
    tick = os.sysconf("SC_CLK_TCK")
    out = []
    for task in Path("/proc/self/task").iterdir():
        try:
            fields = (task / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        out.append([names.get(int(task.name), "python"), int(fields[11]) / tick, int(fields[12]) / tick])
    return out


def run_curate(args: list[str]) -> None:
    """``curate ARGS`` in this process; a zero exit is not an error."""
    try:
        pipelines.cli.main(args)
    except SystemExit as exc:
        if exc.code:
            raise


def _digests(dask_worker: object) -> list[list]:
    return [[[str(x) for x in k] if isinstance(k, tuple) else [str(k)], v] for k, v in dask_worker.digests_total.items()]


def measure(out: str, args: list[str]) -> None:
    from dask.callbacks import Callback
    from dask.utils import key_split

    import pipelines.cluster as cluster

    result: dict = {"tasks": {}, "threads": {}, "process_cpu": {}}
    sync = collections.defaultdict(lambda: [0.0, 0.0, 0])
    started: dict = {}

    class TaskClock(Callback):
        def _pretask(self, key, dsk, state):
            started[key] = (time.thread_time(), time.time())

        def _posttask(self, key, res, dsk, state, worker_id):
            cpu, wall = started.pop(key)
            row = sync[key_split(key)]
            row[0] += time.thread_time() - cpu
            row[1] += time.time() - wall
            row[2] += 1

    TaskClock().register()
    open_client = cluster.open_client

    @contextlib.contextmanager
    def measured_client(*a, **k):
        with open_client(*a, **k) as client:
            yield client
            if client is not None:
                cpu = collections.defaultdict(float)
                for items in client.run(_digests).values():
                    for key, value in items:
                        if key[0] == "execute" and key[-2] in ("thread-cpu", "thread-noncpu"):
                            cpu[(key[-3], key[-2])] += value
                for (prefix, kind), value in cpu.items():
                    result["tasks"].setdefault(prefix, {})["cpu" if kind == "thread-cpu" else "noncpu"] = value
                result["threads"] = client.run(thread_cpu)
                result["threads"]["driver"] = thread_cpu()  # now: the scheduler's thread ends with the cluster
                result["process_cpu"] = {w: list(t) for w, t in client.run(lambda: os.times()[:2]).items()}

    cluster.open_client = measured_client
    wall = time.time()
    run_curate(args)
    result["wall_s"] = time.time() - wall
    for prefix, (cpu, task_wall, n) in sync.items():
        result["tasks"][prefix] = {"cpu": cpu, "noncpu": task_wall - cpu, "n": n}
    result["threads"].setdefault("driver", thread_cpu())
    result["process_cpu"]["driver"] = list(os.times()[:2])
    Path(out).write_text(json.dumps(result, indent=1))


def summary(path: str) -> dict:
    data = json.loads(Path(path).read_text())
    threads = {where: ", ".join(f"{n} {u + s:.2f}" for n, u, s in sorted(rows, key=lambda r: -(r[1] + r[2])) if u + s >= 0.05)
               for where, rows in data["threads"].items()}
    return {
        "wall_s": round(data["wall_s"], 1),
        "cpu_s_all_processes": round(sum(u + s for u, s in data["process_cpu"].values()), 1),
        "task_cpu_s": round(sum(t["cpu"] for t in data["tasks"].values()), 1),
        "task_noncpu_s": round(sum(t["noncpu"] for t in data["tasks"].values()), 1),
        "threads": threads,
    }


def main() -> None:
    if sys.argv[1:2] == ["--compare"]:
        for path in sys.argv[2:]:
            print(path, json.dumps(summary(path), indent=1))
        return
    if len(sys.argv) < 4 or sys.argv[2] != "--":
        raise SystemExit(__doc__)
    measure(sys.argv[1], sys.argv[3:])


if __name__ == "__main__":
    main()
