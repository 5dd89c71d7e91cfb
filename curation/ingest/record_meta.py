"""A record's id and ``meta`` as ingest writes them: the id as text (a NaN id is no id, a binary one
that is not UTF-8 its hex), and the record's own ``meta`` with its other fields, none lost and none
written over another (binary values as their size).

>>> id_text(3.0), merged_meta({"x": 1}, {"x": 2})
('3', {'x': 1, 'field.x': 2})
"""

from __future__ import annotations

import itertools
import json
import math
from typing import Any

from curation.errors import json_safe
from curation.ingest.json_line import loads
from curation.ingest.language_field import figures_head


def id_text(raw: Any) -> str | None:
    """A record's id as text; None (an id made from the text) for a missing, empty, NaN or infinite one.
    A whole float (a Parquet float column) is its integer: 2.0 is ``"2"``.

    >>> id_text(2.0), id_text(float("nan")), id_text("a"), id_text(2.5), id_text("")
    ('2', None, 'a', '2.5', None)

    A binary id (Parquet ``BYTE_ARRAY`` without the UTF8 annotation, a digest) is its text when it is
    UTF-8, else its bytes in lowercase hex:

    >>> id_text(b"a1"), id_text(b"\\xff1")
    ('a1', 'ff31')
    """
    if raw is None or raw == "" or raw == b"":
        return None
    if isinstance(raw, bytes):  # a binary id column: its text when UTF-8, else its bytes in hex (never "b'\\xff1'")
        return _utf8_or(raw, raw.hex)
    if isinstance(raw, float):
        return None if not math.isfinite(raw) else str(int(raw)) if raw.is_integer() else str(raw)
    return str(raw)


#: curate's own id column: a record with no ``id`` takes its id from it (curate's output read again keeps its ids)
CURATE_ID = "doc_id"


def id_field(rec: dict[str, Any], field: str) -> str:
    """The field a record's id comes from: ``field`` (``ingest.fields.id``); where that is the default
    ``id`` and the record has none (missing, null or empty), its ``doc_id`` when it has one of a single
    value (curate's own column, as in curate's output read again). With both, ``id`` is the id and
    ``doc_id`` stays in ``meta``.

    >>> id_field({"id": 1, "doc_id": "a"}, "id"), id_field({"doc_id": "a"}, "id"), id_field({"doc_id": "a"}, "uid")
    ('id', 'doc_id', 'uid')
    >>> id_field({"id": None, "doc_id": 7}, "id"), id_field({"doc_id": {"a": 1}}, "id"), id_field({"doc_id": None}, "id")
    ('doc_id', 'id', 'id')
    """
    if field != "id" or rec.get("id") not in (None, "", b""):
        return field
    value = rec.get(CURATE_ID)
    usable = isinstance(value, (str, bytes, int, float)) and not isinstance(value, bool) and value not in ("", b"")
    return CURATE_ID if usable else field


def merged_meta(meta: Any, extra: dict[str, Any]) -> dict[str, Any]:
    """A record's ``meta`` with its other fields (``extra``). A ``meta`` object (or a string of one)
    gives its keys; any other ``meta`` (a list, a number, a string that is no JSON object) is kept
    under ``meta``. A field whose name ``meta`` already has is kept as ``field.<name>``, never over it.

    >>> merged_meta({"x": 1}, {"x": 2, "y": 3}), merged_meta([1, 2], {"y": 3})
    ({'x': 1, 'field.x': 2, 'y': 3}, {'meta': [1, 2], 'y': 3})
    """
    if isinstance(meta, bytes):  # a binary meta column of a JSON object is that object
        meta = _utf8_or(meta, lambda: meta)
    if isinstance(meta, str) and meta:
        try:
            parsed = loads(meta)  # an integer of over 4,300 digits kept as its digits
            meta = parsed if isinstance(parsed, dict) else meta
        except (json.JSONDecodeError, RecursionError):  # not JSON, or too deeply nested to parse: kept as the text it is
            pass
    out: dict[str, Any] = dict(meta) if isinstance(meta, dict) else {} if meta is None or (isinstance(meta, str) and not meta) else {"meta": meta}
    for key, value in extra.items():
        name = key
        while name in out:
            name = f"field.{name}"
        out[name] = value
    return out


def meta_json(extra: dict[str, Any]) -> str:
    """``meta`` as strict JSON: a NaN or infinite value (a pandas column of floats with gaps) is null,
    where ``json.dumps`` wrote ``NaN``, which strict JSON readers refuse; a binary value
    (:func:`binary_value`) is its text when UTF-8, else its size, never its ``repr()``.

    >>> meta_json({"jpg": b"\\xff\\xd8\\xff", "title": b"caf\\xc3\\xa9", "n": float("nan")})
    '{"jpg": {"bytes": 3}, "n": null, "title": "café"}'
    """
    try:
        return json.dumps(extra, sort_keys=True, ensure_ascii=False, default=binary_value, allow_nan=False)
    except ValueError:
        return json.dumps(json_safe(extra), sort_keys=True, ensure_ascii=False, default=binary_value)


