"""MinHash's lookup tables and LSH optimum pinned to the direct computations they replace."""

from __future__ import annotations

import re

import numpy as np
import pytest

from curation import hashing
from curation.dedup import lsh
from curation.hashing import BASE, BASE_INV, U64


def reference_powers(n: int) -> tuple[np.ndarray, np.ndarray]:
    with np.errstate(over="ignore"):
        pw = np.cumprod(np.full(n, BASE, dtype=U64))
        inv = np.cumprod(np.full(n, BASE_INV, dtype=U64))
    return np.concatenate([[U64(1)], pw[:-1]]), np.concatenate([[U64(1)], inv[:-1]])


def reference_word_table() -> np.ndarray:
    codes = np.arange(0x110000, dtype=np.uint32)
    codes[0xD800:0xE000] = 32
    chars = codes.astype("<u4").tobytes().decode("utf-32-le")
    folded = np.frombuffer(re.sub(r"[\W_]", "\0", chars).encode("utf-32-le"), dtype=np.uint32)
    return folded != 0


@pytest.mark.parametrize("n", [1, 2, 3, 7, 64, 1000, 1 << 21])
def test_doubled_power_tables_equal_running_products(n: int) -> None:
    got = hashing._power_table.__wrapped__(n)
    for g, w in zip(got, reference_powers(n), strict=True):
        assert g.dtype == w.dtype and np.array_equal(g, w)


def test_word_and_alnum_tables_equal_per_character_definitions() -> None:
    assert np.array_equal(hashing.word_table.__wrapped__(), reference_word_table())
    alnum = np.array([chr(i).isalnum() for i in range(0x10000)], dtype=bool)
    alnum[0x0300:0x0370] = True
    assert np.array_equal(hashing.alnum_table.__wrapped__(), alnum)
    table = hashing.word_table()
    for ch in "aZ9é東🙂_ -\u0301\u3000":
        assert table[ord(ch)] == bool(re.fullmatch(r"[^\W_]", ch))


#: Effective LSH thresholds of the shipped settings (threshold - 0.25) and a spread around them.
THRESHOLDS = [0.55, 0.05, 0.1, 0.25, 0.3, 0.45, 0.5, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95, 0.123, 0.5678]


@pytest.mark.parametrize("num_perm", [8, 16, 64, 128, 256])
def test_lsh_optimum_is_datasketchs(num_perm: int) -> None:
    from datasketch.lsh import _optimal_param

    for threshold in THRESHOLDS:
        want = _optimal_param(threshold, num_perm, 0.5, 0.5)
        assert lsh.lsh_params(threshold, num_perm) == want, (threshold, num_perm)
        hits = lsh._optimal.cache_info().hits
        assert lsh.lsh_params(threshold, num_perm) == want
        assert lsh._optimal.cache_info().hits == hits + 1
