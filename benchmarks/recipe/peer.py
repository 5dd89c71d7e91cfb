"""This tree's recipe against a peer commit's, alternated on one corpus, with the tokenizer pass.

    python benchmarks/recipe/peer.py --peer 3f4d58f --mb 30 --turns 3              # one process
    python benchmarks/recipe/peer.py --peer 3f4d58f --mb 30 --turns 3 --workers 2  # and 2 workers
    python benchmarks/recipe/peer.py --peer 3f4d58f --input sample_data --turns 3   # a small corpus: the fixed costs

The peer is ``git archive <commit>`` unpacked in the temp folder (``curation-peer-<commit>``) and run
with its own code and recipe file (``PYTHONPATH`` set to it), so both trees run in the same call,
on the same corpus (``bench_recipe.build_corpus``), in turns: peer then this tree, one process
(``--scheduler synchronous``), then with ``--workers`` the same on a LocalCluster. Each turn also
times one pass of the Qwen tokenizer over the corpus (``bench_recipe.tokenizer_bound``), so that
every recipe figure has its bound from the same minutes of the machine. Reported: per run and
tree the medians of wall seconds and CPU seconds of all processes, the tokenizer pass over the
recipe's CPU, each stage's CPU seconds (``stats.json``) and, with ``--workers``, the 2-worker
speed-up and extra CPU of each tree; every run's outputs are compared with the peer's (documents,
ledgers, shards, packing, manifests). The load average is printed before every run.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_recipe import ROOT, WORK, build_corpus, compare_outputs, corpus_texts, run_recipe, tokenizer_bound  # noqa: E402


def peer_tree(commit: str) -> Path:
    """``git archive commit`` unpacked once in the temp folder (outside the repository: its
    sources are not this tree's)."""
    out = Path(tempfile.gettempdir()) / f"curation-peer-{commit}"
    if not (out / "pipelines").is_dir():
        out.mkdir(parents=True, exist_ok=True)
        archive = subprocess.run(["git", "archive", commit], cwd=ROOT, check=True, capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", str(out)], input=archive, check=True)
    return out


def run_tree(tree: Path, corpus: Path, out: Path, sched: list[str], profile: str) -> dict:
    """``run_recipe`` with ``tree``'s code and recipe file (its own process, cwd = the tree)."""
    subprocess.run(["rm", "-rf", str(out)], check=True)
    env = {"PYTHONPATH": str(tree)}
    if tree == ROOT:
        return run_recipe(corpus, out, sched, ["--profile", profile], env)
    import bench_recipe

    saved = bench_recipe.ROOT
    bench_recipe.ROOT = tree
    try:
        return bench_recipe.run_recipe(corpus, out, sched, ["--profile", profile], env)
    finally:
        bench_recipe.ROOT = saved


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--peer", required=True, help="a commit of this repository (e.g. main's)")
    ap.add_argument("--mb", type=float, default=30)
    ap.add_argument("--input", type=Path, default=None, help="a corpus folder to use as it is (instead of --mb)")
    ap.add_argument("--turns", type=int, default=3)
    ap.add_argument("--workers", type=int, default=0)
    ap.add_argument("--profile", default="cpu")
    args = ap.parse_args()
    corpus = args.input.resolve() if args.input else WORK / f"corpus-{args.mb:g}mb"
    if not corpus.is_dir():
        build_corpus(args.mb, corpus)
    texts = corpus_texts(corpus) if args.input is None else []
    mb = round(sum(len(t.encode("utf-8")) for t in texts) / 1e6, 2) if texts else None
    trees = {"peer": peer_tree(args.peer), "this": ROOT}
    runs = {"one process": ["--scheduler", "synchronous"]}
    if args.workers:
        runs[f"{args.workers} workers"] = ["--workers", str(args.workers)]
    res: dict = {label: {name: [] for name in trees} for label in runs}
    bound: list[float] = []
    identical: list[bool] = []
    for turn in range(args.turns):
        bound.append(tokenizer_bound(texts)["hf_tokenizers_cpu_s"] if texts else 0.0)
        for label, sched in runs.items():
            outs = {}
            for name, tree in trees.items():
                load = os.getloadavg()[0]
                out = WORK / "peer" / f"{name}-{label.replace(' ', '')}"
                r = run_tree(tree, corpus, out, sched, args.profile)
                r["load"] = round(load, 2)
                res[label][name].append(r)
                outs[name] = out
                print(f"turn {turn + 1} {label} {name}: wall {r['wall_s']} s, CPU {r['cpu_s_all_processes']} s, "
                      f"tokenizer pass {bound[-1]} CPU-s, load {r['load']}", flush=True)
            identical.append(compare_outputs(outs["peer"], outs["this"])["identical"])
    summary: dict = {"corpus_mb": mb, "peer": args.peer, "tokenizer_pass_cpu_s": bound, "outputs_identical": identical}
    for label, by_tree in res.items():
        for name, rs in by_tree.items():
            cpu = statistics.median(r["cpu_s_all_processes"] for r in rs)
            stages = {st["stage"]: statistics.median((r["stages"][i]["cpu_seconds"] or 0) for r in rs)
                      for i, st in enumerate(rs[0]["stages"])}
            summary[f"{label} {name}"] = {
                "wall_s": [r["wall_s"] for r in rs], "cpu_s": [r["cpu_s_all_processes"] for r in rs],
                "load": [r["load"] for r in rs], "median_wall_s": statistics.median(r["wall_s"] for r in rs),
                "median_cpu_s": cpu, "tokenizer_ratio": round(statistics.median(bound) / cpu, 3) if texts else None,
                "stage_cpu_s": stages, "outside_stages_cpu_s": round(cpu - sum(stages.values()), 2)}
    if args.workers:
        for name in trees:
            one, many = summary[f"one process {name}"], summary[f"{args.workers} workers {name}"]
            summary[f"scaling {name}"] = {"speedup": round(one["median_wall_s"] / many["median_wall_s"], 3),
                                          "extra_cpu": round(many["median_cpu_s"] / one["median_cpu_s"] - 1, 3)}
    (WORK / f"peer-{args.peer}-{args.input.name if args.input else f'{args.mb:g}mb'}.json").write_text(json.dumps(summary, indent=1))
    print(json.dumps(summary, indent=1))


if __name__ == "__main__":
    main()
