"""The keepers' step on one template cluster, with and without ``MAX_KEEPERS``: seconds and keepers.

    python benchmarks/minhash_dedup/bench_keeper_cap.py

A cluster of n members that share a 300-hash template and each add 15–60 hashes of their own (a
shop's product pages): every pair estimates near 1 from the signatures (all compared exactly) and
sits around 0.8 exactly, so about 4 in 10 members become keepers when nothing bounds them, and each
keeper is one comparison with every member left. CPU seconds of this process.
"""

from __future__ import annotations

import time

import numpy as np

from curation.dedup import lsh


def cluster(n: int, seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    base = rng.integers(0, 2**63, 300, dtype=np.uint64)
    return [np.unique(np.r_[base, rng.integers(0, 2**63, rng.integers(15, 60), dtype=np.uint64)]) for _ in range(n)]


def main() -> None:
    cap = lsh.MAX_KEEPERS
    for n in (1000, 2000, 4000):
        sets = cluster(n)
        sig = np.ones((n, 128), dtype=np.uint32)
        for name, limit in (("no cap", n), (f"MAX_KEEPERS {cap}", cap)):
            lsh.MAX_KEEPERS = limit
            start = time.process_time()
            keeper, _ = lsh.star_keepers(np.zeros(n), np.arange(n), sig, sets, 0.8)
            seconds = time.process_time() - start
            removed = int((keeper != np.arange(n)).sum())
            print(f"{n:5d} members  {name:15}  {seconds:6.2f} CPU-s  removed {removed:5d}  kept {n - removed:5d}")
    lsh.MAX_KEEPERS = cap


if __name__ == "__main__":
    main()
