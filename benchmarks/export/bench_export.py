"""What `curate export` costs against one tokenizer pass over the same text, and what it writes per token.

The run: the whole recipe (``--profile cpu``) on a realistic mix from ../shared/data (real web pages
with their HTML, textbook pages, source files of real repositories, arXiv abstracts: the corpus of
benchmarks/mixture_recipe), written to ``--work`` (never into the repository).

Figures, each export in one process (``--scheduler synchronous``) so its CPU is one number:
- **tokenizer pass**: every shard of the exported phases read and the ids of the documents a
  trainer gets computed once (every document of a pre-training shard; in a packed mid-training
  phase, those the plan shows at least once)
  (``curation.tokens.encode``: the exports' own tokenizer call), as a command of its own (a child
  process, like the exports: interpreter, imports, reads and tokenizing, nothing written);
- **export megatron** / **export datasets --truncation random** / **export datasets**: the command's
  CPU (user + system of the child), its ratio to the tokenizer pass (target ≤ 1.3), and the bytes
  it wrote per token (the disk a full-scale export needs);
- the same Megatron export on 2 workers (wall seconds) for the cluster path.

    python benchmarks/export/bench_export.py --work /tmp/bench_export
    python benchmarks/export/bench_export.py --work /tmp/bench_export --run /tmp/bench_export/run   # reuse a run
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from benchmarks.mixture_recipe.bench_recipe import build_corpus  # noqa: E402
from curation.tokens import encode  # noqa: E402

ENV = {**os.environ, "PYTHONPATH": str(REPO), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}


def child_cpu() -> float:
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def curate(*args: str) -> tuple[float, float]:
    """Run ``curate …`` in a child; (wall seconds, CPU seconds of the child and its children)."""
    cpu, t0 = child_cpu(), time.time()
    proc = subprocess.run([sys.executable, "-m", "pipelines.cli", *args], cwd=REPO, env=ENV, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"curate {' '.join(args)} failed:\n{proc.stderr[-3000:]}")
    return time.time() - t0, child_cpu() - cpu


def tokenizer_pass(run: Path) -> dict[str, float]:
    """Read every shard of every phase and tokenize its texts once (run in a child by ``--tokenizer-pass``)."""
    mix = next(run.glob("*_mixture"))
    texts = tokens = 0
    t0 = time.process_time()
    for path in sorted((mix / "manifests").glob("*.json")):
        manifest = json.loads(path.read_text())
        tok = manifest["tokenizer"]
        for g in manifest["groups"]:
            for s in g["shards"]:
                table = pq.read_table(mix / s["path"], columns=["text", "copies"])
                col = table.column("text").to_pylist()
                if manifest["packing"]["mode"] == "best_fit":  # a packed phase's sequences hold its shown documents only
                    col = [t for t, c in zip(col, table.column("copies").to_pylist(), strict=True) if c > 0]
                texts += sum(len(t.encode()) for t in col)
                tokens += sum(len(x) for x in encode(col, tok))
    return {"in_process_cpu_s": time.process_time() - t0, "text_mb": texts / 1e6, "tokens": tokens}


def tokenizer_pass_command(run: Path) -> dict[str, float]:
    """:func:`tokenizer_pass` as a command of its own: its figures plus the child's CPU and wall."""
    cpu, t0 = child_cpu(), time.time()
    proc = subprocess.run([sys.executable, __file__, "--work", str(run.parent), "--tokenizer-pass", str(run)], cwd=REPO, env=ENV, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"tokenizer pass failed:\n{proc.stderr[-3000:]}")
    return {**json.loads(proc.stdout), "cpu_s": child_cpu() - cpu, "wall_s": time.time() - t0}


def folder_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--work", type=Path, required=True)
    ap.add_argument("--run", type=Path, default=None, help="an existing run folder (skips building the corpus and the run)")
    ap.add_argument("--code", type=int, default=6000)
    ap.add_argument("--textbook", type=int, default=300)
    ap.add_argument("--math", type=int, default=2000)
    ap.add_argument("--tokenizer-pass", type=Path, default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.tokenizer_pass is not None:
        print(json.dumps(tokenizer_pass(args.tokenizer_pass)))
        return
    run = args.run or args.work / "run"
    if args.run is None:
        build_corpus(args.work / "input", args.code, args.textbook, args.math)
        wall, cpu = curate("run", "pipelines/configs/glm45.yaml", "--input", str(args.work / "input"), "--output", str(run),
                           "--profile", "cpu", "--quiet", "edu_score.annotator=none")
        print(f"recipe: {wall:.0f} s wall, {cpu:.0f} CPU-s")
    base = tokenizer_pass_command(run)
    print(f"tokenizer pass: {base['text_mb']:.1f} MB of shard text, {base['tokens']:,} tokens, {base['cpu_s']:.1f} CPU-s "
          f"({base['in_process_cpu_s']:.1f} of them reading and tokenizing; {base['text_mb'] / base['cpu_s']:.2f} MB/CPU-s)")
    results = {"tokenizer_pass": base}
    for name, extra in (("megatron", []), ("datasets --truncation random", ["--truncation", "random"]), ("datasets", [])):
        out = args.work / ("export-" + name.replace(" ", "").replace("--", "-"))
        wall, cpu = curate("export", name.split()[0], str(run), "--output", str(out), "--scheduler", "synchronous", "--quiet", *extra)
        size = folder_bytes(out)
        results[name] = {"wall_s": wall, "cpu_s": cpu, "ratio": cpu / base["cpu_s"], "bytes": size, "bytes_per_token": size / base["tokens"]}
        print(f"export {name}: {cpu:.1f} CPU-s = {cpu / base['cpu_s']:.2f}x the tokenizer pass; {size / 1e6:.1f} MB, "
              f"{size / base['tokens']:.2f} bytes per token of the pass; {wall:.1f} s wall")
    wall, cpu = curate("export", "megatron", str(run), "--output", str(args.work / "export-megatron-2w"), "--workers", "2", "--quiet")
    results["megatron, 2 workers"] = {"wall_s": wall, "cpu_s": cpu}
    print(f"export megatron on 2 workers: {wall:.1f} s wall, {cpu:.1f} CPU-s (one process: {results['megatron']['wall_s']:.1f} s)")
    (args.work / "results.json").write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
