"""A record's own ``source`` field that names no source, on an input whose source the user gave.

A record's source field comes before the source of its input (``--source``, ``ingest.source`` or an
``ingest.inputs`` entry), so that a file mixing sources keeps each record's. Many corpora carry a
field ``source`` of their own that names the dataset a record came from (``c4``, ``wcxb``,
``dolma_cc_raw_wet``), not one of the recipe's sources: on an input with a source of its own, such a
record takes the input's source, and the field's value is kept in ``meta`` under the field's name
(as any field that fills no column is). Without a source for the input it is an ``unknown_source``
ledger row. A field that spells a source in other case or with spaces around it (``" Code "``) is that
source; a number (a dataset's id) gives way as a name does.

>>> resolved_source("code", "web"), resolved_source("c4", "web"), resolved_source("c4", None), resolved_source(None, "web")
(('code', None), ('web', 'c4'), ('c4', None), ('web', None))
>>> resolved_source(" Code ", "web"), resolved_source(12, "web"), resolved_source(12, None)
(('code', None), ('web', '12'), (12, None))
"""

from __future__ import annotations

from typing import Any

from curation.ingest.language_field import figures_head
from curation.schema import SOURCES

#: Key of the figures ingest records (stats.json ``extra``) of the records that took their input's source.
FIGURES = "source_field_in_meta"
#: The private column of the parsed rows holding the value a row's source field had when it went to meta.
MOVED = "_source_in_meta"


def resolved_source(value: Any, given: str | None) -> tuple[Any, str | None]:
    """(the record's source, the field's value kept in meta or None) for a record whose source field
    holds ``value`` (None when it has none), on an input whose source is ``given`` (None when the user
    gave none). A value that is no string is returned as it is (a ``wrong_type`` row)."""
    if isinstance(value, str) and value.strip().lower() in SOURCES and value not in SOURCES:
        return value.strip().lower(), None  # " Code ", "WEB": the source it spells
    if isinstance(value, (int, float)) and not isinstance(value, bool) and given is not None:
        return given, str(value)  # a dataset's number
    if isinstance(value, str) and value and value not in SOURCES and given is not None:
        return given, value
    return value or given, None


def source_note(stats: dict[str, Any]) -> str | None:
    """One line for an ingest whose records had a source field naming no source (None otherwise)."""
    if (head := figures_head(stats, FIGURES)) is None:
        return None
    start, values = head
    return (
        f"{start} have a source field that names "
        f"no source ({values}); they take the source given for their input (--source or an ingest.inputs entry), and "
        "the field's value is kept in meta under the field's name. A source field that is one of "
        f"{', '.join(SOURCES)} is the record's source"
    )
