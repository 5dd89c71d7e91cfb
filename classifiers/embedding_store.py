"""Embeddings on disk: Parquet parts of ``doc_id`` + a fixed-size ``embedding`` list, and a JSON card.

>>> import tempfile
>>> d = Path(tempfile.mkdtemp())
>>> write_embedding_part(d / "part-00000.parquet", ["a", "b"], np.eye(2, 3, dtype=np.float32))
>>> write_card(d, {"model": "demo", "dim": 3})
>>> ids, vecs = load_embeddings(d)
>>> ids.tolist(), vecs.shape, vecs.dtype.name
(['a', 'b'], (2, 3), 'float32')

The layout (``artifacts/embeddings/`` of the semdedup stage) is one ``part-NNNNN.parquet`` per
input partition plus ``embeddings.json`` (model, dimension, storage dtype, text preparation), so a
later stage can embed the documents missing from it with the same settings:
``get_embedder(**embedding_card(folder)["embedder"])``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from curation.files import atomic_path, part_name, read_parquet

CARD = "embeddings.json"
STORE_DTYPES = ("float16", "float32")


def write_embedding_part(path: Path, doc_ids: Sequence[str], vectors: np.ndarray, dtype: str = "float32") -> None:
    """Write ``doc_id`` + ``embedding`` (fixed-size list of ``dtype``) atomically to ``path``."""
    if dtype not in STORE_DTYPES:
        raise ValueError(f"store dtype must be one of {STORE_DTYPES}, not {dtype!r}")
    vectors = np.asarray(vectors)
    if vectors.ndim != 2 or vectors.shape[0] != len(doc_ids) or vectors.shape[1] < 1:
        raise ValueError(f"expected ({len(doc_ids)}, dim) vectors, got shape {vectors.shape}")
    flat = pa.array(np.ascontiguousarray(vectors, dtype=dtype).ravel())
    table = pa.table({
        "doc_id": pa.array([str(d) for d in doc_ids], type=pa.string()),
        "embedding": pa.FixedSizeListArray.from_arrays(flat, vectors.shape[1]),
    })
    with atomic_path(Path(path)) as tmp:
        pq.write_table(table, tmp, compression="zstd")


def read_embedding_part(path: Path) -> tuple[np.ndarray, np.ndarray]:
    """``(doc_ids, vectors)`` of one part; vectors float32, re-normalised (float16 storage rounds)."""
    table = read_parquet(path)
    ids = np.asarray(table.column("doc_id").to_pylist(), dtype=object)
    col = table.column("embedding").combine_chunks()
    if len(ids) == 0:
        return ids, np.zeros((0, col.type.list_size), dtype=np.float32)
    vecs = np.asarray(col.values.to_numpy(zero_copy_only=False), dtype=np.float32).reshape(len(ids), col.type.list_size)
    norms = np.linalg.norm(vecs, axis=1, keepdims=True)
    return ids, np.divide(vecs, norms, out=np.zeros_like(vecs), where=norms > 0)


def part_path(folder: Path, number: int) -> Path:
    """The file of input partition ``number`` in an embeddings folder (``part-NNNNN.parquet``)."""
    return Path(folder) / part_name(number)


def part_files(folder: Path) -> list[Path]:
    """The ``part-*.parquet`` files of an embeddings folder, in name order."""
    return sorted(Path(folder).glob("part-*.parquet"))


def load_embeddings(folder: Path) -> tuple[np.ndarray, np.ndarray]:
    """All ``(doc_ids, vectors)`` of an embeddings folder: ids as an object array of str, vectors
    ``(n, d)`` float32, L2-normalised. For large runs read part by part with :func:`read_embedding_part`.
    """
    files = part_files(folder)
    if not files:
        raise FileNotFoundError(f"{folder} has no part-*.parquet embedding files")
    parts = [read_embedding_part(f) for f in files]
    dims = {v.shape[1] for _, v in parts if len(v)}
    if len(dims) > 1:
        raise ValueError(f"{folder} mixes embedding dimensions {sorted(dims)}")
    dim = dims.pop() if dims else parts[0][1].shape[1]
    ids = np.concatenate([i for i, _ in parts]) if parts else np.array([], dtype=object)
    vecs = np.concatenate([v.reshape(-1, dim) for _, v in parts]) if parts else np.zeros((0, dim), np.float32)
    return ids, vecs


def embedded_ids(folder: Path) -> np.ndarray:
    """The ``doc_id`` of every vector in an embeddings folder (reads only that column)."""
    ids = [pq.read_table(f, columns=["doc_id"]).column("doc_id").to_pylist() for f in part_files(folder)]
    return np.asarray([i for part in ids for i in part], dtype=object)


def write_card(folder: Path, card: dict[str, Any]) -> None:
    """Write the folder's ``embeddings.json`` (sorted keys)."""
    path = Path(folder) / CARD
    path.write_text(json.dumps(card, indent=2, sort_keys=True) + "\n")


def embedding_card(folder: Path) -> dict[str, Any]:
    """The ``embeddings.json`` of an embeddings folder (empty dict if absent)."""
    path = Path(folder) / CARD
    return json.loads(path.read_text()) if path.exists() else {}
