"""Each compute of a run (one step of a stage) timed from the driver, and two runs compared step by
step: where a 2-worker run loses against half a one-process run.

    python benchmarks/recipe/computes.py /tmp/one.json -- run pipelines/configs/glm45.yaml \\
        --input benchmarks/_work/recipe/corpus-100mb --output /tmp/one --quiet --scheduler synchronous --profile cpu
    python benchmarks/recipe/computes.py /tmp/w2.json -- run pipelines/configs/glm45.yaml \\
        --input benchmarks/_work/recipe/corpus-100mb --output /tmp/w2 --quiet --workers 2 --profile cpu
    python benchmarks/recipe/computes.py --compare /tmp/one.json /tmp/w2.json

Each row is a compute's label, the driver's time before it since the last one ended (its own work
between steps), and the compute's wall time. ``--compare`` gives each step's ratio and the seconds
the second run lost against half the first (``w2 − one / 2``; with N workers, pass ``--workers N``).
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

# Spawned workers import the driver's __main__ before they join: task_cpu imports the CLI, as
# `curate` would make them.
from task_cpu import run_curate  # noqa: E402


def record(out: str, args: list[str]) -> None:
    import pipelines.progress as progress

    compute_with_progress = progress.compute_with_progress
    t0 = time.time()
    rows: list[list] = []
    last = [t0]

    def timed(collection, client, label, quiet, costs=None):
        start = time.time()
        try:
            return compute_with_progress(collection, client, label, quiet, costs)
        finally:
            rows.append([label, round(start - last[0], 4), round(time.time() - start, 4)])
            last[0] = time.time()

    progress.compute_with_progress = timed
    run_curate(args)
    wall = time.time() - t0
    Path(out).write_text(json.dumps({"wall_s": wall, "computes": rows}, indent=0))
    print(f"wall {wall:.1f} s, {len(rows)} computes in {out}")


def compare(first: str, second: str, workers: int = 2) -> None:
    a, b = (json.loads(Path(p).read_text()) for p in (first, second))
    if [r[0] for r in a["computes"]] != [r[0] for r in b["computes"]]:
        raise SystemExit("the two runs did not compute the same steps (same recipe and corpus?)")
    print(f"{'step':<44} {'first: before+compute':>22} {'second':>16} {'ratio':>6} {'lost s':>7}")
    lost_total = 0.0
    for (label, ga, da), (_, gb, db) in zip(a["computes"], b["computes"], strict=True):
        lost = gb + db - (ga + da) / workers
        lost_total += lost
        print(f"{label[:44]:<44} {ga:9.2f} + {da:7.2f} {gb:7.2f} + {db:6.2f} {(ga + da) / (gb + db):6.2f} {lost:7.2f}")
    sa = sum(g + d for _, g, d in a["computes"])
    sb = sum(g + d for _, g, d in b["computes"])
    print(f"steps: {sa:.1f} s against {sb:.1f} s ({sa / sb:.2f}x); lost against 1/{workers} of the first: {lost_total:.1f} s; "
          f"whole runs {a['wall_s']:.1f} s against {b['wall_s']:.1f} s ({a['wall_s'] / b['wall_s']:.2f}x)")


def main() -> None:
    argv = sys.argv[1:]
    if argv[:1] == ["--compare"]:
        paths, workers = argv[1:], 2
        if "--workers" in paths:
            i = paths.index("--workers")
            workers = int(paths[i + 1])
            del paths[i : i + 2]
        if len(paths) != 2:
            raise SystemExit(__doc__)
        compare(paths[0], paths[1], workers)
    elif len(argv) >= 3 and argv[1] == "--":
        record(argv[0], argv[2:])
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main()
