"""What ingest says when it finishes, beside the funnel: documents it dropped as ``duplicate_id``
(another record's id, seen earlier in input order), with examples and how to keep them, and crawl
files it could not read to the end.

Two shards that each number their rows from 0 lose half their documents this way, and the
funnel alone does not say that the ids, not the texts, were the same; what to change for records
without text (a text field of another name, or null texts). And, while it plans, a field
mapping that names no column of a Parquet file or ``datasets`` folder, and inputs whose names say
they are a held-out split (``test``, ``validation``) or Hive partitions (``lang=en/``).
"""

from __future__ import annotations

import json
import logging
import re
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from curation.schema import DropReason

_DUPLICATE = DropReason.DUPLICATE_ID.value
log = logging.getLogger(__name__)


def duplicate_id_warning(stats: dict[str, Any], ledger: Path, examples: int = 3) -> str | None:
    """One warning line for the ``duplicate_id`` rows of an ingest's ``stats`` (None when it has
    none): how many of how many documents, example ids from ``ledger``, and the fix.

    >>> duplicate_id_warning({"stage": "ingest", "in": {"documents": 9}, "dropped_by_reason": {}}, Path("l")) is None
    True
    """
    n = (stats.get("dropped_by_reason", {}).get(_DUPLICATE) or {}).get("documents", 0)
    if stats.get("stage") != "ingest" or not n:
        return None
    ids = duplicate_examples(ledger, examples)
    shown = f" (e.g. {', '.join(repr(i) for i in ids)})" if ids else ""
    return (f"ingest: {n:,} of {stats['in']['documents']:,} documents dropped as duplicate_id: an earlier record (input "
            f"order) has the same id{shown}; the first occurrence keeps the id (kept, or in the ledger with its own reason), and {ledger} names each copy's file and line "
            "and its first's. If they are different documents, give ids that are unique across files, or "
            "ingest.fields.id=none to make each id from the record's text and file:line")


def duplicate_examples(ledger: Path, limit: int = 3) -> list[str]:
    """The first ``limit`` distinct original ids of the ``duplicate_id`` rows in a ledger folder
    (``part-*.parquet``, in part order); [] when it cannot be read."""
    out: list[str] = []
    try:
        for part in sorted(Path(ledger).glob("part-*.parquet")):
            table = pq.read_table(part, columns=["reason", "detail"], filters=[("reason", "==", _DUPLICATE)])
            for detail in table.column("detail").to_pylist():
                original = str(json.loads(detail or "{}").get("original_id", ""))
                if original and original not in out:
                    out.append(original)
                if len(out) >= limit:
                    return out
    except (OSError, ValueError, KeyError):  # the warning goes out without examples
        return out
    return out


def stopped_files_warning(stats: dict[str, Any], ledger: Path, shown: int = 2) -> str | None:
    """One warning line for the crawl files (partitions) whose reading stopped before their end in a
    way the planning pass did not foresee, and so did not warn of (their ``truncated_input`` rows say
    ``stopped``); None when there are none.

    >>> stopped_files_warning({"stage": "ingest", "dropped_by_reason": {"truncated_input": {"documents": 0}}}, Path("l")) is None
    True
    """
    n = (stats.get("dropped_by_reason", {}).get(DropReason.TRUNCATED_INPUT.value) or {}).get("documents", 0)
    if stats.get("stage") != "ingest" or not n:
        return None
    rows = []
    try:
        for part in sorted(Path(ledger).glob("part-*.parquet")):
            table = pq.read_table(part, columns=["reason", "detail"], filters=[("reason", "==", DropReason.TRUNCATED_INPUT.value)])
            rows += [d for d in map(json.loads, table.column("detail").to_pylist()) if d.get("stopped")]
    except (OSError, ValueError, KeyError):
        return None
    if not rows:
        return None
    said = "; ".join(f"{d.get('file')}: {d.get('error')}" for d in rows[:shown]) + ("; …" if len(rows) > shown else "")
    return (f"ingest: {len(rows):,} crawl file(s) or partitions were not read to the end ({said}); {ledger} has a "
            "truncated_input row for each, and the records after it are not in the output")


def missing_text_fix(ledger: Path, rows: int) -> str:
    """What to change for ``rows`` ``missing_text`` rows of an ingest's ``ledger``: a record without
    the text field needs the mapping (``ingest.fields.text``), one whose text is null has the field
    and nothing in it, which no mapping changes (its detail ends ``is null``)."""
    from curation.ingest.records import NULL_TEXT

    nulls = 0
    try:
        for part in sorted(Path(ledger).glob("part-*.parquet")):
            table = pq.read_table(part, columns=["reason", "detail"], filters=[("reason", "==", DropReason.MISSING_TEXT.value)])
            nulls += sum(str(json.loads(d or "{}").get("error", "")).endswith(NULL_TEXT) for d in table.column("detail").to_pylist())
    except (OSError, ValueError, KeyError):  # said without the split
        nulls = 0
    rename = "name the text field with ingest.fields.text=<field> (chat turns or a question and its answer: ingest.fields.chat, which the ledger detail names)"
    null = "the text field is there but null: those records hold no text"
    if not nulls:
        return rename
    return null if nulls >= rows else f"{nulls:,} of them: {null}; the others lack the field: {rename}"


