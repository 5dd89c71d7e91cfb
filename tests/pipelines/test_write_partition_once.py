"""``write_partition`` converts a partition to Arrow once (``docs_table``), takes the row groups'
characters from the Arrow ``text`` column and builds its counts with their dtypes: the files it
writes are byte for byte those of the reference below (the code before: the docs schema inferred
by a conversion of its own, then the frame converted again) on varied partitions."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from curation.files import part_name
from curation.schema import DROP_DETAIL, DROP_REASON, DropReason, check_reasons
from pipelines import io
from pipelines.kit import slices


def _reference_counts(df: pd.DataFrame) -> pd.DataFrame:
    tokens = pd.to_numeric(df["n_tokens"], errors="coerce").fillna(0).astype("int64").tolist()
    sources = df["source"].astype(object).fillna("unknown").tolist()
    langs = df["lang"].astype(object).fillna("und").tolist() if "lang" in df.columns else ["und"] * len(df)
    sums: dict = {}
    for source, lang, reason, n in zip(sources, langs, df[DROP_REASON].tolist(), tokens, strict=True):
        key = ("dropped", source, lang, reason) if isinstance(reason, str) else ("kept", source, lang, "")
        acc = sums.setdefault(key, [0, 0])
        acc[0] += 1
        acc[1] += n
    keys = sorted(sums)
    return pd.DataFrame({
        "kind": [k[0] for k in keys], "source": [k[1] for k in keys], "lang": [k[2] for k in keys], "reason": [k[3] for k in keys],
        "documents": [sums[k][0] for k in keys], "tokens": [sums[k][1] for k in keys], "part": 0,
    }).astype(io.COUNTS_META.dtypes.to_dict())


def _reference_write(number: int, df: pd.DataFrame, work_dir: str, stage: str) -> pd.DataFrame:
    name = part_name(number)
    reasons = df[DROP_REASON]
    check_reasons(reasons)
    dropped_mask = reasons.notna().to_numpy()
    kept = df.loc[~dropped_mask].drop(columns=[DROP_REASON, DROP_DETAIL])
    dropped = df.loc[dropped_mask]
    io.write_frame(kept.reset_index(drop=True), Path(work_dir) / "docs" / name, io.docs_schema(kept),
                   groups=slices.slice_groups(kept["text"] if "text" in kept.columns else None, len(kept)))
    if dropped_mask.any():
        io.write_frame(io.ledger_rows(dropped, stage), Path(work_dir) / "ledger" / name, io.LEDGER_SCHEMA)
    else:
        io.write_table(io._empty_ledger(), Path(work_dir) / "ledger" / name)
    return _reference_counts(df).assign(part=np.int64(number))


def _frame(seed: int, n: int, *, strings: str, chunks: int = 1) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    words = ["a", "bé", "中文", "😀x", "code(x)", "\n", "  ", "z" * 50]
    texts = ["".join(rng.choice(words, size=int(rng.integers(0, 4000)))) for _ in range(n)]
    if n > 2:
        texts[1] = None
    df = pd.DataFrame({
        "doc_id": [f"d{seed}-{i}" for i in range(n)],
        "text": texts,
        "source": rng.choice(["web", "code", "math"], size=n).tolist(),
        "url": [None] * n,  # all missing: null, cast to string
        "n_tokens": rng.integers(0, 5000, size=n).astype("int64"),
        "lang": [None if i % 7 == 3 else str(rng.choice(["en", "zh"])) for i in range(n)],
        "lang_score": rng.random(n),
        "quality_bucket": pd.array([None if i % 5 == 0 else int(i) for i in range(n)], dtype="Int64"),
        "extra_label": [f"l{i % 3}" for i in range(n)],
        "extra_missing": [None] * n,
        DROP_REASON: [next(iter(DropReason)).value if i % 4 == 1 else None for i in range(n)],
        DROP_DETAIL: ['{"k": 1}' if i % 4 == 1 else None for i in range(n)],
    })
    if strings == "object":
        df = df.astype({c: object for c in ("doc_id", "text", "source", "lang", "extra_label")})
    elif strings == "pyarrow":
        df = df.astype({c: pd.StringDtype("pyarrow", na_value=np.nan) for c in ("doc_id", "text", "source", "lang", "extra_label", "url")})
    if chunks > 1:  # pieces put together: Arrow-backed columns of several chunks
        df = pd.concat([df.iloc[i::chunks] for i in range(chunks)]).sort_index()
    return df


CASES = [
    ("object", 40, 1), ("default", 40, 1), ("pyarrow", 40, 1), ("pyarrow", 200, 3), ("default", 1, 1), ("object", 0, 1),
    ("default", 3, 1), ("pyarrow", 120, 2),
]


@pytest.mark.parametrize(("strings", "n", "chunks"), CASES)
@pytest.mark.parametrize("slice_chars", [None, 50_000])
@pytest.mark.parametrize("drops", [True, False])
def test_write_partition_same_bytes_as_reference(tmp_path, monkeypatch, strings, n, chunks, slice_chars, drops):
    if slice_chars is not None:
        monkeypatch.setattr(slices, "SLICE_CHARS", slice_chars)  # several row groups per part
    df = _frame(n + chunks, n, strings=strings, chunks=chunks)
    if not n:
        df = df.iloc[:0]
    if not drops:  # a partition that drops nothing: kept whole
        df[DROP_REASON] = None
        df[DROP_DETAIL] = None
    if chunks > 1 and n > 10:  # an index that is not 0..n-1 (rows put back together from pieces)
        df.index = df.index[::-1]
    new = io.write_partition(5, df.copy(), str(tmp_path / "new"), "stage_x")
    old = _reference_write(5, df.copy(), str(tmp_path / "old"), "stage_x")
    pd.testing.assert_frame_equal(new, old, check_exact=True)
    assert list(new.dtypes) == list(io.COUNTS_META.dtypes)
    for sub in ("docs", "ledger"):
        a, b = tmp_path / "new" / sub / part_name(5), tmp_path / "old" / sub / part_name(5)
        assert a.read_bytes() == b.read_bytes(), (sub, strings, n)


def test_docs_table_falls_back_on_other_type_changes():
    # n_tokens with a missing value: float64 inferred, int64 wanted: the reference's own conversion
    df = pd.DataFrame({"doc_id": ["a", "b"], "n_tokens": [1.0, np.nan], "text": pd.array(["x", None], dtype="str")})
    want = pa.Table.from_pandas(df, schema=io.docs_schema(df), preserve_index=False)
    got = io.docs_table(df)
    assert got.equals(want, check_metadata=True)


@pytest.mark.parametrize("strings", ["object", "default", "pyarrow"])
def test_docs_table_equals_reference(strings):
    for seed in range(5):
        df = _frame(seed, 30 + seed, strings=strings, chunks=1 + seed % 3)
        want = pa.Table.from_pandas(df, schema=io.docs_schema(df), preserve_index=False)
        got = io.docs_table(df)
        assert got.equals(want, check_metadata=True)
        assert [c.num_chunks for c in got.columns] == [c.num_chunks for c in want.columns]


def test_arrow_sizes_are_python_lengths():
    texts = ["", "abc", "é中😀", None, "x" * 1000, "\u2028\x00"]
    column = pa.chunked_array([texts[:3], texts[3:]], type=pa.large_string())
    assert slices.arrow_sizes(column).tolist() == slices._sizes(pd.Series(texts, dtype=object)).tolist()
    sizes = slices._sizes(pd.Series(texts * 50, dtype=object))
    assert slices.sized_groups(sizes, slice_chars=700) == slices.slice_groups(pd.Series(texts * 50, dtype=object), 300, slice_chars=700)
