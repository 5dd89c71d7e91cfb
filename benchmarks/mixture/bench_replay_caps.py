"""Copies per document over the pre-training phases, and planned against replayed tokens per phase,
of the mixture stage in an earlier revision's tree and in this one, one after the other.

    python benchmarks/mixture/bench_replay_caps.py --input RUN/75_forge_filter [--before HEAD] [--out DIR]

Each tree runs ``curate mixture`` on the same input with the default caps and with
``max_epochs={"*": 1.0}``; the table says how many documents each number of copies reaches.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parents[2]
PRETRAIN = ("pretrain_phase1", "pretrain_phase2")
RECIPES = {"default caps (4)": [], "max_epochs 1": ['max_epochs={"*": 1.0}']}


def outcome(out: Path) -> dict:
    """Copies per document over pre-training (histogram), planned and replayed tokens per phase."""
    shown: Counter = Counter()
    phases = {}
    for path in sorted((out / "manifests").glob("*.json")):
        m = json.loads(path.read_text())
        phases[m["phase"]] = (m["budget"]["planned_tokens"], m["budget"]["replay_tokens"])
        if m["phase"] in PRETRAIN:
            for g in m["groups"]:
                for s in g["shards"]:
                    t = pq.read_table(out / s["path"], columns=["doc_id", "copies"]).to_pandas()
                    shown.update({(g["name"], d): int(c) for d, c in zip(t["doc_id"], t["copies"], strict=True)})
    return {"copies": dict(sorted(Counter(shown.values()).items())), "phases": phases}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--input", required=True, help="a finished stage folder before the mixture (75_forge_filter)")
    ap.add_argument("--before", default="HEAD")
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "_work" / "mixture_caps"))
    args = ap.parse_args()
    out = Path(args.out)
    results: dict = {}
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(f"git -C {ROOT} archive {args.before} | tar -x -C {tmp}", shell=True, check=True)
        for tree, src in (("before", tmp), ("after", str(ROOT))):
            for name, extra in RECIPES.items():
                dest = out / f"{tree}-{len(results)}"
                subprocess.run([sys.executable, "-m", "pipelines.cli", "mixture", "--input", args.input, "--output", str(dest),
                                "--quiet", *extra], cwd=src, check=True, env={**os.environ, "PYTHONPATH": src})
                results[(tree, name)] = outcome(dest)
    for name in RECIPES:
        print(f"\n{name}")
        for tree in ("before", "after"):
            r = results[(tree, name)]
            runs = "; ".join(f"{p}: planned {a:,}, replayed {b:,}" for p, (a, b) in r["phases"].items() if p in PRETRAIN)
            print(f"  {tree}: documents by copies over pre-training {r['copies']}; {runs}")


if __name__ == "__main__":
    main()
