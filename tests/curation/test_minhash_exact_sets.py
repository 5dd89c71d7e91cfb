"""exact_shingle_sets hashes each repeated row once: pinned to hashing every row (the old loop)."""

from __future__ import annotations

import random

import numpy as np
import pandas as pd

from curation.dedup.minhash_stats import exact_shingle_sets
from curation.dedup.shingle_batch import shingle_hashes
from curation.dedup.shingles import ShingleSpec


def reference_sets(docs: pd.DataFrame, rows: np.ndarray, spec_text: dict[str, str]) -> list[bytes]:
    specs = {k: ShingleSpec.parse(v) for k, v in spec_text.items()}
    rows = np.asarray(rows, dtype=np.int64)
    texts = docs["text"].astype(object).fillna("").to_numpy()[rows]
    sources = docs["source"].astype(object).fillna("").to_numpy()[rows]
    out: list[bytes] = [b""] * len(rows)
    for spec in set(specs.values()):
        idx = [i for i, s in enumerate(sources) if specs.get(s, specs[""]) == spec]
        if not idx:
            continue
        h, off = shingle_hashes(list(texts[idx]), spec)
        for k, i in enumerate(idx):
            out[i] = np.unique(h[off[k] : off[k + 1]]).tobytes()
    return out


def test_exact_shingle_sets_equal_reference() -> None:
    rng = random.Random(5)
    words = ["alpha", "Beta", "γάμμα", "索引", "x", "12", "a-b", "", "\n"]
    texts = [" ".join(rng.choice(words) for _ in range(rng.choice([0, 1, 3, 8, 60, 400]))) for _ in range(80)]
    texts[3] = None
    docs = pd.DataFrame({"text": texts, "source": [rng.choice(["web", "code", None]) for _ in texts]})
    for specs in ({"": "script:5"}, {"": "word:3", "code": "char:5"}, {"": "script:5", "web": "word:1"}):
        for rows in ([], [4], [7, 7, 7], [rng.randrange(80) for _ in range(300)], list(range(80))[::-1]):
            got = exact_shingle_sets(docs, np.array(rows, dtype=np.int64), specs)
            assert got == reference_sets(docs, np.array(rows, dtype=np.int64), specs)
