"""Stage configuration: small frozen dataclasses loaded from the recipe, validated on load.

>>> from dataclasses import dataclass
>>> @dataclass(frozen=True)
... class Demo(StageConfig):
...     threshold: float = 0.8
...     def validate(self) -> None:
...         check_range(self, "threshold", 0.0, 1.0)
>>> Demo.from_dict({"threshold": "0.7"}).threshold
0.7
>>> Demo.from_dict({"treshold": 0.7})
Traceback (most recent call last):
...
curation.config.ConfigError: unknown key 'treshold' for Demo; valid keys: enabled, threshold
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import typing
from typing import Any, TypeVar

import yaml

T = TypeVar("T", bound="StageConfig")


class ConfigError(ValueError):
    """A recipe or override value is wrong; the message says what to change."""


@dataclasses.dataclass(frozen=True)
class StageConfig:
    """Base of every stage config. Subclasses are frozen dataclasses with defaults."""

    enabled: bool = True

    def validate(self) -> None:
        """Raise :class:`ConfigError` on a bad value. Override in subclasses."""

    @classmethod
    def from_dict(cls: type[T], data: dict[str, Any] | None) -> T:
        data = dict(data or {})
        fields = {f.name: f for f in dataclasses.fields(cls)}
        unknown = sorted(set(data) - set(fields))
        if unknown:
            raise ConfigError(
                f"unknown key {unknown[0]!r} for {cls.__name__}; valid keys: {', '.join(sorted(fields))}"
            )
        hints = typing.get_type_hints(cls)
        kwargs = {k: _coerce(cls.__name__, k, v, hints.get(k)) for k, v in data.items()}
        obj = cls(**kwargs)
        obj.validate()
        return obj

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    def replace(self: T, **changes: Any) -> T:
        merged = {**self.to_dict(), **changes}
        return type(self).from_dict(merged)


def check_range(cfg: Any, key: str, lo: float | None = None, hi: float | None = None) -> None:
    """Raise ConfigError unless ``lo <= cfg.key <= hi``."""
    value = getattr(cfg, key)
    if (lo is not None and value < lo) or (hi is not None and value > hi):
        raise ConfigError(
            f"{type(cfg).__name__}.{key} = {value!r} is out of range [{lo}, {hi}]; "
            f"set {key}=<value in range> in the recipe or on the command line"
        )


def check_choice(cfg: Any, key: str, choices: typing.Iterable[str]) -> None:
    """Raise ConfigError unless ``cfg.key`` is one of ``choices``."""
    value = getattr(cfg, key)
    choices = list(choices)
    if value not in choices:
        raise ConfigError(f"{type(cfg).__name__}.{key} = {value!r}; choose one of {choices}")


def config_hash(payload: Any) -> str:
    """Stable sha256 of a JSON-able payload (sorted keys).

    >>> config_hash({"b": 1, "a": 2}) == config_hash({"a": 2, "b": 1})
    True
    """
    blob = json.dumps(payload, sort_keys=True, default=str).encode()
    return hashlib.sha256(blob).hexdigest()


def parse_override(item: str) -> tuple[list[str], Any]:
    """Parse ``a.b=value`` into (["a", "b"], value); the value is read as YAML.

    >>> parse_override("minhash_dedup.threshold=0.7")
    (['minhash_dedup', 'threshold'], 0.7)
    """
    if "=" not in item:
        raise ConfigError(f"override {item!r} must look like key=value (e.g. threshold=0.7)")
    key, raw = item.split("=", 1)
    if not key.strip():
        raise ConfigError(f"override {item!r} has an empty key")
    try:
        value = yaml.safe_load(raw) if raw != "" else ""
    except yaml.YAMLError as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ConfigError(f"override {item!r}: the value is not valid YAML ({first}); quote it or fix it") from None
    return key.strip().split("."), value


def set_path(tree: dict[str, Any], path: list[str], value: Any) -> None:
    """Set ``tree[path[0]][path[1]]… = value``, creating dicts on the way."""
    node = tree
    for part in path[:-1]:
        nxt = node.get(part)
        if nxt is None:
            nxt = node[part] = {}
        if not isinstance(nxt, dict):
            raise ConfigError(f"cannot set {'.'.join(path)}: {part!r} is not a mapping")
        node = nxt
    node[path[-1]] = value


def _coerce(owner: str, key: str, value: Any, hint: Any) -> Any:
    if hint is None or value is None:
        return value
    origin = typing.get_origin(hint)
    if origin is typing.Union or str(origin) == "<class 'types.UnionType'>":
        args = [a for a in typing.get_args(hint) if a is not type(None)]
        if len(args) == 1:
            return _coerce(owner, key, value, args[0])
        return value
    try:
        if hint is bool:
            if isinstance(value, str):
                low = value.lower()
                if low in {"true", "yes", "1", "on"}:
                    return True
                if low in {"false", "no", "0", "off"}:
                    return False
                raise ValueError(value)
            return bool(value)
        if hint is int:
            if isinstance(value, float) and not value.is_integer():
                raise ValueError(value)
            return int(value)
        if hint is float:
            return float(value)
        if hint is str:
            return str(value)
        if origin in (tuple, list):
            if isinstance(value, (str, bytes)) or not isinstance(value, typing.Iterable):
                value = [value]
            args = typing.get_args(hint)
            inner = args[0] if args else None
            items = [_coerce(owner, key, v, inner) for v in value]
            return tuple(items) if origin is tuple else items
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"{owner}.{key} = {value!r} is not a valid {hint}") from exc
    return value
