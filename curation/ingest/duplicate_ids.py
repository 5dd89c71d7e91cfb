"""Documents of one id: the first row of an id (input order) keeps it; every later row is ledgered
under an id of its own, ``<id>@<file>:<line>``, naming the first copy's file and line: as
``duplicate_id``, or with the reason it already had (an HTTP 404 copy stays ``http_status``). Ids
then stay unique across kept documents and ledger, whatever the copies are. Also the parsed rows
made documents (URL columns added, bookkeeping columns dropped)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from curation.ingest.records import LOCATION_COLUMNS
from curation.ingest.urls import URL_COLUMNS, url_columns
from curation.schema import DOC_COLUMNS, DROP_DETAIL, DROP_REASON, DropReason, detail_json


def duplicate_name(doc_id: str, file: str, line: int) -> str:
    """The id of a later copy's row: the id, the file's name and the copy's line.

    >>> duplicate_name("a", "/in/x.warc.gz", 4)
    'a@x.warc.gz:4'
    """
    return f"{doc_id}@{Path(file).name}:{int(line)}"


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


def finish_docs(df: pd.DataFrame, dup_map: dict[int, tuple[str, int]], keep: tuple[str, ...] = ()) -> pd.DataFrame:
    """Parsed rows as documents: later copies of an id (``dup_map``: ``_ord`` → first file, line)
    ledgered under an id of their own (as ``duplicate_id`` unless they have a reason), the URL
    columns added, the bookkeeping columns dropped but those in ``keep`` (last). A frame read with
    fewer columns keeps those it has."""
    df = df.copy()
    if dup_map:
        reason_at, detail_at, id_at = (df.columns.get_loc(c) for c in (DROP_REASON, DROP_DETAIL, "doc_id"))
        for i, o in enumerate(df["_ord"].tolist()):
            if o not in dup_map:
                continue
            f, n = dup_map[o]
            original, file, line = df["doc_id"].iat[i], df["_file"].iat[i], int(df["_line"].iat[i])
            if isinstance(df.iat[i, reason_at], str):  # already ledgered: its own reason stays, the copy is named
                detail = json.loads(df.iat[i, detail_at] or "{}")
                df.iat[i, detail_at] = detail_json(**{**detail, "original_id": original, "first_file": f, "first_line": n})
            else:
                df.iat[i, reason_at] = DropReason.DUPLICATE_ID.value
                df.iat[i, detail_at] = detail_json(file=file, line=line, error="duplicate id", first_file=f, first_line=n,
                                                   original_id=original)
            # the ledger row needs an id of its own: ids stay unique across kept ∪ ledger
            df.iat[i, id_at] = duplicate_name(original, file, line)
    df = df.drop(columns=[c for c in (*LOCATION_COLUMNS, "_ord", "_has_html") if c not in keep], errors="ignore")
    df = pd.concat([df, url_columns(df["url"])], axis=1)
    return df[[c for c in (*DOC_COLUMNS, *URL_COLUMNS, DROP_REASON, DROP_DETAIL, *keep) if c in df.columns]]
