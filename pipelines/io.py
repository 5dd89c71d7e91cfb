"""Reading stage outputs and writing one partition's kept rows, ledger rows and counts.

The writer runs on the workers inside the stage's single graph: each partition writes
``docs/part-NNNNN.parquet`` and ``ledger/part-NNNNN.parquet`` (temp file, then rename:
:func:`pipelines.kit.atomic_path`, so a retried task overwrites cleanly) and returns a few rows of counts.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from curation.errors import json_safe
from curation.files import atomic_path, part_name, read_parquet
from curation.ingest.inputs import InputError
from curation.schema import DOC_COLUMNS, DROP_DETAIL, DROP_REASON, LEDGER_COLUMNS, check_reasons

if TYPE_CHECKING:  # imported where a stage reads its docs: an export's start needs no dask.dataframe (~0.6 CPU-s)
    import dask.dataframe as dd

PREVIEW_CHARS = 300
#: The ledger/ parts' schema.
LEDGER_SCHEMA = pa.schema(list(LEDGER_COLUMNS.items()) + [("preview", pa.string())])

#: One row per (kind, source, reason) and partition: the stats a stage's writer returns.
COUNTS_META = pd.DataFrame(
    {
        "kind": pd.Series(dtype=object),
        "source": pd.Series(dtype=object),
        "lang": pd.Series(dtype=object),
        "reason": pd.Series(dtype=object),
        "documents": pd.Series(dtype="int64"),
        "tokens": pd.Series(dtype="int64"),
        "part": pd.Series(dtype="int64"),
    }
)


def docs_dir(path: Path) -> Path:
    """The ``docs/`` folder of a stage folder (or ``path`` itself if it holds parquet parts)."""
    path = Path(path)
    if (path / "docs").is_dir():
        return path / "docs"
    if path.is_dir() and any(path.glob("part-*.parquet")):
        return path
    if not path.exists():
        raise InputError(f"{path} does not exist; give the folder a stage wrote (e.g. RUN_DIR/00_ingest)")
    from pipelines.marker import unfinished_stage  # it reads stage folders with this module

    unfinished = unfinished_stage(path)
    if unfinished:
        raise InputError(unfinished)
    raise InputError(
        f"{path} is not a stage output (no docs/ folder with part-*.parquet). "
        "Raw files must go through ingest first: curate ingest --input RAW --output STAGE_DIR"
    )


def read_docs(path: Path, columns: list[str] | None = None) -> dd.DataFrame:
    """A Dask dataframe over a stage's ``docs/`` parts, one partition per file, in name order."""
    files = docs_files(path)
    if not files:
        raise InputError(f"{docs_dir(path)} has no part-*.parquet files")
    meta = _meta_from_file(files[0], columns)
    import dask.dataframe as dd

    return dd.from_map(read_part, files, columns=columns, meta=meta, enforce_metadata=False)


def docs_columns(path: Path) -> list[str]:
    """The columns of a stage's ``docs/`` parts, from the first part's footer (no data read)."""
    files = docs_files(path)
    if not files:
        raise InputError(f"{docs_dir(path)} has no part-*.parquet files")
    return list(_named(files[0], pq.read_schema).names)


def docs_files(path: Path) -> list[str]:
    """The ``docs/`` part files of a stage folder, in partition order (:func:`read_docs`'s)."""
    return sorted(str(p) for p in docs_dir(path).glob("part-*.parquet"))


def count_rows(path: Path) -> int:
    """Rows in a stage's docs/ from Parquet footers (no data read)."""
    return sum(_named(p, lambda q: pq.ParquetFile(q).metadata.num_rows) for p in docs_files(path))


