"""JSONL lines decoded into records, for :func:`curation.ingest.records.rows_from_records`: a line
that is no record is an error (reason, detail) in its place, never skipped.

**Repeated keys.** A JSON object may write a key twice (``{"text": "a", "text": "b"}``, a writer
that appends a field it already wrote): JSON readers, and ingest, keep the last value. The record is
kept with it, and the keys are noted (:data:`REPEATED_KEYS`), counted in ``stats.json``
(``extra.repeated_keys``) and said in one warning when ingest finishes (:func:`repeated_note`).

>>> records, errors, numbers = decode_jsonl_lines([b'{"text": "a", "text": "b"}', b"", b"[1]"], 1)
>>> records[0]["text"], records[0][REPEATED_KEYS], errors[1][0], numbers
('b', ['text'], 'malformed_json', [1, 3])
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any

from curation.ingest.json_line import loads_repeated, too_large_line
from curation.ingest.language_field import figures_head
from curation.schema import DropReason

#: The key under which a decoded record carries the keys its line wrote twice: an object, not a
#: string, so that no field of a record can be it; ``rows_from_records`` takes it out before the
#: record's fields are read.
REPEATED_KEYS = object()
#: The private column of the parsed rows holding a record's repeated keys (``"text, id"``).
REPEATED = "_repeated_keys"
#: Key of the figures ingest records (stats.json ``extra``) of the records with a repeated key.
FIGURES = "repeated_keys"
#: A JSON escape of a UTF-16 surrogate: only lines with one need the (costly) check for a lone one.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
#: what a JSON line that is no object is, in JSON's words (not Python's ``NoneType``, ``list``, ``str``)
_JSON_LINE = {
    type(None): "null",
    list: "a JSON array",
    str: "a JSON string",
    int: "a JSON number",
    float: "a JSON number",
    bool: "a JSON boolean",
}


def decode_jsonl_lines(
    lines: Iterable[bytes | int], first_line: int, max_bytes: int = 0
) -> tuple[list[dict[Any, Any] | None], list[tuple[str, str] | None], list[int]]:
    """(records, errors, line numbers) of JSONL lines, for :func:`rows_from_records`; blank lines are ignored.
    A line over ``max_bytes`` (:func:`max_line_bytes`), or the length (an int) of one its reader did not hold,
    is ``too_large`` unparsed. A record whose line repeats a key holds them under :data:`REPEATED_KEYS`."""
    records: list[dict[Any, Any] | None] = []
    errors: list[tuple[str, str] | None] = []
    numbers: list[int] = []
    for offset, raw in enumerate(lines):
        if isinstance(raw, bytes) and (not raw or raw.isspace()):  # never raw.strip(): a copy of the line
            continue
        numbers.append(first_line + offset)
        if isinstance(raw, int) or (
            max_bytes and len(raw) > max_bytes
        ):  # parsing holds several times its size (json_line.py)
            records.append(None)
            errors.append(
                (DropReason.TOO_LARGE.value, too_large_line(raw if isinstance(raw, int) else len(raw), max_bytes))
            )
            continue
        try:
            line = str(
                memoryview(raw)[: len(raw) - raw.endswith(b"\n")], "utf-8"
            )  # no newline, and no copy of the bytes
        except UnicodeDecodeError as exc:
            records.append(None)
            errors.append((DropReason.INVALID_UTF8.value, f"invalid UTF-8 at byte {exc.start}"))
            continue
        try:
            obj, repeated = loads_repeated(
                line
            )  # an integer literal of over 4,300 digits kept as its digits (json_line.py)
        except json.JSONDecodeError as exc:
            records.append(None)
            if line[exc.pos : exc.pos + 1] == "\x00":  # a raw NUL byte (JSON writes one as \u0000): said as what it is
                errors.append(
                    (DropReason.NUL_BYTE.value, f"a raw NUL byte at column {exc.colno} (JSON escapes it as \\u0000)")
                )
            else:
                errors.append((DropReason.MALFORMED_JSON.value, f"{exc.msg} (column {exc.colno})"))
            continue
        except RecursionError:  # ~1,000 nested objects or arrays: deeper than Python's parser goes
            records.append(None)
            errors.append((DropReason.MALFORMED_JSON.value, "nested too deeply to parse (about 1,000 levels or more)"))
            continue
        if not isinstance(obj, dict):
            records.append(None)
            errors.append(
                (DropReason.MALFORMED_JSON.value, f"{_JSON_LINE.get(type(obj), 'a JSON value')}, not an object")
            )
            continue
        if _SURROGATE_ESCAPE.search(line) and (bad := _lone_surrogate(obj)):
            records.append(None)  # no UTF-8 encodes it: the record could never be written
            errors.append((DropReason.INVALID_UTF8.value, f"lone surrogate {bad} (a \\u escape no UTF-8 encodes)"))
            continue
        if repeated:
            obj[REPEATED_KEYS] = repeated
        records.append(obj)
        errors.append(None)
    return records, errors, numbers


def repeated_text(keys: list[str], shown: int = 5) -> str:
    """A record's repeated keys as its row notes them: the first ``shown``, each cut to 100 characters.

    >>> repeated_text(["text", "id"]), repeated_text(list("abcdefg"), 3), len(repeated_text(["k" * 120]))
    ('text, id', 'a, b, c, …', 101)
    """
    names = [k if len(k) <= 100 else k[:100] + "…" for k in keys[:shown]]
    return ", ".join(names + (["…"] if len(keys) > shown else []))


def repeated_note(stats: dict[str, Any]) -> str | None:
    """One line for an ingest whose records wrote a key twice (None otherwise)."""
    if (head := figures_head(stats, FIGURES)) is None:
        return None
    start, values = head
    return (
        f"{start} write a key twice in one object ({values}); each keeps the key's last value, as JSON readers do, "
        "and the earlier values are not read: check how the files were written (a field appended to records "
        "that already had it)"
    )


def _lone_surrogate(obj: Any) -> str | None:
    r"""The first lone surrogate in a decoded JSON record, as an escape; None if it has none.

    >>> _lone_surrogate(json.loads(r'{"a": ["\ud83d\ude00", "\ud800"]}'))
    '\\ud800'
    """
    try:
        json.dumps(obj, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError as exc:
        return f"\\u{ord(exc.object[exc.start]):04x}"
    return None
