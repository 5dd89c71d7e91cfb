"""``summarise_counts`` (run by the driver after every stage while the workers wait) against the
function of an earlier commit (the peer, read from git), on a counts frame shaped like a 70 MB
run's (11 partitions, 3 sources, ~60 languages, 4 drop reasons).

    python benchmarks/recipe/bench_summarise.py            # against fc52715
"""

from __future__ import annotations

import subprocess
import sys
import time
import types
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from pipelines.counts import summarise_counts  # noqa: E402


def old_function(rev: str):
    # the function lives in pipelines/counts.py; older commits kept it in pipelines/io.py
    shown = [subprocess.run(["git", "show", f"{rev}:pipelines/{name}"], cwd=ROOT, capture_output=True, text=True) for name in ("counts.py", "io.py")]
    source = next(r.stdout for r in shown if r.returncode == 0)
    module = types.ModuleType("old_counts")
    exec(compile(source, "old_counts.py", "exec"), module.__dict__)  # noqa: S102 - this repository's own file
    return module.summarise_counts


def counts_frame(seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    for part in range(11):
        for source in ("web", "code", "math_science"):
            for lang in rng.choice([f"l{i}" for i in range(60)], 20, replace=False):
                for kind, reason in (("kept", None), ("dropped", rng.choice(["exact_duplicate", "near_duplicate", "low_quality", "code_low_tier"]))):
                    rows.append((kind, source, lang, reason, int(rng.integers(1, 100)), int(rng.integers(100, 100_000)), part))
    return pd.DataFrame(rows, columns=["kind", "source", "lang", "reason", "documents", "tokens", "part"])


def best_of(fn, counts: pd.DataFrame, repeat: int = 20) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        fn(counts)
        times.append(time.perf_counter() - started)
    return min(times)


def main() -> None:
    rev = sys.argv[1] if len(sys.argv) > 1 else "fc52715"
    counts = counts_frame()
    old = old_function(rev)
    assert old(counts) == summarise_counts(counts), "the two versions disagree"
    before, after = best_of(old, counts), best_of(summarise_counts, counts)
    print(f"{len(counts)} count rows: {rev} {before * 1000:.1f} ms, now {after * 1000:.1f} ms ({before / after:.1f}x faster); same result")


if __name__ == "__main__":
    main()
