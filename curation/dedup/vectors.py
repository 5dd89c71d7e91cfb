"""The vectors SemDeDup works on: the k-means sample, the static model mixed in, raw bytes decoded.

>>> same, other = np.array([[1.0, 0.0], [1.0, 0.0]], np.float32), np.array([[1.0, 0.0], [0.0, 1.0]], np.float32)
>>> m = mix_static(same, other, 0.4)
>>> round(float(m[0] @ m[1]), 3)  # 0.6 * cos 1 + 0.4 * cos 0
0.6
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from typing import Any

import numpy as np

from curation.dedup.minhash import MinHashParams, signatures_from_hashes
from curation.dedup.shingle_batch import shingle_hashes
from curation.dedup.shingles import ShingleSpec


def in_sample(ids: Any, seed: int, fraction: float) -> np.ndarray:
    """Whether each document is in the k-means sample: a hash of (seed, id) below ``fraction``.

    Decided per document, so the sample (and the clusters) do not depend on how the corpus is
    partitioned; a per-partition random draw made 32 MB and 128 MB partitions disagree on ~0.2 %
    of the semantic duplicates.

    >>> in_sample(["a", "b", "c"], 1, 1.0).tolist(), int(in_sample([str(i) for i in range(10000)], 1, 0.25).sum()) // 100
    ([True, True, True], 25)
    """
    bound = min(int(fraction * 2**64), 2**64 - 1)
    return np.fromiter(
        (int.from_bytes(hashlib.blake2b(f"{seed}:{i}".encode(), digest_size=8).digest(), "little") <= bound for i in ids),
        dtype=bool, count=len(ids),
    )


def sample_order(ids: Any, seed: int) -> np.ndarray:
    """The order k-means sees its training sample in: by a seeded hash of each document's id (then
    the id), so the centroids do not depend on the order of the input files (faiss seeds its
    centroids by row index).

    >>> ids = ["a", "b", "c", "d"]
    >>> [ids[i] for i in sample_order(ids, 1)] == [ids[::-1][i] for i in sample_order(ids[::-1], 1)]
    True
    """
    ids = [str(i) for i in ids]
    keys = [hashlib.blake2b(f"{seed}:order:{i}".encode(), digest_size=8).digest() for i in ids]
    return np.array(sorted(range(len(ids)), key=lambda k: (keys[k], ids[k])), dtype=np.int64)


def mix_static(vecs: np.ndarray, static: np.ndarray, weight: float, langs: np.ndarray | None = None,
               static_languages: Sequence[str] = ()) -> np.ndarray:
    """Unit vectors whose dot products are ``(1 - w) · cos(vecs) + w · cos(static)``.

    The concatenation of the two unit vectors scaled by ``sqrt(1 - w)`` and ``sqrt(w)``. With
    ``langs`` (one per row) and ``static_languages``, the static model is mixed in only for those
    languages; the others keep ``vecs`` alone (``w = 0``: a static model that learned English
    words only finds nearly every Chinese page close to every other).

    >>> m = mix_static(np.eye(2, dtype=np.float32), np.eye(2, dtype=np.float32), 0.5,
    ...                np.array(["en", "zh"], dtype=object), ["en"])
    >>> (m[:, 2:] > 0).any(axis=1).tolist()  # zh: the transformer alone
    [True, False]
    """
    w = np.full((len(vecs), 1), weight, dtype=np.float64)
    if static_languages and langs is not None:
        w[~np.isin(np.asarray(langs, dtype=object), list(static_languages))] = 0.0
    return np.hstack([np.sqrt(1.0 - w) * vecs, np.sqrt(w) * static]).astype(np.float32)


def decode_vectors(blobs: list[bytes], dtype: Any) -> np.ndarray:
    """Rows of raw vector bytes → an (n, d) float32 array ((0, 1) for no rows).

    >>> decode_vectors([np.array([1, 2], np.float16).tobytes()], np.float16).tolist()
    [[1.0, 2.0]]
    """
    if not blobs:
        return np.zeros((0, 1), np.float32)
    return np.frombuffer(b"".join(blobs), dtype=dtype).reshape(len(blobs), -1).astype(np.float32)


#: Permutations of a character-bigram sketch: 512 bytes a page; standard error of a Jaccard
#: estimate at 0.6 is sqrt(0.6 · 0.4 / 128) = 0.043.
SKETCH_PERM = 128
_DIGITS = re.compile(r"\d+")
_SPACE = re.compile(r"\s+")


def bigram_sketch(text: str, num_perm: int = SKETCH_PERM, seed: int = 1) -> np.ndarray:
    """MinHash signature (``num_perm`` uint32) of the text's set of character bigrams: one row of
    :func:`bigram_sketches`.

    >>> a, b = bigram_sketch("价格 59 元，从杭州发货"), bigram_sketch("价格 89 元，从杭州发货")
    >>> float(sketch_jaccard(a, b))
    1.0
    >>> float(sketch_jaccard(a, bigram_sketch("完全不同的一句话"))) < 0.2
    True
    """
    return bigram_sketches([text], num_perm, seed)[0]


def bigram_sketches(texts: Sequence[str], num_perm: int = SKETCH_PERM, seed: int = 1) -> np.ndarray:
    """``(len(texts), num_perm)`` MinHash signatures (MinHash dedup's permutations:
    :func:`curation.dedup.minhash.signatures_from_hashes`, one call for all texts) of each text's set
    of character bigrams, digit runs masked to ``0`` and whitespace runs folded to one space
    (template pages differ in their numbers).

    Two signatures agree in a share of positions that estimates the Jaccard similarity of the two
    bigram sets (:func:`sketch_jaccard`). A Chinese word is mostly one or two characters, so a
    character bigram is the word-like unit of text without spaces.
    """
    grams, offsets = [], [0]
    for text in texts:
        t = _SPACE.sub(" ", _DIGITS.sub("0", text if isinstance(text, str) else "")).lower()
        codes = np.frombuffer(t.encode("utf-32-le"), dtype=np.uint32).astype(np.uint64)
        if len(codes) < 2:
            codes = np.concatenate([codes, np.zeros(2 - len(codes), np.uint64)])
        g = np.unique((codes[:-1] << np.uint64(21)) | codes[1:])
        grams.append((g * np.uint64(0x9E3779B97F4A7C15)) >> np.uint64(32))  # 32 well-mixed bits (wrapping multiply)
        offsets.append(offsets[-1] + len(g))
    hv = np.concatenate(grams) if grams else np.zeros(0, np.uint64)
    return signatures_from_hashes(hv, np.asarray(offsets, dtype=np.int64), MinHashParams(num_perm=num_perm, seed=seed))


def word_sketches(texts: Sequence[str], num_perm: int = SKETCH_PERM, seed: int = 1) -> np.ndarray:
    """``(len(texts), num_perm)`` MinHash signatures of each text's set of words (MinHash dedup's
    words: NFKC, lower-cased, runs of word characters; digit runs masked to ``0`` first, as
    :func:`bigram_sketches` does): the whole text, where the embedder saw its first window only.

    >>> a = word_sketches(["Price 59 EUR, ships from Porto", "price 1299 eur ships from porto", "Another page"])
    >>> [float(sketch_jaccard(a[0], b)) for b in a[1:]]
    [1.0, 0.0]
    """
    masked = [_DIGITS.sub("0", t) if isinstance(t, str) else "" for t in texts]
    h64, offsets = shingle_hashes(masked, ShingleSpec("word", 1))
    return signatures_from_hashes(h64 >> np.uint64(32), offsets, MinHashParams(num_perm=num_perm, seed=seed))


def sketch_jaccard(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Estimated Jaccard similarity of sketches ``a`` and ``b`` (rows broadcast: (n, p) with (n, p) → (n,))."""
    return (np.asarray(a) == np.asarray(b)).mean(axis=-1)
