"""Reading a recipe value as the type of its config field (:func:`coerce`)."""

from __future__ import annotations

import math
import typing
from typing import Any

from curation.errors import ConfigError, brief


def coerce(owner: str, key: str, value: Any, hint: Any) -> Any:
    """``value`` as type ``hint``, or :class:`ConfigError` naming ``owner.key``: a bool is no number,
    a number is finite, a list or mapping is never read as a scalar (nor a mapping as a list)."""
    if hint is None or value is None:
        return value
    origin = typing.get_origin(hint)
    if origin is typing.Union or str(origin) == "<class 'types.UnionType'>":
        args = [a for a in typing.get_args(hint) if a is not type(None)]
        if len(args) == 1:
            return coerce(owner, key, value, args[0])
        return value

    def bad(why: str = "") -> ConfigError:
        name = getattr(hint, "__name__", None) or str(hint)
        return ConfigError(f"{owner}.{key} = {brief(value)} is not a valid {name}{why}")

    try:
        if hint is bool:
            if isinstance(value, bool):
                return value
            if isinstance(value, str):
                low = value.lower()
                if low in {"true", "yes", "1", "on"}:
                    return True
                if low in {"false", "no", "0", "off"}:
                    return False
            if isinstance(value, int) and value in (0, 1):
                return bool(value)
            raise bad(" (give true or false)")
        if hint in (int, float):
            if isinstance(value, (bool, list, tuple, dict, set)):
                raise bad()
            number = float(value) if hint is float else value
            if isinstance(number, str):
                number = float(number) if any(c in number for c in ".eEnN") else int(number, 10)
            if isinstance(number, float) and not math.isfinite(number):
                raise bad(" (give a finite number)")
            if hint is int:
                if isinstance(number, float) and not number.is_integer():
                    raise bad(" (give a whole number)")
                return int(number)
            return float(number)
        if hint is str:
            if isinstance(value, str):
                return value
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                return str(value)
            raise bad(" (give text)")
        if origin in (tuple, list):
            if isinstance(value, dict):
                raise bad(" (give a list)")
            if isinstance(value, (str, bytes)) or not isinstance(value, typing.Iterable):
                value = [value]
            args = typing.get_args(hint)
            inner = args[0] if args else None
            items = [coerce(owner, key, v, inner) for v in value]
            return tuple(items) if origin is tuple else items
        if origin is dict and not isinstance(value, dict):
            raise bad(" (give a mapping of key: value)")
    except (TypeError, ValueError, OverflowError) as exc:
        if isinstance(exc, ConfigError):
            raise
        raise bad() from None
    return value
