"""The mixture stage on the real corpora of ../shared/data, at two sizes, against a copy baseline.

    python benchmarks/mixture/bench_stage.py [--scale 1 4]

Input: web pages, code files (with their repositories) and math documents from ../shared/data,
token-counted with the Qwen tokenizer (cached under benchmarks/_work/mixture/), with synthetic
quality levels / code tiers / edu bands (a hash of doc_id; the stage only reads the decisions).
``--scale k`` replicates the corpus k times with new ids and repository names, to see how the
cost grows. Baseline in the same run: reading the input and writing every document once to
Parquet with pyarrow (what any stage that writes shards has to pay at least). Runs on an
embedded LocalCluster with one worker per core, as the CLI does.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from curation.mixture.groups import stable_hash  # noqa: E402
from curation.tokens import count_tokens  # noqa: E402
from pipelines.io import write_frame  # noqa: E402

DATA = ROOT / ".." / "shared" / "data"
WORK = ROOT / "benchmarks" / "_work" / "mixture"


def tokens_cached(name: str, texts: list[str]) -> np.ndarray:
    path = WORK / f"{name}_tokens.parquet"
    if path.exists():
        return pd.read_parquet(path)["n_tokens"].to_numpy()
    n = count_tokens(texts, "qwen")
    WORK.mkdir(parents=True, exist_ok=True)
    pd.DataFrame({"n_tokens": n}).to_parquet(path)
    return n


def pick(ids: pd.Series, labels: list[str], probs: list[float]) -> np.ndarray:
    u = stable_hash([f"bench|{i}" for i in ids]).astype(np.float64) / 2.0**64
    return np.array(labels, dtype=object)[np.searchsorted(np.cumsum(probs), u, side="right").clip(0, len(labels) - 1)]


def corpus() -> pd.DataFrame:
    web = pd.read_parquet(DATA / "web" / "web_docs.parquet", columns=["doc_id", "url", "text"]).dropna(subset=["text"])
    web = web.assign(source="web", doc_id="web-" + web["doc_id"].astype(str))
    web["n_tokens"] = tokens_cached("web", web["text"].tolist())
    web["quality_level"] = pick(web["doc_id"], ["high", "medium_high", "medium", "medium_low", "low"], [0.05, 0.05, 0.3, 0.25, 0.35])
    code = pd.read_parquet(DATA / "code" / "code_files.parquet", columns=["repo", "path", "language", "text"])
    code = code.assign(source="code", doc_id=[f"code-{i}" for i in range(len(code))])
    code["n_tokens"] = tokens_cached("code", code["text"].tolist())
    code["code_tier"] = pick(code["doc_id"], ["high", "medium", "low"], [0.3, 0.5, 0.2])
    maths = [pd.read_json(DATA / "math" / f, lines=True) for f in ("openstax_modules.jsonl.gz", "arxiv_abstracts.jsonl.gz", "stacks_project_chapters.jsonl.gz")]
    math = pd.DataFrame({"text": pd.concat([m["text"].astype(str) for m in maths], ignore_index=True)})
    math = math.assign(source="math_science", doc_id=[f"math-{i}" for i in range(len(math))])
    math["n_tokens"] = tokens_cached("math", math["text"].tolist())
    math["edu_band"] = pick(math["doc_id"], ["high", "medium", "low"], [0.4, 0.4, 0.2])
    df = pd.concat([web, code, math], ignore_index=True)
    for col in ("url", "repo", "path", "language", "meta", "quality_level", "code_tier", "edu_band"):
        df[col] = df[col].astype(object).where(df[col].notna(), None) if col in df else None
    return df


def make_input(df: pd.DataFrame, scale: int, folder: Path, parts: int = 8) -> None:
    shutil.rmtree(folder, ignore_errors=True)
    frames = []
    for k in range(scale):
        f = df.copy()
        f["doc_id"] = f["doc_id"] + f"-x{k}"
        f["repo"] = [f"{r}-x{k}" if isinstance(r, str) else None for r in f["repo"]]
        frames.append(f)
    full = pd.concat(frames, ignore_index=True).sample(frac=1.0, random_state=0).reset_index(drop=True)
    for i, idx in enumerate(np.array_split(np.arange(len(full)), parts * scale)):
        write_frame(full.iloc[idx].reset_index(drop=True), folder / "docs" / f"part-{i:05d}.parquet")
    (folder / "_SUCCESS").write_text(json.dumps({"output_fingerprint": f"bench-{scale}"}))


def copy_baseline(folder: Path, out: Path) -> float:
    t = time.perf_counter()
    shutil.rmtree(out, ignore_errors=True)
    for p in sorted((folder / "docs").glob("part-*.parquet")):
        write_frame(pd.read_parquet(p), out / p.name)
    return time.perf_counter() - t


def main() -> None:
    import dask
    from distributed import Client, LocalCluster

    from pipelines.recipe import load_recipe
    from pipelines.runner import run_stage

    ap = argparse.ArgumentParser()
    ap.add_argument("--scale", type=int, nargs="+", default=[1, 4])
    args = ap.parse_args()
    base = corpus()
    print("| scale | documents | tokens | mixture s | docs/s | copy baseline s | shards | manifests tokens (phase 1) | fill repo/long |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    with dask.config.set({"dataframe.shuffle.method": "tasks"}), LocalCluster(processes=True, threads_per_worker=1) as cluster, Client(cluster) as client:
        for scale in args.scale:
            inp = WORK / f"in-{scale}"
            out = WORK / f"out-{scale}"
            make_input(base, scale, inp)
            shutil.rmtree(out, ignore_errors=True)
            shutil.rmtree(WORK / ".cache", ignore_errors=True)
            recipe = load_recipe(None, [])
            t = time.perf_counter()
            res = run_stage("mixture", recipe, stage_dir=out, input_dir=inp, client=client, quiet=True)
            dt = time.perf_counter() - t
            copy_s = copy_baseline(inp, WORK / f"copy-{scale}")
            n = res.stats["in"]["documents"]
            ms = {p.stem: json.loads(p.read_text()) for p in (out / "manifests").glob("*.json")}
            shards = sum(m["totals"]["shards"] for m in ms.values())
            fills = "/".join(f"{ms[k]['packing']['fill_rate']:.3f}" for k in ("midtrain_repo_code_32k", "midtrain_long_context_128k"))
            print(f"| {scale} | {n:,} | {res.stats['in']['tokens']:,} | {dt:.1f} | {n / dt:,.0f} | {copy_s:.1f} | {shards} | "
                  f"{ms['pretrain_phase1']['totals']['tokens']:,} | {fills} |")


if __name__ == "__main__":
    main()
