"""Documents of one id: the later copies (in input order) of an id already read are ledgered as
``duplicate_id`` under an id of their own, naming the first copy's file and line; and the parsed
rows made documents (URL columns added, bookkeeping columns dropped)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from curation.ingest.records import LOCATION_COLUMNS
from curation.ingest.urls import URL_COLUMNS, url_columns
from curation.schema import DOC_COLUMNS, DROP_DETAIL, DROP_REASON, DropReason, detail_json


def find_duplicate_ids(ids: pd.DataFrame) -> pd.DataFrame:
    """Rows of ``ids`` (doc_id, _ord, _file, _line) whose doc_id appeared at a smaller _ord.

    Returns ``_ord`` of each duplicate and the file/line of the first occurrence.

    >>> ids = pd.DataFrame({"doc_id": ["a", "b", "a"], "_ord": [0, 1, 2], "_file": "f", "_line": [1, 2, 3]})
    >>> find_duplicate_ids(ids)[["_ord", "first_line"]].values.tolist()
    [[2, 1]]
    """
    if ids.empty:
        return pd.DataFrame({"_ord": pd.Series(dtype="int64"), "first_file": pd.Series(dtype=object), "first_line": pd.Series(dtype="int64")})
    ids = ids.sort_values(["doc_id", "_ord"], kind="stable")
    first = ids.groupby("doc_id", sort=False).transform("first")
    dup = ids["_ord"].to_numpy() != first["_ord"].to_numpy()
    return pd.DataFrame(
        {
            "_ord": ids["_ord"].to_numpy()[dup],
            "first_file": first["_file"].to_numpy()[dup],
            "first_line": first["_line"].to_numpy()[dup],
        }
    )


def finish_docs(df: pd.DataFrame, dup_map: dict[int, tuple[str, int]]) -> pd.DataFrame:
    """Parsed rows as documents: later copies of an id (``dup_map``: ``_ord`` → first file, line)
    ledgered as ``duplicate_id`` under an id of their own, the URL columns added, the
    bookkeeping columns dropped. A frame read with fewer columns keeps those it has."""
    df = df.copy()
    if dup_map:
        for i, o in enumerate(df["_ord"].tolist()):
            if o in dup_map and not isinstance(df[DROP_REASON].iat[i], str):
                f, n = dup_map[o]
                df.iat[i, df.columns.get_loc(DROP_REASON)] = DropReason.DUPLICATE_ID.value
                original = df["doc_id"].iat[i]
                df.iat[i, df.columns.get_loc(DROP_DETAIL)] = detail_json(
                    file=df["_file"].iat[i], line=int(df["_line"].iat[i]), error="duplicate id", first_file=f, first_line=n,
                    original_id=original,
                )
                # the ledger row needs an id of its own: ids stay unique across kept ∪ ledger
                df.iat[i, df.columns.get_loc("doc_id")] = f"{original}@{Path(df['_file'].iat[i]).name}:{int(df['_line'].iat[i])}"
    df = df.drop(columns=[*LOCATION_COLUMNS, "_ord", "_has_html"], errors="ignore")
    df = pd.concat([df, url_columns(df["url"])], axis=1)
    return df[[c for c in (*DOC_COLUMNS, *URL_COLUMNS, DROP_REASON, DROP_DETAIL) if c in df.columns]]
