"""Small stats frames the MinHash sub-steps return per partition, folded into ``stats.json``.

A partition function returns rows ``(kind, key, value)``; the driver folds them:

>>> c = pd.concat([count_rows([("removed", "", 2), ("hist", "2", 1)]), count_rows([("removed", "", 3), ("hist", "2", 4)])])
>>> fold_counts(c[c["kind"] != "hist"]), histogram_rows(c)
({'removed': 5}, {'2': 5})
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from curation.dedup.shingle_batch import shingle_hashes
from curation.dedup.shingles import ShingleSpec

COUNTS_META = pd.DataFrame({"kind": pd.Series(dtype=object), "key": pd.Series(dtype=object), "value": pd.Series(dtype="int64")})


def count_rows(rows: list[tuple[str, Any, int]]) -> pd.DataFrame:
    """A counts frame (``kind``, ``key``, ``value``); key ``""`` means a plain total."""
    return pd.DataFrame({
        "kind": pd.Series([r[0] for r in rows], dtype=object),
        "key": pd.Series([str(r[1]) for r in rows], dtype=object),
        "value": pd.Series([int(r[2]) for r in rows], dtype="int64"),
    })


def fold_counts(counts: pd.DataFrame) -> dict[str, Any]:
    """``{kind: total}`` for rows without a key, ``{kind: {key: total}}`` for keyed rows."""
    out: dict[str, Any] = {}
    for (kind, key), value in counts.groupby(["kind", "key"], sort=True)["value"].sum().items():
        if key == "":
            out[kind] = int(value)
        else:
            out.setdefault(kind, {})[key] = int(value)
    return out


def size_histogram(sizes: np.ndarray) -> dict[str, int]:
    """Counts of sizes in power-of-two bins: ``{"2": n, "3-4": n, "5-8": n, …}``.

    >>> size_histogram(np.array([2, 2, 3, 9]))
    {'2': 2, '3-4': 1, '9-16': 1}
    """
    out: dict[str, int] = {}
    for s in np.asarray(sizes, dtype=np.int64):
        hi = 1 << max(int(s - 1).bit_length(), 1)
        lo = hi // 2 + 1
        key = str(hi) if lo == hi else f"{lo}-{hi}"
        out[key] = out.get(key, 0) + 1
    return _sorted_bins(out)


def histogram_rows(counts: pd.DataFrame) -> dict[str, int]:
    """Sum the ``hist`` rows of many partitions into one histogram."""
    hist = counts[counts["kind"] == "hist"].groupby("key")["value"].sum()
    return _sorted_bins({str(k): int(v) for k, v in hist.items()})


def exact_shingle_sets(docs: pd.DataFrame, rows: np.ndarray, spec_text: dict[str, str]) -> list[bytes]:
    """Sorted unique 64-bit shingle hashes (as bytes) of ``docs`` rows, per-source spec ("" = default).

    A row repeated in ``rows`` (a document in many candidate pairs) is hashed once."""
    specs = {k: ShingleSpec.parse(v) for k, v in spec_text.items()}
    rows, back = np.unique(np.asarray(rows, dtype=np.int64), return_inverse=True)
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
    return [out[j] for j in back.ravel().tolist()]


def _sorted_bins(bins: dict[str, int]) -> dict[str, int]:
    return dict(sorted(bins.items(), key=lambda kv: int(kv[0].split("-")[0])))
