"""The error every configuration mistake raises, and the bounded ``repr`` its messages use."""

from __future__ import annotations

import json
import reprlib
from pathlib import Path
from typing import Any


class ConfigError(ValueError):
    """A recipe or override value is wrong; the message says what to change."""


class DamagedFileError(ValueError):
    """A file a command reads is not as curate wrote it (cut, edited, not JSON or Parquet); the message names it."""


#: What a message about a damaged file of a run tells the user to do.
DAMAGED_HINT = "it was cut or edited after curate wrote it: `curate verify RUN` lists what changed; re-run the command that wrote it"


def read_json_file(path: str | Path) -> Any:
    """The JSON in ``path``, or :class:`DamagedFileError` naming the file (a missing file stays FileNotFoundError)."""
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as exc:
        raise DamagedFileError(f"{path} cannot be read as JSON ({exc}); {DAMAGED_HINT}") from None


_BRIEF = reprlib.Repr()
_BRIEF.maxstring, _BRIEF.maxother, _BRIEF.maxlist, _BRIEF.maxtuple, _BRIEF.maxdict, _BRIEF.maxlevel = 80, 80, 6, 6, 6, 3


def brief(value: Any) -> str:
    """A bounded ``repr`` for messages: a message never formats an unbounded value.

    >>> brief(list(range(100)))
    '[0, 1, 2, 3, 4, 5, ...]'
    """
    return _BRIEF.repr(value)
