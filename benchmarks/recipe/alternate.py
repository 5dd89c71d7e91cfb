"""Recipe settings compared fairly on a noisy machine: each setting's one-process run and 2-worker
run, the settings in turn, for several turns; the pairs' ratios and the medians.

    python benchmarks/recipe/alternate.py --mb 250 --turns 2 b8:ingest.min_block_mb=8 b16:ingest.min_block_mb=16

Each argument is ``name:override,override`` (``name:`` alone is the recipe's defaults); an
override whose key is in capitals (``DASK_DISTRIBUTED__SCHEDULER__WORK_STEALING=False``) is set in
the runs' environment instead. Every turn
also checks that the 2-worker outputs are byte-identical to the one-process run's. The corpora come
from ``bench_recipe.py`` (``--mb 250`` is 133 MB); runs go under benchmarks/_work/recipe/alternate/.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_recipe import WORK, build_corpus, compare_outputs, run_recipe  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mb", type=float, default=250)
    ap.add_argument("--turns", type=int, default=2)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--profile", default="cpu")
    ap.add_argument("settings", nargs="+", help="name:override,override")
    args = ap.parse_args()
    settings = []  # name, recipe overrides, environment
    for a in args.settings:
        overrides = [o for o in a.partition(":")[2].split(",") if o]
        env = dict(o.split("=", 1) for o in overrides if o.split("=", 1)[0].isupper())
        settings.append((a.split(":", 1)[0], [o for o in overrides if o.split("=", 1)[0] not in env], env))
    corpus = WORK / f"corpus-{args.mb:g}mb"
    if not corpus.is_dir():
        build_corpus(args.mb, corpus)
    runs = {"one process": ["--scheduler", "synchronous"], f"{args.workers} workers": ["--workers", str(args.workers)]}
    res: dict = {name: {label: [] for label in runs} | {"pairs": [], "identical": []} for name, _, _ in settings}
    for turn in range(args.turns):
        for name, recipe, env in settings:
            outs = []
            for label, sched in runs.items():
                out = WORK / "alternate" / f"{name}-{label.replace(' ', '')}"
                subprocess.run(["rm", "-rf", str(out)], check=True)
                r = run_recipe(corpus, out, sched, ["--profile", args.profile, *recipe], env)
                res[name][label].append([r["wall_s"], r["cpu_s_all_processes"]])
                outs.append(out)
            one, cluster = (res[name][label][-1][0] for label in runs)
            res[name]["pairs"].append(round(one / cluster, 3))
            res[name]["identical"].append(compare_outputs(*outs)["identical"])
            print(f"turn {turn + 1} {name}: " + ", ".join(f"{label} {res[name][label][-1]}" for label in runs)
                  + f", pair {res[name]['pairs'][-1]}x, outputs identical: {res[name]['identical'][-1]}", flush=True)
    for name, r in res.items():
        med = {label: [statistics.median(x[i] for x in r[label]) for i in (0, 1)] for label in runs}
        (one, one_cpu), (cluster, cluster_cpu) = med.values()
        r["medians"] = {"wall_ratio": round(one / cluster, 3), "extra_cpu": round(cluster_cpu / one_cpu - 1, 3), **med}
        print(f"{name}: wall {one:.1f} / {cluster:.1f} s = {one / cluster:.3f}x, CPU {one_cpu:.1f} / {cluster_cpu:.1f} "
              f"({cluster_cpu / one_cpu - 1:+.0%}), pairs {r['pairs']}", flush=True)
    (WORK / f"alternate-{args.mb:g}mb.json").write_text(json.dumps(res, indent=1))


if __name__ == "__main__":
    main()
