"""What the kit checks of a group stage's ``keys`` and ``removals`` (:class:`pipelines.kit.shapes.GroupStage`).

Each is called through :func:`pipelines.kit.contract.call`, so an error inside a stage of one's
own is a :class:`StageError` naming the stage and the method (exit 13), one inside a stage curate
ships a bug in curate (exit 70); what it returns is checked as it returns it:

- ``keys(part, cfg)``: a frame with one key row per document of ``part`` (each of its ``doc_id``
  once) and every column of ``key_meta`` (those beyond it are not kept);
- ``removals(group, cfg)``: a frame with the columns of ``pipelines.removal.REMOVAL_META``, each
  row a key row of ``group`` (its ``doc_id`` with its ``_part``) and a ``DropReason`` value as its
  ``drop_reason``: a removal of a document that is not there would mark nothing, and one with
  another ``_part`` would be looked for in the wrong partition, so the document would stay.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from curation.schema import DROP_REASON, DropReason
from pipelines.kit.contract import StageError, call

REASONS = frozenset(r.value for r in DropReason)


def keys_part(part: pd.DataFrame, stage: Any, cfg: Any) -> pd.DataFrame:
    """``stage.keys(part, cfg)``, checked, with the columns of ``stage.key_meta`` in their order."""
    keys = call(stage, "keys", part, cfg)
    name, columns = f"{stage.name}.keys", list(stage.key_meta.columns)
    if unnamed := [c for c in ("doc_id", stage.on) if c not in columns]:
        raise StageError(
            f"{stage.name}.key_meta names no column {unnamed[0]!r}: the key rows carry doc_id and the column "
            f"on names ({stage.on!r}); declare both in key_meta"
        )
    fix = f"return one row per row of `part` (its doc_id as part['doc_id'] has it), with the columns {columns}"
    if not isinstance(keys, pd.DataFrame):
        raise StageError(f"{name} returned a {type(keys).__name__}, not a DataFrame: {fix}")
    if len(keys) != len(part):
        raise StageError(f"{name} returned {len(keys)} key rows for {len(part)} documents: {fix}")
    if missing := [c for c in columns if c not in keys.columns]:
        raise StageError(f"{name} returned no column {missing[0]!r} (key_meta names it): {fix}")
    ids, theirs = pd.Index(keys["doc_id"].astype(str)), pd.Index(part["doc_id"].astype(str))
    if (stranger := _first(ids, theirs)) is not None:
        raise StageError(f"{name} returned a key row for doc_id {stranger!r}, which is no document of `part`: {fix}")
    if (lacking := _first(theirs, ids)) is not None:
        raise StageError(f"{name} returned no key row for doc_id {lacking!r} (another document has two): {fix}")
    return keys[columns]


def removals_part(group: pd.DataFrame, stage: Any, cfg: Any) -> pd.DataFrame:
    """``stage.removals(group, cfg)``, checked, with the columns of ``REMOVAL_META`` in their order."""
    from pipelines.removal import REMOVAL_META

    removals = call(stage, "removals", group, cfg)
    name, columns = f"{stage.name}.removals", list(REMOVAL_META.columns)
    fix = f"return a row with the columns {columns} for each document of `group` to remove (doc_id and _part as its row has them)"
    if not isinstance(removals, pd.DataFrame):
        raise StageError(f"{name} returned a {type(removals).__name__}, not a DataFrame: {fix}")
    if missing := [c for c in columns if c not in removals.columns]:
        raise StageError(f"{name} returned no column {missing[0]!r}: {fix}")
    ids = removals["doc_id"].astype(str)
    parts = group.assign(doc_id=group["doc_id"].astype(str)).drop_duplicates("doc_id").set_index("doc_id")["_part"]
    if (stranger := _first(pd.Index(ids), parts.index)) is not None:
        raise StageError(f"{name} returned a removal of doc_id {stranger!r}, which is no key row of `group`: {fix}")
    moved = parts.reindex(ids.to_numpy()).to_numpy() != removals["_part"].to_numpy()
    if moved.any():
        at = int(moved.argmax())
        raise StageError(
            f"{name} returned doc_id {ids.iloc[at]!r} with _part {removals['_part'].iloc[at]}, but its key row's _part "
            f"is {parts[ids.iloc[at]]}, the partition it is marked in: {fix}"
        )
    if unknown := [r for r in removals[DROP_REASON] if not (isinstance(r, str) and r in REASONS)][:1]:
        raise StageError(
            f"{name} returned drop_reason {unknown[0]!r}, which is no DropReason value: give each removal one "
            "(DropReason.EXACT_DUPLICATE.value); add a member to DropReason in curation/schema.py for a new reason"
        )
    return removals[columns]


def _first(values: pd.Index, among: pd.Index) -> str | None:
    """The first of ``values`` that is not in ``among`` (None when every one is)."""
    out = values[~values.isin(among)]
    return str(out[0]) if len(out) else None
