"""The whole recipe on a realistic mix of ../shared/data: MB per CPU-second per stage, with the bound.

    python benchmarks/recipe/bench_recipe.py --mb 40                       # one process (synchronous)
    python benchmarks/recipe/bench_recipe.py --mb 40 --workers 2           # and a 2-worker LocalCluster
    python benchmarks/recipe/bench_recipe.py --mb 40 --profile cpu         # the CPU profile
    python benchmarks/recipe/bench_recipe.py --mb 40 semdedup.model=minilm-static      # extra overrides
    python benchmarks/recipe/bench_recipe.py --mb 40 --workers 2 --no-bound             # skip the tokenizer pass
    python benchmarks/recipe/bench_recipe.py --mb 40 --workers 2 --repeat 3             # alternate, report medians
    python benchmarks/recipe/bench_recipe.py --mb 80 --workers 2 --only-workers         # weak scaling: twice the corpus

With ``--workers`` the two runs are also compared file by file: every document, ledger, shard,
packing and manifest file of the cluster run must have the same bytes as the synchronous run's
(``outputs_identical`` in the results).

The corpus is real text: web pages' extracted text (WCXB, scrapinghub, Common Crawl WET/cc_net),
code files grouped by repository, OpenStax modules, arXiv abstracts, Stacks Project chapters and
Chinese technical notes, cut to ``--mb`` megabytes in the proportions of SHARE. In the same run the
benchmark times one pass of the Qwen tokenizer (HF ``tokenizers``, one thread: the
recipe's stated bound) and of the ``tiktoken`` counter over the same texts. Results: benchmarks/_work/recipe/.
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

import pandas as pd

ROOT = Path(__file__).resolve().parents[1].parent
DATA = Path(os.environ.get("CURATION_SHARED_DATA", ROOT.parent / "shared" / "data"))  # as benchmarks/extract/bench_crawl.py
WORK = ROOT / "benchmarks" / "_work" / "recipe"
SHARE = {"web": 0.45, "code": 0.35, "math_science": 0.20}  # of bytes


def build_corpus(mb: float, out: Path) -> dict[str, float]:
    """Write web.jsonl, code.jsonl, math_science.jsonl under ``out``; return MB per file."""
    out.mkdir(parents=True, exist_ok=True)
    web = pd.read_parquet(DATA / "web" / "web_docs.parquet", columns=["doc_id", "url", "source", "text"])
    web = web[web["text"].fillna("").str.len() > 0].rename(columns={"source": "origin"}).sample(frac=1.0, random_state=0)
    code = pd.read_parquet(DATA / "code" / "code_files.parquet", columns=["repo", "path", "language", "text"])
    repos = code["repo"].drop_duplicates().sample(frac=1.0, random_state=0)
    code = code.set_index("repo").loc[repos].reset_index()
    math = []
    for f in ("openstax_modules", "arxiv_abstracts", "stacks_project_chapters"):
        math.append(pd.read_json(DATA / "math" / f"{f}.jsonl.gz", lines=True)[["text"]].assign(origin=f))
    zh = pd.read_json(DATA / "zh" / "zh_tech_notes.jsonl.gz", lines=True)[["text"]].assign(origin="zh_tech_notes")
    frames = {"web": pd.concat([zh, web]), "code": code, "math_science": pd.concat(math).sample(frac=1.0, random_state=0)}
    sizes = {}
    for source, df in frames.items():
        budget = mb * SHARE[source] * 1e6
        nbytes = df["text"].str.len().cumsum()
        df = df[nbytes <= budget].assign(source=source)
        df.to_json(out / f"{source}.jsonl", orient="records", lines=True, force_ascii=False)
        sizes[source] = round(df["text"].str.encode("utf-8").str.len().sum() / 1e6, 2)
    return sizes


def corpus_texts(folder: Path) -> list[str]:
    return [t for f in sorted(folder.glob("*.jsonl")) for t in pd.read_json(f, lines=True)["text"].astype(str)]


def tokenizer_bound(texts: list[str]) -> dict[str, float]:
    from curation import tokens

    os.environ["RAYON_NUM_THREADS"] = "1"
    hf = tokens.load_tokenizer("qwen")
    t0 = time.process_time()
    for i in range(0, len(texts), 256):
        hf.encode_batch(texts[i : i + 256], add_special_tokens=False)
    hf_s = time.process_time() - t0
    t0 = time.process_time()
    tokens.count_tokens(texts, "qwen")
    return {"hf_tokenizers_cpu_s": round(hf_s, 2), "tiktoken_cpu_s": round(time.process_time() - t0, 2)}


def run_recipe(corpus: Path, out: Path, scheduler_args: list[str], overrides: list[str], env: dict[str, str] | None = None) -> dict:
    """One ``curate run`` of the recipe in a process of its own (``env``: variables added to its
    environment); its wall time, the CPU of all its processes and each stage's figures."""
    cmd = [sys.executable, "-m", "pipelines.cli", "run", "pipelines/configs/glm45.yaml", "--input", str(corpus),
           "--output", str(out), "--quiet", *scheduler_args, *overrides]
    before = os.times()
    wall = time.time()
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, env={**os.environ, **(env or {})})
    after = os.times()
    if proc.returncode != 0:
        raise SystemExit(f"recipe failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    run = json.loads((out / "run.json").read_text())
    stages = []
    for s in run["stages"]:
        stats = json.loads((out / s["folder"] / "stats.json").read_text())
        stages.append({"stage": s["name"], "docs_in": stats["in"]["documents"], "tokens_in": stats["in"]["tokens"],
                       "seconds": stats["seconds"], "cpu_seconds": stats.get("cpu_seconds"),
                       "driver_cpu_seconds": stats.get("driver_cpu_seconds")})
    return {"wall_s": round(time.time() - wall, 1),
            "cpu_s_all_processes": round((after.children_user + after.children_system) - (before.children_user + before.children_system), 1),
            "stages": stages}


OUTPUT_FOLDERS = ("docs", "ledger", "shards", "packing", "manifests")


def output_files(run: Path) -> dict[str, str]:
    """relative path → sha256 of every output file of a run (documents, ledgers, shards, packing, manifests)."""
    import hashlib

    out = {}
    for stage in sorted(p for p in run.iterdir() if p.is_dir() and not p.name.startswith(".")):
        for folder in OUTPUT_FOLDERS:
            for f in sorted((stage / folder).rglob("*")) if (stage / folder).is_dir() else []:
                if f.is_file():
                    out[str(f.relative_to(run))] = hashlib.sha256(f.read_bytes()).hexdigest()
    return out


def compare_outputs(a: Path, b: Path) -> dict:
    fa, fb = output_files(a), output_files(b)
    differ = sorted(k for k in fa.keys() & fb.keys() if fa[k] != fb[k])
    only = sorted(fa.keys() ^ fb.keys())
    return {"files": len(fa), "identical": not differ and not only, "differ": differ[:10], "only_in_one": only[:10]}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mb", type=float, default=40)
    ap.add_argument("--workers", type=int, default=0, help="also run on a LocalCluster of this many workers")
    ap.add_argument("--profile", default=None, help="a curate --profile (e.g. cpu)")
    ap.add_argument("--no-bound", action="store_true", help="skip the tokenizer pass (the bound)")
    ap.add_argument("--repeat", type=int, default=1, help="alternate the runs this many times; report medians")
    ap.add_argument("--only-workers", action="store_true", help="run the cluster alone (weak scaling: pair it with a smaller --mb)")
    ap.add_argument("overrides", nargs="*")
    args = ap.parse_args()
    corpus = WORK / f"corpus-{args.mb:g}mb"
    sizes = build_corpus(args.mb, corpus)
    mb = sum(sizes.values())
    result = {"corpus_mb": sizes, "profile": args.profile, "overrides": args.overrides,
              **({} if args.no_bound else tokenizer_bound(corpus_texts(corpus)))}
    runs = {} if args.only_workers and args.workers else {"synchronous": ["--scheduler", "synchronous"]}
    if args.workers:
        runs[f"{args.workers} workers"] = ["--workers", str(args.workers)]
    # --repeat alternates the runs (sync, cluster, sync, cluster, ...) and keeps each one's
    # median wall and CPU: other jobs on a shared machine move a single run by 10-20 %.
    tries: dict[str, list[dict]] = {label: [] for label in runs}
    for attempt in range(args.repeat):
        for label, sched in runs.items():
            out = WORK / f"run-{args.mb:g}mb-{args.profile or 'default'}-{label.replace(' ', '')}"
            subprocess.run(["rm", "-rf", str(out)], check=True)
            r = run_recipe(corpus, out, sched, [*(["--profile", args.profile] if args.profile else []), *args.overrides])
            r["out"] = str(out)
            tries[label].append(r)
            print(f"{label} (try {attempt + 1})", json.dumps({k: v for k, v in r.items() if k not in ("stages", "out")}), flush=True)
            for st in r["stages"]:
                print(f"  {st['stage']:<14} {st['docs_in']:>7} docs  {st['seconds']:>7.1f} s  {st['cpu_seconds'] or 0:>7.1f} CPU-s"
                      f"  (driver {st['driver_cpu_seconds'] or 0:.1f})", flush=True)
    for label, rs in tries.items():
        r = dict(rs[-1])
        r["wall_s"] = float(statistics.median(x["wall_s"] for x in rs))
        r["cpu_s_all_processes"] = float(statistics.median(x["cpu_s_all_processes"] for x in rs))
        r["tries"] = [{"wall_s": x["wall_s"], "cpu_s": x["cpu_s_all_processes"]} for x in rs]
        r["stages"] = [{**st, "seconds": statistics.median(x["stages"][i]["seconds"] for x in rs),
                        "cpu_seconds": statistics.median((x["stages"][i]["cpu_seconds"] or 0) for x in rs),
                        "driver_cpu_seconds": statistics.median((x["stages"][i]["driver_cpu_seconds"] or 0) for x in rs)}
                       for i, st in enumerate(rs[-1]["stages"])]
        r["recipe_mb_per_cpu_s"] = round(mb / r["cpu_s_all_processes"], 3)
        if "hf_tokenizers_cpu_s" in result:
            r["tokenizer_ratio"] = round(result["hf_tokenizers_cpu_s"] / r["cpu_s_all_processes"], 3)
        result[label] = r
    if args.workers and "synchronous" in result:
        sync, cluster = result["synchronous"], result[f"{args.workers} workers"]
        result["speedup"] = round(sync["wall_s"] / cluster["wall_s"], 3)
        result["extra_cpu"] = round(cluster["cpu_s_all_processes"] / sync["cpu_s_all_processes"] - 1, 3)
        result["outputs_identical"] = compare_outputs(Path(sync["out"]), Path(cluster["out"]))
        print(f"{args.workers} workers (median of {args.repeat}): {result['speedup']}x faster, {result['extra_cpu']:+.0%} CPU; "
              f"outputs identical: {result['outputs_identical']['identical']} ({result['outputs_identical']['files']} files)", flush=True)
    for label in runs:
        result[label].pop("out", None)
    tag = "-".join(["results", f"{args.mb:g}mb", args.profile or "default", *([f"w{args.workers}"] if args.workers else []),
                    *(["only"] if args.only_workers else [])])
    (WORK / f"{tag}.json").write_text(json.dumps(result, indent=1))
    print(json.dumps({k: v for k, v in result.items() if not isinstance(v, dict) or k == "corpus_mb"}))


if __name__ == "__main__":
    main()
