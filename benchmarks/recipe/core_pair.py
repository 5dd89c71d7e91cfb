"""What two busy processes get of this machine: the same work alone, then two copies at once.

A 2-worker run can only be as fast as the machine lets two processes run side by side. On a VM
whose two vCPUs share a physical core, or whose host is busy, each process runs slower when the
other one works: the work's CPU seconds grow and the wall-time speed-up of two workers falls
below 2x before any cost of the recipe itself. This script measures that bound with the recipe's
own kind of work: one pass of the Qwen tokenizer (HF ``tokenizers``, one thread) over the texts
of a corpus folder (``bench_recipe.py`` builds them), alone, then in two processes at once, in
alternated turns.

    python benchmarks/recipe/core_pair.py --mb 30 --turns 3

Prints, per turn, the CPU seconds of the pass alone and of each of the two concurrent passes, the
wall seconds of both, and their ratios (CPU inflation, and the speed-up two processes give over
running the two passes one after the other).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import bench_recipe  # noqa: E402

CHILD = """
import sys, time
sys.path.insert(0, {here!r})
import bench_recipe
from curation.tokens import load_tokenizer
texts = bench_recipe.corpus_texts(bench_recipe.Path({corpus!r}))
tok = load_tokenizer("qwen")
t0 = time.process_time()
for i in range(0, len(texts), 64):
    tok.encode_batch(texts[i:i + 64], add_special_tokens=False)
print(time.process_time() - t0)
"""


def _pass(corpus: Path, n: int) -> tuple[list[float], float]:
    """CPU seconds of each of ``n`` concurrent tokenizer passes, and the wall seconds of all."""
    env = {**os.environ, "RAYON_NUM_THREADS": "1", "TOKENIZERS_PARALLELISM": "false"}
    code = CHILD.format(here=str(HERE), corpus=str(corpus))
    t0 = time.time()
    procs = [subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True, env=env) for _ in range(n)]
    outs = [float(p.communicate()[0].strip()) for p in procs]
    return outs, time.time() - t0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mb", type=float, default=30)
    ap.add_argument("--turns", type=int, default=3)
    args = ap.parse_args()
    corpus = bench_recipe.WORK / f"corpus-{args.mb:g}mb"
    bench_recipe.build_corpus(args.mb, corpus)
    turns = []
    for turn in range(args.turns):
        (alone,), wall_alone = _pass(corpus, 1)
        pair, wall_pair = _pass(corpus, 2)
        row = {"alone_cpu_s": round(alone, 2), "pair_cpu_s": [round(x, 2) for x in pair], "alone_wall_s": round(wall_alone, 2),
               "pair_wall_s": round(wall_pair, 2), "cpu_inflation": round(statistics.mean(pair) / alone, 3),
               "pair_speedup": round(2 * wall_alone / wall_pair, 3)}
        print(f"turn {turn + 1}: {json.dumps(row)}", flush=True)
        turns.append(row)
    print(json.dumps({"corpus_mb": args.mb, "median_cpu_inflation": statistics.median(r["cpu_inflation"] for r in turns),
                      "median_pair_speedup": statistics.median(r["pair_speedup"] for r in turns)}))


if __name__ == "__main__":
    main()
