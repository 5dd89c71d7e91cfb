"""The sample run's edu signal under each scorer: bands of edu-scored tokens per language, and phase 2's web_edu.

    python benchmarks/edu_score/bench_profile.py --work /tmp/edu-profile

Runs README command 1 (``curate run glm45.yaml --input sample_data``, ``--profile cpu``) three times,
changing only ``edu_score.scorer``: ``fast`` (the profile's: classifiers/models/edu_fast), the model
folder of the previous fast path (the default's hashed n-gram member alone,
classifiers/models/edu_default/hashed) and ``default`` (the default settings' scorer with transformer
vectors; it embeds what SemDeDup's static embedder did not store). Reported per run: the share of
edu-scored tokens in each band (low < 2 ≤ medium < 3 ≤ high), per language, and the tokens of
phase 2's ``web_edu`` groups.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[2]
SCORERS = {"fast (edu_fast)": "fast", "previous fast (edu_default/hashed)": str(ROOT / "classifiers/models/edu_default/hashed"),
           "default (transformer + n-grams)": "default"}


def run(out: Path, scorer: str) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    cmd = [sys.executable, "-m", "pipelines.cli", "run", "pipelines/configs/glm45.yaml", "--input", "sample_data", "--output", str(out),
           "--quiet", "--workers", "auto", "--profile", "cpu", f"edu_score.scorer={scorer}"]
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(proc.stderr[-3000:])


def figures(out: Path) -> dict:
    docs = pd.concat([pd.read_parquet(f, columns=["lang", "n_tokens", "edu_band", "edu_score"])
                      for f in sorted((out / "70_edu_score" / "docs").glob("part-*.parquet"))])
    docs = docs[docs["edu_score"].notna()]
    res = {}
    for lang, g in [("all", docs), *((k, g) for k, g in docs.groupby("lang") if k in ("en", "zh"))]:
        tokens = g.groupby("edu_band")["n_tokens"].sum()
        res[lang] = {"docs": len(g), **{b: round(float(tokens.get(b, 0) / max(tokens.sum(), 1)), 3) for b in ("low", "medium", "high")}}
    web_edu = sum(int(pd.read_parquet(f, columns=["n_tokens"])["n_tokens"].sum())
                  for f in (out / "80_mixture" / "shards" / "pretrain_phase2" / "web_edu").glob("*/part-*.parquet"))
    return {"token_bands": res, "phase2_web_edu_tokens_distinct": web_edu}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--work", type=Path, required=True)
    args = ap.parse_args()
    for name, scorer in SCORERS.items():
        out = args.work / name.split()[0]
        run(out, scorer)
        print(json.dumps({"scorer": name, **figures(out)}), flush=True)


if __name__ == "__main__":
    main()
