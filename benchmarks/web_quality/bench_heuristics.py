"""Speed of the heuristic signals (:func:`classifiers.heuristics_signals.signal_matrix`) on real
pages: this checkout against an earlier commit, in the same run, on the same pages.

    python benchmarks/web_quality/bench_heuristics.py [--before 4fd2ff6] [--docs 1500] [--repeat 3]

Pages: the first ``--docs`` non-empty ``text`` values of ``../shared/data/web/web_docs.parquet``
(``--data`` elsewhere). The earlier commit is checked out to a temporary folder with ``git worktree
add`` (removed afterwards); each side runs in its own process (one thread, best of 2 passes), the
sides alternating ``--repeat`` times; the best time of each side counts, because the machine is
shared. Prints docs/s and MB/s (UTF-8) per side, the speed-up, and whether the two matrices are
identical (every float equal, NaNs in the same places).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(var, "1")

import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(Path(__file__).resolve().parent))
import data  # noqa: E402


def pages(path: Path, n: int) -> list[str]:
    import pandas as pd

    texts = pd.read_parquet(path, columns=["text"])["text"].dropna()
    return [t for t in texts if t.strip()][:n]


def measure(args: argparse.Namespace) -> None:
    """Child process: time signal_matrix of the checkout on sys.path[0]; save the matrix."""
    from classifiers.heuristics_signals import signal_matrix

    texts = pages(args.data, args.docs)
    best = float("inf")
    for _ in range(args.repeat):
        t0 = time.perf_counter()
        x = signal_matrix(texts)
        best = min(best, time.perf_counter() - t0)  # the first round builds lazy tables: best of 2 inside
    np.save(args.out, x)
    mb = sum(len(t.encode("utf-8")) for t in texts) / 1e6
    print(f"{len(texts)} {mb} {best}")


def run_side(root: Path, args: argparse.Namespace, out: Path) -> tuple[int, float, float]:
    env = dict(os.environ, PYTHONPATH=str(root))
    cmd = [sys.executable, str(Path(__file__).resolve()), "--measure", "--data", str(args.data),
           "--docs", str(args.docs), "--repeat", "2", "--out", str(out)]
    res = subprocess.run(cmd, env=env, cwd=root, check=True, capture_output=True, text=True)
    n, mb, secs = res.stdout.split()[-3:]
    return int(n), float(mb), float(secs)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", default="4fd2ff6", help="commit to compare with")
    ap.add_argument("--data", type=Path, default=data.DATA)
    ap.add_argument("--docs", type=int, default=1500)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--measure", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.measure:
        measure(args)
        return
    with tempfile.TemporaryDirectory() as tmp:
        before = Path(tmp) / "before"
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "-q", str(before), args.before],
                       check=True)
        try:
            best: dict[str, float] = {}
            for _ in range(args.repeat):  # alternate the sides: the machine's load changes over time
                for name, root in (("before", before), ("after", ROOT)):
                    n, mb, secs = run_side(root, args, Path(tmp) / f"{name}.npy")
                    best[name] = min(best.get(name, secs), secs)
            for name in ("before", "after"):
                label = args.before if name == "before" else "this checkout"
                print(f"{name:6s} ({label}): {n} docs, {mb:.2f} MB in {best[name]:.2f} s = "
                      f"{n / best[name]:,.0f} docs/s, {mb / best[name]:.2f} MB/s")
            xb, xa = np.load(Path(tmp) / "before.npy"), np.load(Path(tmp) / "after.npy")
        finally:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(before)], check=True)
    print(f"speed-up: {best['before'] / best['after']:.2f}x; identical matrices: {np.array_equal(xb, xa, equal_nan=True)}")


if __name__ == "__main__":
    main()
