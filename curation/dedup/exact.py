"""Exact dedup: hash of normalised text, one keeper per group.

>>> df = pd.DataFrame({"doc_id": ["a", "b", "c"], "text": ["x  y", "x y", "z"]})
>>> keys = exact_keys(df).assign(_part=0, _row=[0, 1, 2])
>>> pick_duplicates(keys, "first")[["doc_id", "drop_reason"]].values.tolist()
[['b', 'exact_duplicate']]
"""

from __future__ import annotations

import pandas as pd

from curation.schema import DROP_DETAIL, DROP_REASON, DropReason, detail_json
from curation.text import altered_chars, normalize_exact, text_hash

KEEP_RULES = ("first", "longest")


def exact_keys(df: pd.DataFrame) -> pd.DataFrame:
    """``hash`` of each normalised text with ``doc_id``, text length and
    :func:`~curation.text.altered_chars`."""
    texts = df["text"].tolist()
    return pd.DataFrame(
        {
            "hash": [text_hash(normalize_exact(t)) for t in texts],
            "doc_id": df["doc_id"].astype(object).to_numpy(),
            "length": [len(t) for t in texts],
            "altered": [altered_chars(t) for t in texts],
        }
    )


def pick_duplicates(keys: pd.DataFrame, keep: str = "first") -> pd.DataFrame:
    """Removal rows for every member of a hash group but its keeper.

    Of the copies, those with the fewest characters normalisation changes come first (a copy in
    full-width Latin letters or with zero-width spaces loses to the text as typed); among them
    ``first`` keeps the earliest (input partition, row), ``longest`` the longest original text
    (ties: earliest).
    """
    if keep not in KEEP_RULES:
        raise ValueError(f"keep must be one of {KEEP_RULES}, not {keep!r}")
    cols = ["doc_id", "_part", DROP_REASON, DROP_DETAIL]
    if keys.empty:
        return pd.DataFrame({c: pd.Series(dtype="int64" if c == "_part" else object) for c in cols})
    order = ["hash", "altered", "_part", "_row"] if keep == "first" else ["hash", "altered", "neg_len", "_part", "_row"]
    ranked = keys.assign(neg_len=-keys["length"]).sort_values(order, kind="stable")
    keeper = ranked.groupby("hash", sort=False)["doc_id"].transform("first")
    size = ranked.groupby("hash", sort=False)["doc_id"].transform("size")
    dup = (ranked["doc_id"] != keeper).to_numpy()
    out = ranked.loc[dup, ["doc_id", "_part"]].reset_index(drop=True)
    out[DROP_REASON] = DropReason.EXACT_DUPLICATE.value
    out[DROP_DETAIL] = [
        detail_json(duplicate_of=k, group_size=int(s), hash=h)
        for k, s, h in zip(keeper[dup], size[dup], ranked.loc[dup, "hash"], strict=True)
    ]
    return out[cols]
