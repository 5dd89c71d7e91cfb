"""SemDeDup's keep rules: the order in which a cluster's members are kept (first = most wanted).

A rule gives each document a key (:func:`keep_key`, lowest kept first); members whose keys tie
(within :data:`TIE`) are kept longest text first, then by ``doc_id`` (:func:`keep_order`), so a page
and a copy cut short after the embedder's window, which share one vector, keep the whole page.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

#: farthest (the paper's default: the member farthest from the centroid is kept), closest, longest,
#: ``highest:<column>`` / ``lowest:<column>`` (a numeric document column decides; NaN loses).
KEEP_RULES = ("farthest", "closest", "longest", "highest:<column>", "lowest:<column>")
#: Keep keys this close tie: a page and a copy that differs only after the embedder's window have one
#: vector, and their cosines to the centroid differ in the last float bits at most.
TIE = 1e-6
GROUP_COLUMNS = ("source", "cluster")


def parse_keep(keep: str) -> tuple[str, str | None]:
    """``"highest:n_tokens"`` → ``("highest", "n_tokens")``; raises ValueError on an unknown rule.

    >>> parse_keep("farthest"), parse_keep("highest:n_tokens")
    (('farthest', None), ('highest', 'n_tokens'))
    """
    rule, _, column = keep.partition(":")
    if rule in ("farthest", "closest", "longest") and not column:
        return rule, None
    if rule in ("highest", "lowest") and column:
        return rule, column
    raise ValueError(f"keep rule {keep!r} is not one of {', '.join(KEEP_RULES)}")


def keep_key(docs: pd.DataFrame, centroid_sim: np.ndarray, keep: str) -> np.ndarray:
    """Sort key per document, lowest = kept first (ties: the longer text, then ``doc_id``; :func:`keep_order`).

    >>> df = pd.DataFrame({"text": ["aa", "a"], "n_tokens": [1, None]})
    >>> keep_key(df, np.array([0.9, 0.5]), "farthest").tolist(), keep_key(df, np.zeros(2), "longest").tolist()
    ([0.9, 0.5], [-2.0, -1.0])
    >>> keep_key(df, np.zeros(2), "highest:n_tokens").tolist()
    [-1.0, inf]
    """
    rule, column = parse_keep(keep)
    if rule == "farthest":
        key = np.asarray(centroid_sim, dtype=np.float64)
    elif rule == "closest":
        key = -np.asarray(centroid_sim, dtype=np.float64)
    elif rule == "longest":
        key = -docs["text"].map(lambda t: len(t) if isinstance(t, str) else 0).to_numpy(dtype=np.float64)
    else:
        if column not in docs.columns:
            raise KeyError(f"keep rule {keep!r} needs column {column!r}; columns: {list(docs.columns)}")
        values = pd.to_numeric(docs[column], errors="coerce").to_numpy(dtype=np.float64)
        key = -values if rule == "highest" else values
    return np.where(np.isnan(key), np.inf, key)


def keep_order(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` sorted by (source, cluster), then keep order: ``keep_key``, where keys within :data:`TIE`
    of the previous one tie; ties go to the longer text (``length``, characters), then ``doc_id``.

    >>> f = pd.DataFrame({"doc_id": ["a", "b", "c"], "source": "web", "cluster": 0,
    ...                   "keep_key": [0.5, 0.5 + 1e-7, 0.4], "length": [10, 20, 5]})
    >>> keep_order(f)["doc_id"].tolist()
    ['c', 'b', 'a']
    """
    frame = frame.sort_values([*GROUP_COLUMNS, "keep_key", "doc_id"], kind="stable")
    key = frame["keep_key"].to_numpy(dtype=np.float64)
    same = np.zeros(len(frame), dtype=bool)
    if len(frame) > 1:
        with np.errstate(invalid="ignore"):  # inf - inf: two NaN keys (both last) tie too
            same[1:] = (key[1:] == key[:-1]) | (np.abs(key[1:] - key[:-1]) <= TIE)
        for col in GROUP_COLUMNS:
            values = frame[col].to_numpy(dtype=object)
            same[1:] &= values[1:] == values[:-1]
    length = frame["length"].to_numpy(dtype=np.int64) if "length" in frame.columns else np.zeros(len(frame), dtype=np.int64)
    return frame.assign(_tie=np.cumsum(~same), _neg_length=-length).sort_values(
        ["_tie", "_neg_length", "doc_id"], kind="stable").drop(columns=["_tie", "_neg_length"])