_SAID: set[tuple[str, str]] = set()


def unmapped_fields(path: Path, names: list[str], fields: Any) -> None:
    """Warn (once per setting) when ``ingest.fields`` maps a column to a field a Parquet file or
    ``datasets`` folder does not have: ``ingest.fields.id=uuid`` for a column ``uid`` left every id a
    hash, and ``fields.repo=repo_name`` every repo empty, without a word. The defaults (``id``,
    ``repo`` …) and ``none``, the documented way to turn a field off, are not said."""
    import dataclasses

    for f in dataclasses.fields(fields):
        value = getattr(fields, f.name)
        if f.name in ("text", "html") or value in (f.default, "none") or set(value.split(",")) <= set(names) or (f.name, value) in _SAID:
            continue
        _SAID.add((f.name, value))
        log.warning("%s has no column %r, which ingest.fields.%s names: its %s is left empty (columns: %s); "
                    "name a column it has, or ingest.fields.%s=none to leave it off on purpose",
                    path, value, f.name, f.name, ", ".join(names[:20]), f.name)


def binary_columns(schema: pa.Schema, fields: Any) -> list[str]:
    """The columns of a Parquet file or ``datasets`` folder, or fields inside them (``image.bytes``, a
    ``datasets`` Image), that hold binary data and reach ``meta``: every column but the mapped ones
    (a binary text, id, url… column is read as its text; :mod:`curation.ingest.record_meta`)."""
    mapped = {getattr(fields, c) for c in ("text", "html", "id", "source", "url", "repo", "path", "language")}
    found: list[str] = []

    def walk(name: str, kind: pa.DataType) -> None:
        if pa.types.is_dictionary(kind):
            walk(name, kind.value_type)
        elif any(getattr(pa.types, f"is_{b}", lambda _t: False)(kind) for b in ("binary", "large_binary", "fixed_size_binary", "binary_view")):
            found.append(name)
        elif pa.types.is_struct(kind):
            for i in range(kind.num_fields):
                walk(f"{name}.{kind.field(i).name}", kind.field(i).type)
        elif pa.types.is_map(kind):
            walk(f"{name}[key]", kind.key_type)
            walk(f"{name}[value]", kind.item_type)
        elif hasattr(kind, "value_type"):  # lists of any kind
            walk(f"{name}[]", kind.value_type)

    for field in schema:
        if field.name not in mapped:
            walk(field.name, field.type)
    return found


def binary_note(column: str, first: Path) -> str:
    """The warning for a binary column that reaches ``meta`` (one per column a run)."""
    return (f"ingest: column {column!r} ({first}) holds binary data: meta keeps each value that is UTF-8 as text and "
            "any other as its size ({\"bytes\": N}), not its bytes (an image would be megabytes of text in every "
            "document, up to the mixture's shards); keep such data apart, with a reference (a path, a URL) in a column")


#: split names that mean "not for training" (Hugging Face's, and common ones)
_HELD_OUT = re.compile(r"(test|validation|valid|val|eval|evaluation|dev|heldout|held[-_]out)([-_]\d+(-of-\d+)?)?")
_HIVE = re.compile(r"([A-Za-z_][\w.-]*)=[^=]*")


def input_name_warnings(files: list[Path], shown: int = 3) -> list[str]:
    """What the inputs' names say that ingest does not act on: files of a held-out split (a folder or
    a file named ``test``, ``validation``…, or Hugging Face's ``test-00000-of-00001.parquet``) are read
    as training data; Hive partition folders' values (``lang=en``) are not columns of the documents.

    >>> [w.split(":")[0] for w in input_name_warnings([Path("d/test-00000-of-00001.parquet"), Path("d/lang=en/a.jsonl")])]
    ['ingest', 'ingest']
    """
    held, keys = [], set()
    for f in files:
        names = [f.parent.name.lower(), f.name.split(".")[0].lower()]  # its folder (a split folder) and its name
        if any(_HELD_OUT.fullmatch(n) for n in names):
            held.append(f)
        keys.update(m.group(1) for n in f.parts[:-1] if (m := _HIVE.fullmatch(n)))
    out = []
    if held:
        eg = ", ".join(str(f) for f in held[:shown]) + (", …" if len(held) > shown else "")
        out.append(f"ingest: {len(held):,} input file(s) are named as a held-out split ({eg}) and are read as training "
                   "data like the others; give only the splits you train on (a model trained on its test set scores falsely well)")
    if keys:
        out.append(f"ingest: the input folders are Hive partitions ({', '.join(sorted(k + '=…' for k in keys))}): the values in "
                   "folder names are not columns of the documents; write them into the files to keep them")
    return out
