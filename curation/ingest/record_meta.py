"""A record's id and ``meta`` as ingest writes them: the id as text (a NaN id is no id), and the
record's own ``meta`` with its other fields, none lost and none written over another.

>>> id_text(3.0), merged_meta({"x": 1}, {"x": 2})
('3', {'x': 1, 'field.x': 2})
"""

from __future__ import annotations

import json
import math
from typing import Any

from curation.errors import json_safe


def id_text(raw: Any) -> str | None:
    """A record's id as text; None (an id made from the text) for a missing, empty, NaN or infinite one.
    A whole float (a Parquet float column) is its integer: 2.0 is ``"2"``.

    >>> id_text(2.0), id_text(float("nan")), id_text("a"), id_text(2.5), id_text("")
    ('2', None, 'a', '2.5', None)
    """
    if raw is None or raw == "":
        return None
    if isinstance(raw, float):
        return None if not math.isfinite(raw) else str(int(raw)) if raw.is_integer() else str(raw)
    return str(raw)


def merged_meta(meta: Any, extra: dict[str, Any]) -> dict[str, Any]:
    """A record's ``meta`` with its other fields (``extra``). A ``meta`` object (or a string of one)
    gives its keys; any other ``meta`` (a list, a number, a string that is no JSON object) is kept
    under ``meta``. A field whose name ``meta`` already has is kept as ``field.<name>``, never over it.

    >>> merged_meta({"x": 1}, {"x": 2, "y": 3}), merged_meta([1, 2], {"y": 3})
    ({'x': 1, 'field.x': 2, 'y': 3}, {'meta': [1, 2], 'y': 3})
    """
    if isinstance(meta, str) and meta:
        try:
            parsed = json.loads(meta)
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
    where ``json.dumps`` wrote ``NaN``, which strict JSON readers refuse."""
    try:
        return json.dumps(extra, sort_keys=True, ensure_ascii=False, default=str, allow_nan=False)
    except ValueError:
        return json.dumps(json_safe(extra), sort_keys=True, ensure_ascii=False, default=str)
