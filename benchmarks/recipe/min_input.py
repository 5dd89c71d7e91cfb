"""Where a LocalCluster starts to pay: the whole recipe in one process against 2 workers, at sizes
around ``cluster.min_input_mb`` (the CLI's default runs inputs under it in one process).

    python benchmarks/recipe/min_input.py --turns 3                 # sample_data, 10, 18 and 30 MB mixes
    python benchmarks/recipe/min_input.py --turns 3 --mb 10 18      # the mixes alone

Each turn runs, for every corpus, ``curate run … --profile cpu`` with ``--scheduler synchronous``
and then with ``--workers 2`` (fresh processes, a fresh output folder each), and the outputs of the
two are compared file by file. The mixes come from ``bench_recipe.build_corpus`` (real web, code and
math/science text of ../shared/data). Prints each run and, per corpus, the medians: wall seconds,
CPU seconds of all processes, the cluster's speed-up and extra CPU, and what the CLI's default
chooses for it.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(ROOT))

from bench_recipe import WORK, build_corpus, compare_outputs, run_recipe  # noqa: E402

from pipelines.scheduler_choice import MIN_INPUT_MB, choose_scheduler, input_mb  # noqa: E402

MODES = {"one process": ["--scheduler", "synchronous"], "2 workers": ["--workers", "2"]}


def corpora(mbs: list[float], sample: bool) -> dict[str, Path]:
    found = {"sample_data": ROOT / "sample_data"} if sample else {}
    for mb in mbs:
        folder = WORK / f"corpus-{mb:g}mb"
        if not folder.exists():
            build_corpus(mb, folder)
        found[f"{mb:g} MB mix"] = folder
    return found


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mb", type=float, nargs="*", default=[10, 18, 30])
    ap.add_argument("--turns", type=int, default=3)
    ap.add_argument("--no-sample", action="store_true", help="leave sample_data out")
    args = ap.parse_args()
    inputs = corpora(args.mb, not args.no_sample)
    runs: dict[tuple[str, str], list[dict]] = {}
    identical: dict[str, bool] = {}
    for turn in range(args.turns):
        for name, folder in inputs.items():
            outs = {}
            for mode, options in MODES.items():
                out = WORK / f"min-input-{mode.replace(' ', '-')}"
                shutil.rmtree(out, ignore_errors=True)
                r = run_recipe(folder, out, options, ["--profile", "cpu"])
                runs.setdefault((name, mode), []).append(r)
                outs[mode] = out
                print(f"turn {turn + 1} {name:12s} {mode:11s} wall {r['wall_s']:5.1f} s, CPU {r['cpu_s_all_processes']:5.1f} s", flush=True)
            same = compare_outputs(*outs.values())["identical"]
            identical[name] = identical.get(name, True) and same
    table = []
    for name, folder in inputs.items():
        one, two = (runs[(name, m)] for m in MODES)
        wall = [statistics.median(r["wall_s"] for r in rs) for rs in (one, two)]
        cpu = [statistics.median(r["cpu_s_all_processes"] for r in rs) for rs in (one, two)]
        table.append({"corpus": name, "MiB_on_disk": round(input_mb([folder]) or 0.0, 1),
                      "one_process": {"wall_s": [r["wall_s"] for r in one], "cpu_s": [r["cpu_s_all_processes"] for r in one]},
                      "two_workers": {"wall_s": [r["wall_s"] for r in two], "cpu_s": [r["cpu_s_all_processes"] for r in two]},
                      "speedup": round(wall[0] / wall[1], 2), "extra_cpu": round(cpu[1] / cpu[0] - 1, 2),
                      "outputs_identical": identical[name], "default_runs": choose_scheduler(None, None, MIN_INPUT_MB, [folder])[1]})
    print(json.dumps(table, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