def read_part(path: str, columns: list[str] | None = None, share: tuple[int, int] | None = None) -> pd.DataFrame:
    """One partition of :func:`read_docs` (also read by a task that needs its file alone); with
    ``share=(j, k)``, only the ``j``-th of ``k`` contiguous shares of its row groups."""
    if share is None:
        return _named(path, lambda p: read_parquet(p, columns).to_pandas())
    j, k = share

    def read(p: str) -> pd.DataFrame:
        pf = pq.ParquetFile(p)
        g = pf.metadata.num_row_groups
        return pf.read_row_groups(list(range(j * g // k, (j + 1) * g // k)), columns=columns).to_pandas()

    return _named(path, read)


def _meta_from_file(path: str, columns: list[str] | None) -> pd.DataFrame:
    schema = _named(path, pq.read_schema)
    return schema.empty_table().select(columns or schema.names).to_pandas()


def _named(path: str, read: Any) -> Any:
    """``read(path)``, with any read error turned into an :class:`InputError` naming the file."""
    try:
        return read(path)
    except (OSError, pa.ArrowException) as exc:
        text = str(exc).strip().splitlines()
        raise InputError(
            f"{path}: cannot read this Parquet part ({text[0] if text else type(exc).__name__}); "
            "re-run the stage that wrote it"
        ) from None


def write_frame(df: pd.DataFrame, path: Path, schema: pa.Schema | None = None, row_group_size: int | None = None,
                groups: list[int] | None = None) -> None:
    """Write ``df`` to ``path`` atomically (temp file in the same folder, then rename); with
    ``groups`` (row offsets ``[0, …, len(df)]``), one row group per range."""
    write_table(pa.Table.from_pandas(df, schema=schema, preserve_index=False), path, row_group_size, groups)


def write_table(table: pa.Table, path: Path, row_group_size: int | None = None, groups: list[int] | None = None) -> None:
    """:func:`write_frame` for an Arrow table."""
    with atomic_path(path) as tmp:
        if groups is None or len(groups) <= 2:
            pq.write_table(table, tmp, compression="zstd", row_group_size=row_group_size)
            return
        with pq.ParquetWriter(tmp, table.schema, compression="zstd") as writer:
            for a, b in zip(groups[:-1], groups[1:], strict=True):
                if b > a:
                    writer.write_table(table.slice(a, b - a))


def read_rows(path: Path | str, start: int, count: int) -> pd.DataFrame:
    """Rows ``[start, start + count)`` of a Parquet file, reading only the row groups that hold them."""
    pf = pq.ParquetFile(path)
    groups, first, offset = [], None, 0
    for g in range(pf.num_row_groups):
        n = pf.metadata.row_group(g).num_rows
        if offset + n > start and offset < start + count:
            groups.append(g)
            first = offset if first is None else first
        offset += n
    if not groups:
        return pf.schema_arrow.empty_table().to_pandas()
    return pf.read_row_groups(groups).slice(start - first, count).to_pandas()


def docs_schema(df: pd.DataFrame) -> pa.Schema:
    """Arrow schema for a docs frame: core columns typed as in the schema, others inferred."""
    return _docs_types(pa.Schema.from_pandas(df, preserve_index=False))


def _docs_types(inferred: pa.Schema) -> pa.Schema:
    fields = []
    for f in inferred:
        t = DOC_COLUMNS.get(f.name)
        if t is None and pa.types.is_null(f.type):
            t = pa.string()
        fields.append(pa.field(f.name, t or f.type))
    return pa.schema(fields)


#: The type changes :func:`docs_table` makes by a cast of the table converted once: pandas'
#: Arrow-backed strings (``large_string``) and all-missing columns (``null``) to ``string``.
_CASTS = {(pa.large_string(), pa.string()), (pa.null(), pa.string())}


def docs_table(df: pd.DataFrame) -> pa.Table:
    """``pa.Table.from_pandas(df, schema=docs_schema(df), preserve_index=False)``, converting the
    frame once: :func:`docs_schema` infers the types by a conversion of its own (every string of
    every column), then the frame was converted again. Here the inferred table is cast to the
    docs types and given the pandas metadata that conversion writes (:func:`_cast_metadata`); a
    type change other than those in ``_CASTS`` takes the two conversions as before."""
    table = pa.Table.from_pandas(df, preserve_index=False)
    schema = _docs_types(table.schema)
    changed = [(a.type, b.type) for a, b in zip(table.schema, schema, strict=True) if a.type != b.type]
    if not changed:
        return table
    if any(c not in _CASTS for c in changed):
        return pa.Table.from_pandas(df, schema=schema, preserve_index=False)
    return table.cast(pa.schema(list(schema), metadata=_cast_metadata(table.schema, schema)))


def _cast_metadata(inferred: pa.Schema, schema: pa.Schema) -> dict[bytes, bytes]:
    """The schema metadata ``pa.Table.from_pandas(df, schema=schema)`` writes, from that of the
    conversion that inferred ``inferred``: the same JSON but each cast column's ``pandas_type``,
    which pyarrow derives from the Arrow type alone (``large_string`` reads ``object``, ``null``
    ``empty``, ``string`` ``unicode``). A conversion of the frame's first row with ``schema``
    would give the same, at the cost of converting the whole partition (~1 ms per 15 columns,
    whatever the rows)."""
    from pyarrow.pandas_compat import get_logical_type

    meta = json.loads(inferred.metadata[b"pandas"])
    for column in meta["columns"]:
        name = column["field_name"]
        if inferred.field(name).type != schema.field(name).type:
            column["pandas_type"] = get_logical_type(schema.field(name).type)
    return {**inferred.metadata, b"pandas": json.dumps(meta).encode("utf8")}


def write_partition(number: int, df: pd.DataFrame, work_dir: str, stage: str) -> pd.DataFrame:
    """Split annotated partition ``number`` into docs/ and ledger/ files; return its counts
    (``ctx.map_parts(annotated, write_partition, work_dir, stage, meta=COUNTS_META)``)."""
    name = part_name(number)
    reasons = df[DROP_REASON]
    check_reasons(reasons)
    dropped_mask = reasons.notna().to_numpy()
    kept = df.loc[~dropped_mask].drop(columns=[DROP_REASON, DROP_DETAIL])
    dropped = df.loc[dropped_mask]
    from pipelines.kit.slices import arrow_sizes, sized_groups, slice_groups

    table = docs_table(kept.reset_index(drop=True))
    # row groups of ~SLICE_CHARS of text: the next stage's scorers run one task per group (pipelines.kit.slices)
    # characters per row from the Arrow column where every value is a string or missing (a
    # string dtype); other columns as before
    typed = "text" in kept.columns and len(kept) and isinstance(kept["text"].dtype, pd.StringDtype)
    sizes = arrow_sizes(table.column("text")) if typed else None
    groups = sized_groups(sizes) if sizes is not None else slice_groups(kept["text"] if "text" in kept.columns else None, len(kept))
    write_table(table, Path(work_dir) / "docs" / name, groups=groups)
    if dropped_mask.any():
        write_frame(ledger_rows(dropped, stage), Path(work_dir) / "ledger" / name, LEDGER_SCHEMA)
    else:  # most partitions of most stages drop nothing: one table, converted once per process
        write_table(_empty_ledger(), Path(work_dir) / "ledger" / name)
    return partition_counts(df).assign(part=np.int64(number))


@functools.cache
def _empty_ledger() -> pa.Table:
    """The ledger of a partition without drops, as :func:`write_frame` converts it (no rows: the
    same table for every stage and every input)."""
    none = pd.DataFrame({c: pd.Series(dtype=object) for c in ("doc_id", "source", "n_tokens", DROP_REASON, DROP_DETAIL)})
    return pa.Table.from_pandas(ledger_rows(none, ""), schema=LEDGER_SCHEMA, preserve_index=False)


def ledger_rows(dropped: pd.DataFrame, stage: str) -> pd.DataFrame:
    """Ledger rows for the dropped rows of a partition."""
    text = dropped["text"] if "text" in dropped.columns else pd.Series([None] * len(dropped))
    return pd.DataFrame(
        {
            "doc_id": dropped["doc_id"].astype(object).to_numpy(),
            "stage": stage,
            "reason": dropped[DROP_REASON].astype(object).to_numpy(),
            "detail": dropped[DROP_DETAIL].astype(object).to_numpy(),
            "source": dropped["source"].astype(object).to_numpy(),
            "n_tokens": pd.to_numeric(dropped["n_tokens"], errors="coerce").fillna(0).astype("int64").to_numpy(),
            "preview": [t[:PREVIEW_CHARS] if isinstance(t, str) else None for t in text],
        }
    )


def partition_counts(df: pd.DataFrame) -> pd.DataFrame:
    """Documents and tokens in / kept / dropped (by reason), per source and language, for one partition.

    One pass over plain lists (a pandas groupby cost ~30 ms per partition here, in every stage's
    writer); rows sorted by (kind, source, lang, reason) as a groupby would give them.
    """
    tokens = pd.to_numeric(df["n_tokens"], errors="coerce").fillna(0).astype("int64").tolist()
    sources = df["source"].astype(object).fillna("unknown").tolist()
    langs = df["lang"].astype(object).fillna("und").tolist() if "lang" in df.columns else ["und"] * len(df)
    sums: dict[tuple[str, Any, Any, str], list[int]] = {}
    for source, lang, reason, n in zip(sources, langs, df[DROP_REASON].tolist(), tokens, strict=True):
        key = ("dropped", source, lang, reason) if isinstance(reason, str) else ("kept", source, lang, "")
        acc = sums.get(key)
        if acc is None:
            sums[key] = [1, n]
        else:
            acc[0] += 1
            acc[1] += n
    keys = sorted(sums)

    def objects(i: int) -> pd.Series:
        return pd.Series([k[i] for k in keys], dtype=object)

    # built with COUNTS_META's dtypes (an astype of each column cost more than the counting)
    return pd.DataFrame({
        "kind": objects(0), "source": objects(1), "lang": objects(2), "reason": objects(3),
        "documents": np.array([sums[k][0] for k in keys], dtype=np.int64), "tokens": np.array([sums[k][1] for k in keys], dtype=np.int64),
        "part": np.zeros(len(keys), dtype=np.int64),
    })


def write_json(path: Path, payload: Any) -> None:
    """Write JSON atomically with sorted keys; a NaN or infinite figure (a correlation of constant scores)
    is written null: strict JSON, which jq, JavaScript and ``json.load(parse_constant=…)`` read."""
    with atomic_path(path) as tmp:
        tmp.write_text(json.dumps(json_safe(payload), indent=2, sort_keys=True, default=str, allow_nan=False) + "\n")