#: The private column of the parsed rows naming the fields a row's ``meta`` left out (:func:`bounded_meta`).
LEFT_OUT = "_meta_left_out"
#: Key of the figures ingest records (stats.json ``extra``) of the records whose meta left fields out.
FIGURES = "meta_left_out"
#: The key of ``meta`` naming the fields left out, each with its size in characters
NOTE = "meta_left_out"
#: The longest field name a note or a warning writes (characters)
_NAME = 100


def bounded_meta(extra: dict[str, Any], limit: int) -> tuple[str | None, str | None]:
    """(``meta`` as JSON, the names of the fields left out or None) for a record's ``meta`` fields
    ``extra``, at most ``limit`` characters (0: no bound). Over it, the largest fields are left out,
    one at a time, until the rest fits, and ``meta`` names each under :data:`NOTE` with its size in
    characters (``_meta_left_out`` where a field has that name; past 100 fields, the others summed in one
    entry, and where the note alone is over the bound, that entry alone). The text has its own bound
    (``max_chars``).

    >>> bounded_meta({"title": "a", "raw": "x" * 50}, 60)
    ('{"meta_left_out": {"raw": 59}, "title": "a"}', 'raw')
    >>> bounded_meta({"title": "a"}, 60), bounded_meta({}, 60)
    (('{"title": "a"}', None), (None, None))
    """
    text = meta_json(extra) if extra else None
    if not limit or text is None or len(text) <= limit:
        return text, None
    sizes = {k: len(meta_json({k: v})) - 2 for k, v in extra.items()}  # '"k": v', without the braces
    note = NOTE
    while note in extra:
        note = "_" + note
    kept, left, size = dict(extra), {}, len(text)
    for key in sorted(sizes, key=lambda k: (-sizes[k], k)):
        del kept[key]
        left[key] = sizes[key]
        size -= sizes[key] + 2  # and its ', '
        estimate = size + len(note) + 6 + _note_size(left)  # with the note, about: written only when it may fit
        if estimate <= limit:
            text = meta_json({**kept, note: _named(left)})
            if len(text) <= limit:
                break
            size += len(text) - estimate  # the estimate's error: no write again until that much more is left out
    else:  # nothing left to leave out: the note alone, and past the bound, its summary alone
        text = meta_json({note: _named(left)})
        if len(text) > limit:
            text = meta_json({note: _named(left, 0)})
    return text, ", ".join(list(_named(left))[:5]) + (", …" if len(left) > 5 else "")


#: the fields a note names one by one (the largest); the others are one entry, "… (N more fields)": their characters
_NOTED = 100


def _note_size(left: dict[str, int]) -> int:
    """About how many characters :func:`_named` of ``left`` takes as JSON."""
    return sum(min(len(k), _NAME) + 12 for k in itertools.islice(left, _NOTED)) + (40 if len(left) > _NOTED else 0)


def _named(left: dict[str, int], noted: int = _NOTED) -> dict[str, int]:
    """The note: the first ``noted`` fields of ``left`` (the largest) by name, cut to :data:`_NAME`
    characters, and the others as one entry with their characters summed.

    >>> _named({"a": 9, "b": 5, "c": 4}, 1)
    {'a': 9, '… (2 more fields)': 9}
    """
    named = {(k if len(k) <= _NAME else k[:_NAME] + "…"): n for k, n in list(left.items())[:noted]}
    rest = list(left.values())[noted:]
    if rest:
        named[f"… ({len(rest)} more field{'s' * (len(rest) > 1)})"] = sum(rest)
    return named


def meta_note(stats: dict[str, Any]) -> str | None:
    """One line for an ingest that left fields out of some records' ``meta`` (None otherwise)."""
    if (head := figures_head(stats, FIGURES)) is None:
        return None
    start, values = head
    limit = stats["extra"][FIGURES].get("max_meta_chars", 0)
    return (f"{start} have meta over ingest.max_meta_chars ({limit:,} characters): their largest fields are left out of "
            f"meta ({values}), which names each under {NOTE!r} with its size; the documents are kept. Raise "
            "ingest.max_meta_chars to keep such fields, or keep the data apart with a reference in a field")


def binary_value(value: Any) -> Any:
    """A value ``json`` cannot write, as ``meta`` keeps it: bytes (a Parquet or ``datasets`` binary
    column: an image, a digest) are their text when UTF-8, else ``{"bytes": <size>}``: the repr of a
    1 MB image would be 3.5 MB of ``meta`` in every document, up to the mixture's shards. Anything else
    (a timestamp, a decimal) is its ``str()``."""
    if isinstance(value, (bytes, bytearray, memoryview)):
        data = bytes(value)
        return _utf8_or(data, lambda: {"bytes": len(data)})
    return str(value)


def _utf8_or(data: bytes, other: Any) -> Any:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return other()
