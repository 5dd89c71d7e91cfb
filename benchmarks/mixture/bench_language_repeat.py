"""What ``language_repeat`` does to the pre-training phases, in an earlier revision's tree and in this one.

    python benchmarks/mixture/bench_language_repeat.py --input RUN/75_forge_filter [--before HEAD] [--lang zh] [--factor 2.0]

Each tree runs ``curate mixture`` on the same input with ``language_repeat={LANG: FACTOR}``; the
figures are, per pre-training phase, the language's share of the planned tokens (the manifest's
``languages``), its share of the replayed tokens (Σ copies × tokens of the shards), each group's
planned against replayed tokens, and the replayed epochs of the language and of the others per group.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parents[2]
PRETRAIN = ("pretrain_phase1", "pretrain_phase2")


def outcome(out: Path, lang: str) -> list[str]:
    lines = []
    for phase in PRETRAIN:
        m = json.loads((out / "manifests" / f"{phase}.json").read_text())
        shards = [pq.read_table(out / s["path"], columns=["lang", "copies", "n_tokens"]).to_pandas().assign(group=g["name"])
                  for g in m["groups"] for s in g["shards"]]
        df = pd.concat(shards, ignore_index=True)
        df["replay"], df["is_lang"] = df["copies"] * df["n_tokens"], df["lang"] == lang
        share = df.loc[df["is_lang"], "replay"].sum() / df["replay"].sum()
        lines.append(f"{phase}: {lang} share planned {m['languages'].get(lang, {}).get('share', 0.0):.4f}, replayed {share:.4f}; "
                     f"budget planned {m['budget']['planned_tokens']:,}, replayed {m['budget']['replay_tokens']:,}")
        for g in m["groups"]:
            rows = df[df["group"] == g["name"]]
            sums = rows.groupby("is_lang")[["replay", "n_tokens"]].sum()
            ep = (sums["replay"] / sums["n_tokens"]).to_dict()
            lines.append(f"  {g['name']}: planned {g['planned_tokens']:,}, replayed {g['replay_tokens']:,}; epochs {lang} "
                         f"{ep.get(True, float('nan')):.3f}, others {ep.get(False, float('nan')):.3f}")
    return lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--input", required=True, help="a finished stage folder before the mixture (75_forge_filter)")
    ap.add_argument("--before", default="HEAD")
    ap.add_argument("--lang", default="zh")
    ap.add_argument("--factor", type=float, default=2.0)
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "_work" / "language_repeat"))
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(f"git -C {ROOT} archive {args.before} | tar -x -C {tmp}", shell=True, check=True)
        for tree, src in (("before", tmp), ("after", str(ROOT))):
            dest = Path(args.out) / tree
            subprocess.run([sys.executable, "-m", "pipelines.cli", "mixture", "--input", args.input, "--output", str(dest), "--quiet",
                            "--profile", "cpu", f"language_repeat={{{args.lang}: {args.factor}}}"], cwd=src, check=True,
                           env={**os.environ, "PYTHONPATH": src}, capture_output=True)
            print(f"{tree}:")
            print("\n".join(outcome(dest, args.lang)))


if __name__ == "__main__":
    main()
