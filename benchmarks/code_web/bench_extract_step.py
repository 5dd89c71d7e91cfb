"""Ingest's extraction step on a crawl, this tree against a peer commit: extraction, code tags (and
the code pages' re-parsed text), token counts and language ID, CPU seconds per pass over the crawl.

    python benchmarks/code_web/bench_extract_step.py --mb 60 --peer 2a30d9b --turns 3

The crawl of ``bench_one_parse.py`` (real pages in a gzipped WARC) is read once by ``curate ingest``
of this tree; its ``parsed`` artifact (the pages' HTML, before extraction) is the input of both.
Each turn runs, peer first, a fresh process per tree that calls
``pipelines.stages.ingest_extract.extract_frame`` on every part with the default extractor
(``resiliparse_routed``) and the Qwen counter: one warm-up pass (imports, models), then
``--passes`` timed passes (``time.process_time``). A whole crawl run moves by ±1 CPU-s between
calls on a shared VM; this step alone, in one process, moves by a few hundredths.
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

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks" / "code_web"))
from bench_one_parse import build_crawl  # noqa: E402

PASS = """
import json, sys, time
from pathlib import Path
from pipelines.kit import Artifact
from pipelines.stages.ingest_extract import extract_frame
parsed = Artifact(Path(sys.argv[1]))
parts = [(parsed.read_part(i), Artifact(parsed.path / "html").read_part(i)) for i in range(len(parsed.parts()))]
def one_pass():
    for df, pages in parts:
        extract_frame(df, pages, "resiliparse_routed", "qwen", 0)
one_pass()
out = []
for _ in range(int(sys.argv[2])):
    t = time.process_time()
    one_pass()
    out.append(time.process_time() - t)
print(json.dumps(out))
"""


def passes(tree: Path, parsed: Path, n: int) -> list[float]:
    proc = subprocess.run([sys.executable, "-c", PASS, str(parsed), str(n)], cwd=tree, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(tree), "HF_HUB_OFFLINE": "1"}, check=True)
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mb", type=float, default=60)
    ap.add_argument("--peer", default="2a30d9b")
    ap.add_argument("--turns", type=int, default=3)
    ap.add_argument("--passes", type=int, default=3)
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-extract-step-"))
    pages = build_crawl(args.mb, work / "crawl")
    subprocess.run([sys.executable, "-m", "pipelines.cli", "ingest", "--input", str(work / "crawl"), "--output",
                    str(work / "ingest"), "--scheduler", "synchronous", "--quiet", "--profile", "cpu"], cwd=ROOT, check=True)
    parsed = work / "ingest" / "artifacts" / "parsed"
    peer = work / "peer"
    peer.mkdir()
    subprocess.run(f"git -C {ROOT} archive {args.peer} | tar -x -C {peer}", shell=True, check=True)
    runs: dict[str, list[float]] = {"peer": [], "this": []}
    for _ in range(args.turns):
        runs["peer"] += passes(peer, parsed, args.passes)
        runs["this"] += passes(ROOT, parsed, args.passes)
    out = {"pages": len(pages), "html_mb": round(pages["html"].str.len().sum() / 1e6, 2), "peer_commit": args.peer}
    for name, ts in runs.items():
        out[name] = {"median_cpu_s": round(statistics.median(ts), 3), "min_cpu_s": round(min(ts), 3),
                     "passes": [round(t, 3) for t in ts]}
    out["saved_cpu_s"] = round(out["peer"]["median_cpu_s"] - out["this"]["median_cpu_s"], 3)
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
