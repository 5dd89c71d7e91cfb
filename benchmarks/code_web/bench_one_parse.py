"""The recipe on a crawl: each stage's share of the CPU, this tree against a peer commit (the
re-parse-every-page path), and code_web's recall in both.

    python benchmarks/code_web/bench_one_parse.py --mb 60 --peer 6569b6f [--turns 5]

Real pages (``html`` of ../shared/data/web/web_docs.parquet, a seeded shuffle, up to ``--mb`` MB
of HTML) are written into a gzipped WARC (request + response pairs, as Common Crawl). The recipe
(``pipelines/configs/glm45.yaml --profile cpu``, one process: ``--scheduler synchronous``) runs on
it twice, alternated: from ``git archive <peer>`` and from this tree. Per stage: ``cpu_seconds``
of its stats.json and its share of the run. Recall: the recalled doc_ids (with method and tier)
of both runs, and the share of pages with real code blocks (a ``<pre>`` of ≥ 3 non-empty lines,
≥ 40 characters, ≥ 3 code punctuation marks; judged from the HTML, apart from the recall) that
code_web recalls. Documents, ledgers, shards and manifests of both runs are compared. With
``--turns N`` the two run N times alternated and each stage's CPU-s is the median of its N runs.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks" / "extract"))
sys.path.insert(0, str(ROOT / "benchmarks" / "recipe"))
from bench_crawl import DATA, write_warc  # noqa: E402
from bench_recipe import compare_outputs  # noqa: E402


def build_crawl(mb: float, folder: Path) -> pd.DataFrame:
    pages = pd.read_parquet(DATA, columns=["url", "html"])
    pages = pages[pages["html"].fillna("").str.len() > 0].sample(frac=1.0, random_state=0)
    size = pages["html"].str.encode("utf-8", "surrogatepass").str.len()
    pages = pages[size.cumsum() <= mb * 1e6].reset_index(drop=True)
    pages["url"] = [u or f"https://page{i}.example/" for i, u in enumerate(pages["url"])]
    folder.mkdir(parents=True, exist_ok=True)
    write_warc(pages, folder / "pages.warc.gz")
    return pages


_PRE = re.compile(r"<pre\b[^>]*>(.*?)</pre>", re.IGNORECASE | re.DOTALL)


def real_code(html: str) -> bool:
    """A ``<pre>`` of ≥ 3 non-empty lines, ≥ 40 characters and ≥ 3 code punctuation marks."""
    for block in _PRE.findall(html):
        text = re.sub(r"<[^>]+>", "", block)
        if sum(1 for ln in text.splitlines() if ln.strip()) >= 3 and len(text) >= 40 and sum(text.count(c) for c in "(){};=[]") >= 3:
            return True
    return False


def run(tree: Path, corpus: Path, out: Path) -> dict:
    shutil.rmtree(out, ignore_errors=True)  # a fresh run each turn, not a resumed one
    cmd = [sys.executable, "-m", "pipelines.cli", "run", "pipelines/configs/glm45.yaml", "--input", str(corpus), "--output", str(out),
           "--quiet", "--profile", "cpu", "--scheduler", "synchronous"]
    env = {**os.environ, "PYTHONPATH": str(tree), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    wall = time.time()
    proc = subprocess.run(cmd, cwd=tree, capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        raise SystemExit(f"recipe failed in {tree}:\n{proc.stderr[-3000:]}")
    stages = {}
    for s in json.loads((out / "run.json").read_text())["stages"]:
        stats = json.loads((out / s["folder"] / "stats.json").read_text())
        stages[s["name"]] = {"cpu_s": stats.get("cpu_seconds"), "extra": stats.get("extra", {})}
    total = sum(v["cpu_s"] for v in stages.values())
    docs = pd.concat([pd.read_parquet(f, columns=["doc_id", "url", "code_web_recall", "code_tier"])
                      for f in sorted((out / "60_code_web" / "docs").glob("part-*.parquet"))], ignore_index=True)
    return {"wall_s": round(time.time() - wall, 1), "cpu_s": round(total, 2),
            "stages": {k: {"cpu_s": v["cpu_s"], "share": round(v["cpu_s"] / total, 4)} for k, v in stages.items()},
            "code_web": {k: stages["code_web"]["extra"].get(k) for k in ("recalled_pages", "html_parsed_pages", "code_tags_artifact")},
            "docs": docs}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mb", type=float, default=60)
    ap.add_argument("--peer", default="6569b6f", help="commit of the re-parse-every-page path (code_web before code tags came from ingest)")
    ap.add_argument("--work", type=Path, default=None)
    ap.add_argument("--turns", type=int, default=1, help="alternated peer/this runs; medians per stage when > 1")
    args = ap.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="bench-one-parse-"))
    pages = build_crawl(args.mb, work / "crawl")
    peer = work / "peer"
    peer.mkdir(parents=True, exist_ok=True)
    subprocess.run(f"git -C {ROOT} archive {args.peer} | tar -x -C {peer}", shell=True, check=True)
    turns = [{"peer": run(peer, work / "crawl", work / "run-peer"), "this": run(ROOT, work / "crawl", work / "run-this")}
             for _ in range(args.turns)]  # alternated, peer first; the outputs compared are the last turn's
    res = turns[-1]
    if args.turns > 1:
        for name, r in res.items():  # per stage and for the run: the median CPU-s of the turns; shares from those
            stages = {k: statistics.median(t[name]["stages"][k]["cpu_s"] for t in turns) for k in r["stages"]}
            total = sum(stages.values())
            r["stages"] = {k: {"cpu_s": round(v, 3), "share": round(v / total, 4)} for k, v in stages.items()}
            r["cpu_s"], r["wall_s"] = round(total, 2), statistics.median(t[name]["wall_s"] for t in turns)
            r["turns"] = [{"cpu_s": t[name]["cpu_s"], "code_web_share": t[name]["stages"]["code_web"]["share"]} for t in turns]
    code = {u for u, h in zip(pages["url"], pages["html"], strict=True) if real_code(h)}
    out = {"pages": len(pages), "html_mb": round(pages["html"].str.len().sum() / 1e6, 2)}
    for name, r in res.items():
        d = r.pop("docs")
        rec = d[d["code_web_recall"].notna()]
        kept_code = d[d["url"].isin(code)]
        r["recalled"] = sorted(zip(rec["doc_id"], rec["code_web_recall"], rec["code_tier"], strict=True))
        r["real_code_pages_recalled"] = f"{int(kept_code['code_web_recall'].notna().sum())} / {len(kept_code)}"
        out[name] = r
    out["same_recall"] = res["peer"]["recalled"] == res["this"]["recalled"]
    out["outputs"] = compare_outputs(work / "run-peer", work / "run-this")
    for name in res:
        out[name]["recalled"] = len(out[name]["recalled"])
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
