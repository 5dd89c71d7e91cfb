"""The error every configuration mistake raises, and the bounded ``repr`` its messages use."""

from __future__ import annotations

import reprlib
from typing import Any


class ConfigError(ValueError):
    """A recipe or override value is wrong; the message says what to change."""


_BRIEF = reprlib.Repr()
_BRIEF.maxstring, _BRIEF.maxother, _BRIEF.maxlist, _BRIEF.maxtuple, _BRIEF.maxdict, _BRIEF.maxlevel = 80, 80, 6, 6, 6, 3


def brief(value: Any) -> str:
    """A bounded ``repr`` for messages: a message never formats an unbounded value.

    >>> brief(list(range(100)))
    '[0, 1, 2, 3, 4, 5, ...]'
    """
    return _BRIEF.repr(value)
