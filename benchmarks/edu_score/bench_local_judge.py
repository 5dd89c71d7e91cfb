"""The local CPU judge (SmolLM2-135M) against an earlier version of itself, same process, same texts.

    python benchmarks/edu_score/bench_local_judge.py [--peer a77736c~1] [--docs 24] [--repeat 2]

The texts are ``--docs`` documents of ``sample_data/`` (web and math/science), picked at evenly
spaced length quantiles, as the stage's stratified sample spreads over lengths. Both versions run
with one torch thread (what a Dask worker gets), alternated ``--repeat`` times; the peer's module
is ``classifiers/annotation/local.py`` read from git at ``--peer``. Prints seconds per version
(best and median), prompt tokens, and the largest score difference between the two.
"""

from __future__ import annotations

import argparse
import gzip
import importlib.util
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))


def sample_texts(n: int) -> list[str]:
    texts = []
    for f in sorted((ROOT / "sample_data").rglob("*.jsonl*")):
        if not any(k in f.parts for k in ("web", "math_science")):
            continue
        data = gzip.decompress(f.read_bytes()) if f.name.endswith(".gz") else f.read_bytes()
        texts += [json.loads(line).get("text") or "" for line in data.splitlines() if line.strip()]
    texts = sorted((t for t in texts if t.strip()), key=len)
    return [texts[round(i * (len(texts) - 1) / max(n - 1, 1))] for i in range(n)]


def peer_module(commit: str):
    source = subprocess.run(["git", "show", f"{commit}:classifiers/annotation/local.py"], cwd=ROOT,
                            capture_output=True, text=True, check=True).stdout
    path = Path(tempfile.mkdtemp()) / "local_peer.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location("local_peer", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--peer", default="a77736c~1", help="the git commit whose local judge to compare with")
    ap.add_argument("--docs", type=int, default=24)
    ap.add_argument("--repeat", type=int, default=2)
    args = ap.parse_args()

    import numpy as np

    from classifiers.annotation import local
    from classifiers.rubrics import get_rubric

    rubric = get_rubric("edu")
    texts = sample_texts(args.docs)
    peer = peer_module(args.peer)
    local.load_model(str(local.default_model_path()))
    versions = {"this tree": local.LocalAnnotator(batch_size=8, threads=1),
                f"peer {args.peer}": peer.LocalAnnotator(batch_size=8, threads=1)}
    seconds: dict[str, list[float]] = {k: [] for k in versions}
    scores, tokens = {}, {}
    for _ in range(args.repeat):
        for name, ann in versions.items():
            started = time.time()
            res = ann.annotate(texts, rubric)
            seconds[name].append(time.time() - started)
            scores[name], tokens[name] = res.scores, res.stats.tokens_in
    a, b = scores.values()
    print(json.dumps({
        "docs": len(texts), "repeat": args.repeat,
        "seconds": {k: {"best": round(min(v), 1), "median": round(statistics.median(v), 1)} for k, v in seconds.items()},
        "prompt_tokens": tokens,
        "max_score_difference": float(np.nanmax(np.abs(a - b))),
    }, indent=1))


if __name__ == "__main__":
    main()
