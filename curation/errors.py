"""The error every configuration mistake raises, and the bounded ``repr`` its messages use."""

from __future__ import annotations

import difflib
import json
import reprlib
from pathlib import Path
from typing import Any


class ConfigError(ValueError):
    """A recipe or override value is wrong; the message says what to change."""


class DamagedFileError(ValueError):
    """A file a command reads is not as curate wrote it (cut, edited, not JSON or Parquet); the message names it."""


class ServiceError(RuntimeError):
    """A service outside curate that a stage calls (an LLM judge's OpenAI-compatible server) is
    unreachable or fails; the message says what it answered and what to check."""


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


def nearest(word: str, options: Any, cutoff: float = 0.6) -> str | None:
    """The option closest to ``word`` (a typo's intended name), or None when none is close.

    >>> nearest("wbe", ["web", "code"]), nearest("zzz", ["web"])
    ('web', None)
    """
    match = difflib.get_close_matches(str(word), sorted(str(o) for o in options), n=1, cutoff=cutoff)
    return match[0] if match else None


def check_names(key: str, values: Any, known: Any, what: str = "sources") -> None:
    """Raise ConfigError naming ``key`` when ``values`` has a name that is not one of ``known``
    (with the nearest known name, where one is close: a typo)."""
    known = list(known)
    bad = [v for v in values if v not in known]
    if bad:
        near = nearest(bad[0], known)
        hint = f" (did you mean {near!r}?)" if near else ""
        raise ConfigError(f"{key} has unknown {what} {brief(bad)}{hint}; choose from {', '.join(known)}")


def json_safe(value: Any) -> Any:
    """``value`` with every NaN or infinite float as None: strict JSON (a model card's metric that
    could not be computed, e.g. a correlation of constant scores) has no NaN.

    >>> json_safe({"spearman": float("nan"), "n": [1, float("inf")]})
    {'spearman': None, 'n': [1, None]}
    """
    import math

    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    return value
