"""Megatron indexed datasets (``.bin``/``.idx``), the format megatron-core's ``IndexedDataset`` reads.

``prefix.bin`` holds the token ids of every sequence back to back; ``prefix.idx`` holds the header
``MMIDIDX\\0\\0``, version 1, the dtype code, the sequence and document counts, each sequence's
length (int32) and byte offset (int64), and the document boundaries (int64; one sequence per
document here, so ``0, 1, …, n``). The writer streams: ``.bin`` is appended to, ``.idx`` is written
on close. megatron-core is not needed to write; its reader is what the tests load the files with.

>>> import tempfile, pathlib
>>> prefix = pathlib.Path(tempfile.mkdtemp()) / "part-00000"
>>> with IndexedWriter(prefix, vocab_size=151_669) as w:
...     w.add(np.array([5, 6, 151_643])); w.add(np.array([7, 151_643]))
>>> read_index(prefix)["lengths"].tolist(), read_index(prefix)["dtype"]
([3, 2], 'int32')
"""

from __future__ import annotations

import struct
from pathlib import Path
from types import TracebackType
from typing import Any

import numpy as np

HEADER = b"MMIDIDX\x00\x00"
VERSION = 1
#: megatron-core's ``DType`` codes.
DTYPE_CODES = {np.dtype(np.uint8): 1, np.dtype(np.int8): 2, np.dtype(np.int16): 3, np.dtype(np.int32): 4,
               np.dtype(np.int64): 5, np.dtype(np.float64): 6, np.dtype(np.float32): 7, np.dtype(np.uint16): 8}


def token_dtype(vocab_size: int) -> np.dtype:
    """uint16 below 65,500 ids (as megatron-core's ``optimal_dtype``), int32 above."""
    return np.dtype(np.uint16) if vocab_size < 65_500 else np.dtype(np.int32)


class IndexedWriter:
    """Write one indexed dataset: ``add`` one document's ids at a time, the index on close."""

    def __init__(self, prefix: Path, vocab_size: int) -> None:
        self.prefix = Path(prefix)
        self.dtype = token_dtype(vocab_size)
        self.lengths: list[int] = []
        self.prefix.parent.mkdir(parents=True, exist_ok=True)
        self._bin = open(self.prefix.with_name(self.prefix.name + ".bin"), "wb")  # noqa: SIM115 - closed in close()

    def add(self, ids: np.ndarray) -> None:
        self._bin.write(np.asarray(ids).astype(self.dtype, copy=False).tobytes(order="C"))
        self.lengths.append(len(ids))

    def close(self) -> None:
        self._bin.close()
        lengths = np.asarray(self.lengths, dtype=np.int32)
        pointers = np.zeros(len(lengths), dtype=np.int64)
        if len(lengths):
            pointers[1:] = np.cumsum(lengths[:-1], dtype=np.int64) * self.dtype.itemsize
        with open(self.prefix.with_name(self.prefix.name + ".idx"), "wb") as idx:
            idx.write(HEADER)
            idx.write(struct.pack("<Q", VERSION))
            idx.write(struct.pack("<B", DTYPE_CODES[self.dtype]))
            idx.write(struct.pack("<Q", len(lengths)))
            idx.write(struct.pack("<Q", len(lengths) + 1))
            idx.write(lengths.tobytes(order="C"))
            idx.write(pointers.tobytes(order="C"))
            idx.write(np.arange(len(lengths) + 1, dtype=np.int64).tobytes(order="C"))

    def __enter__(self) -> IndexedWriter:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.close()


def read_index(prefix: Path) -> dict[str, Any]:
    """The ``.idx`` of ``prefix``: dtype name, sequence lengths and pointers (for checks, not for training)."""
    data = Path(str(prefix) + ".idx").read_bytes()
    if data[:9] != HEADER:
        raise ValueError(f"{prefix}.idx is not a Megatron index")
    code = data[17]
    dtype = next(d for d, c in DTYPE_CODES.items() if c == code)
    n, _docs = struct.unpack("<QQ", data[18:34])
    lengths = np.frombuffer(data, dtype=np.int32, count=n, offset=34)
    pointers = np.frombuffer(data, dtype=np.int64, count=n, offset=34 + 4 * n)
    return {"dtype": dtype.name, "lengths": lengths, "pointers": pointers}
