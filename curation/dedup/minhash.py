"""MinHash signatures compatible with datasketch, computed with numpy over whole partitions.

The permutations are datasketch's: ``np.random.RandomState(seed)`` drawn exactly as
``datasketch.MinHash(num_perm, seed, scheme=...)`` draws them, so a signature loads into
``datasketch.LeanMinHash(seed=seed, hashvalues=sig, scheme=scheme)`` and ``MinHashLSH``.

- ``affine32`` (datasketch >= 2.0 default): the 32-bit shingle hash is pre-mixed with the
  MurmurHash3 finaliser, then ``a * h + b mod 2^32``;
- ``legacy`` (datasketch < 2.0): ``(a * h + b) mod (2^61 - 1)``, truncated to 32 bits, with
  64-bit wrap-around of the product exactly as datasketch computes it.

>>> from datasketch import MinHash
>>> sig = signatures(["the quick brown fox jumps over"], MinHashParams(num_perm=16, hash="sha1"))
>>> m = MinHash(num_perm=16)
>>> for s in shingles("the quick brown fox jumps over", ShingleSpec()):
...     m.update(s.encode("utf-8"))
>>> bool((m.hashvalues == sig[0]).all())
True
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Sequence

import numpy as np

from curation.dedup.shingle_batch import shingle_hashes, text_batches
from curation.dedup.shingles import ShingleSpec, sha1_hashes, shingles

__all__ = ["HASHES", "SCHEMES", "MinHashParams", "permutations", "shingles", "signatures", "signatures_from_hashes"]

SCHEMES = ("affine32", "legacy")
HASHES = ("fast", "sha1")
_MERSENNE = np.uint64((1 << 61) - 1)
_MAX_HASH = np.uint64((1 << 32) - 1)
#: Shingles processed per block of the permutation loop (keeps the block in cache).
_BLOCK = 1 << 18


@dataclasses.dataclass(frozen=True)
class MinHashParams:
    """Everything that determines a signature (the cache key of the signature step)."""

    num_perm: int = 128
    seed: int = 1
    scheme: str = "affine32"
    hash: str = "fast"
    shingle: ShingleSpec = ShingleSpec()

    def __post_init__(self) -> None:
        if self.scheme not in SCHEMES:
            raise ValueError(f"scheme must be one of {SCHEMES}, not {self.scheme!r}")
        if self.hash not in HASHES:
            raise ValueError(f"hash must be one of {HASHES}, not {self.hash!r}")
        if self.num_perm < 1:
            raise ValueError("num_perm must be positive")


@functools.lru_cache(maxsize=8)
def permutations(num_perm: int, seed: int, scheme: str = "affine32") -> tuple[np.ndarray, np.ndarray]:
    """datasketch's permutation parameters ``(a, b)`` for ``MinHash(num_perm, seed, scheme=scheme)``.

    >>> from datasketch import MinHash
    >>> a, b = permutations(8, 3)
    >>> bool((MinHash(8, seed=3).permutations == np.array([a, b])).all())
    True
    """
    gen = np.random.RandomState(seed)
    if scheme == "legacy":
        ab = np.array(
            [(gen.randint(1, _MERSENNE, dtype=np.uint64), gen.randint(0, _MERSENNE, dtype=np.uint64)) for _ in range(num_perm)],
            dtype=np.uint64,
        ).T
        return ab[0].copy(), ab[1].copy()
    a = gen.randint(0, 1 << 31, num_perm, dtype=np.uint32) * np.uint32(2) + np.uint32(1)
    b = gen.randint(0, 1 << 32, num_perm, dtype=np.uint32)
    return a, b


def signatures(texts: Sequence[str], params: MinHashParams) -> np.ndarray:
    """``(len(texts), num_perm)`` uint32 signatures of the shingles of each text."""
    out = np.empty((len(texts), params.num_perm), dtype=np.uint32)
    # Batch by characters so memory stays bounded whatever the partition size.
    for start, stop in text_batches(texts):
        chunk = texts[start:stop]
        if params.hash == "sha1":
            hv, offsets = sha1_hashes(chunk, params.shingle)
        else:
            h64, offsets = shingle_hashes(chunk, params.shingle)
            hv = h64 >> np.uint64(32)
        out[start:stop] = signatures_from_hashes(hv, offsets, params)
    return out


def signatures_from_hashes(hv: np.ndarray, offsets: np.ndarray, params: MinHashParams) -> np.ndarray:
    """Signatures from 32-bit shingle hashes (as uint64) in CSR layout (``offsets``).

    Every document must have at least one shingle. One pass per permutation over blocks of
    shingles: ``a * h + b`` then a segmented minimum (``np.minimum.reduceat``).
    """
    n_docs = len(offsets) - 1
    out = np.empty((n_docs, params.num_perm), dtype=np.uint32)
    if n_docs == 0:
        return out
    if (np.diff(offsets) < 1).any():
        raise ValueError("every document needs at least one shingle")
    a, b = permutations(params.num_perm, params.seed, params.scheme)
    if params.scheme == "affine32":
        hv = _fmix32(hv.astype(np.uint32))
    # Blocks end on document boundaries so each document is reduced in one block.
    bounds = _blocks(offsets)
    for first_doc, last_doc in bounds:
        lo, hi = int(offsets[first_doc]), int(offsets[last_doc])
        block = hv[lo:hi]
        seg = offsets[first_doc:last_doc] - lo
        if params.scheme == "affine32":
            _permute_affine32(block, seg, a, b, out[first_doc:last_doc])
        else:
            _permute_legacy(block, seg, a, b, out[first_doc:last_doc])
    return out


def estimate_jaccard(sig_a: np.ndarray, sig_b: np.ndarray) -> np.ndarray:
    """Row-wise fraction of equal signature values (datasketch's ``MinHash.jaccard``).

    >>> estimate_jaccard(np.array([[1, 2], [3, 4]]), np.array([[1, 0], [3, 4]])).tolist()
    [0.5, 1.0]
    """
    return (np.asarray(sig_a) == np.asarray(sig_b)).mean(axis=1)


def _blocks(offsets: np.ndarray) -> list[tuple[int, int]]:
    out, first = [], 0
    n_docs = len(offsets) - 1
    while first < n_docs:
        last = int(np.searchsorted(offsets, offsets[first] + _BLOCK, side="right")) - 1
        last = min(max(last, first + 1), n_docs)
        out.append((first, last))
        first = last
    return out


def _permute_affine32(block: np.ndarray, seg: np.ndarray, a: np.ndarray, b: np.ndarray, out: np.ndarray) -> None:
    tmp = np.empty(len(block), dtype=np.uint32)
    with np.errstate(over="ignore"):
        for j in range(len(a)):
            np.multiply(block, a[j], out=tmp)
            np.add(tmp, b[j], out=tmp)
            out[:, j] = np.minimum.reduceat(tmp, seg)


def _permute_legacy(block: np.ndarray, seg: np.ndarray, a: np.ndarray, b: np.ndarray, out: np.ndarray) -> None:
    tmp = np.empty(len(block), dtype=np.uint64)
    h = block.astype(np.uint64)
    with np.errstate(over="ignore"):
        for j in range(len(a)):
            np.multiply(h, a[j], out=tmp)
            np.add(tmp, b[j], out=tmp)
            np.remainder(tmp, _MERSENNE, out=tmp)
            np.bitwise_and(tmp, _MAX_HASH, out=tmp)
            out[:, j] = np.minimum.reduceat(tmp, seg)


def _fmix32(h: np.ndarray) -> np.ndarray:
    """MurmurHash3's 32-bit finaliser, datasketch's pre-mix for the affine schemes."""
    with np.errstate(over="ignore"):
        h = h ^ (h >> np.uint32(16))
        h = h * np.uint32(0x85EBCA6B)
        h = h ^ (h >> np.uint32(13))
        h = h * np.uint32(0xC2B2AE35)
        return h ^ (h >> np.uint32(16))
