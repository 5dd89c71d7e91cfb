"""Removals against the keeper: MinHash of two checkouts on the same exact-dedup outputs, in one run.

    python benchmarks/minhash_dedup/bench_keepers.py --base /tmp/base --input mix=runs/mix/10_exact_dedup [--input NAME=DIR ...]

``--base`` is a checkout of the code to compare with (``git archive REV | tar -x -C /tmp/base``);
this checkout is the other side. For each input (an ``exact_dedup`` stage folder) the
``minhash_dedup`` stage runs synchronously with the recipe defaults and ``sources=[]`` (every
source) on both sides, and on this side also with the shipped ``sources`` list. The script prints
per row the documents removed per source, how many of them have an exact Jaccard (the stage's
``script:5`` shingle sets) below the threshold with the document the ledger names, the removed set
against the base's, and the CPU seconds of the stage process (children included).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from curation.dedup.lsh import exact_jaccard  # noqa: E402
from curation.dedup.minhash_stats import exact_shingle_sets  # noqa: E402


def run_stage(checkout: Path, inp: Path, out: Path, overrides: list[str]) -> float:
    """CPU seconds of one ``minhash-dedup`` run of ``checkout`` (synchronous, children included)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    cmd = [sys.executable, "-m", "pipelines.cli", "minhash-dedup", "--config", str(checkout / "pipelines/configs/glm45.yaml"),
           "--input", str(inp), "--output", str(out), "--scheduler", "synchronous", "--quiet", *overrides]
    subprocess.run(cmd, cwd=checkout, env={**os.environ, "PYTHONPATH": str(checkout)}, check=True, stdout=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def below_threshold(docs: pd.DataFrame, ledger: pd.DataFrame, threshold: float) -> int:
    """Removals whose exact Jaccard with the document their ledger row names is below ``threshold``."""
    if ledger.empty:
        return 0
    row = {d: i for i, d in enumerate(docs["doc_id"])}
    keeper = [json.loads(d)["duplicate_of"] for d in ledger["detail"]]
    rows = np.array([row[d] for d in ledger["doc_id"]] + [row[k] for k in keeper], dtype=np.int64)
    sets = exact_shingle_sets(docs, rows, {"": "script:5"})
    n = len(ledger)
    return sum(exact_jaccard(np.frombuffer(sets[i], np.uint64), np.frombuffer(sets[n + i], np.uint64)) < threshold for i in range(n))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--base", type=Path, required=True)
    ap.add_argument("--input", action="append", required=True, help="NAME=EXACT_DEDUP_STAGE_DIR")
    args = ap.parse_args()
    shipped = f"sources=[{','.join(_shipped_sources())}]"
    with tempfile.TemporaryDirectory() as tmp:
        for spec in args.input:
            name, _, path = spec.partition("=")
            docs = pd.read_parquet(Path(path) / "docs", columns=["doc_id", "text", "source"])
            rows = [("base, every source", args.base, ["sources=[]"]), ("this, every source", REPO, ["sources=[]"]),
                    (f"this, {shipped}", REPO, [shipped])]
            base_removed: set[str] = set()
            print(f"\n## {name}: {len(docs)} documents")
            for i, (label, checkout, overrides) in enumerate(rows):
                out = Path(tmp) / f"{name}-{i}"
                cpu = run_stage(checkout, Path(path), out, overrides)
                ledger = pd.read_parquet(out / "ledger")
                removed = set(ledger["doc_id"])
                base_removed = removed if i == 0 else base_removed
                by_source = ledger["source"].value_counts().to_dict()
                print(f"{label}: removed {len(ledger)} {by_source}; below 0.8 to the named keeper "
                      f"{below_threshold(docs, ledger, 0.8)}; vs base: -{len(base_removed - removed)} +{len(removed - base_removed)}; "
                      f"CPU {cpu:.1f} s")


def _shipped_sources() -> list[str]:
    import yaml

    recipe = yaml.safe_load((REPO / "pipelines/configs/glm45.yaml").read_text())
    return list(recipe["stages"]["minhash_dedup"]["sources"])


if __name__ == "__main__":
    main()
