"""Stage configuration: small frozen dataclasses loaded from the recipe, validated on load.

Fields that belong together may form a sub-config (:func:`nested`): a recipe gives it nested
(``tiers: {high: 90}``) or by its old flat keys (``tier_high: 90``); :meth:`Config.flat_dict` is
the flat view that config hashes and run records are computed from.

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
curation.errors.ConfigError: unknown key 'treshold' for Demo; valid keys: enabled, threshold
"""

from __future__ import annotations

import copy
import dataclasses
import hashlib
import json
import math
import typing
from typing import Any, TypeVar

import yaml

from curation.errors import ConfigError, brief
from curation.yaml_bounds import load_yaml

T = TypeVar("T", bound="Config")


#: Field metadata key of a nested sub-config; its value is the prefix of the sub-config's flat keys.
NESTED = "nested_prefix"


def nested(factory: typing.Callable[[], Any], flat_prefix: str = "") -> Any:
    """A field holding a sub-config (a frozen :class:`Config`) whose keys may also be given flat.

    ``tiers: TierPolicy = nested(TierPolicy, "tier_")`` accepts ``tiers: {high: 90}`` and the flat
    ``tier_high: 90`` alike; :meth:`Config.flat_dict` writes the flat names back, so a config keeps
    the hash it had before its fields were grouped. A nested mapping is merged onto the field's
    default, so it needs only the keys it changes.
    """
    return dataclasses.field(default_factory=factory, metadata={NESTED: flat_prefix})


@dataclasses.dataclass(frozen=True)
class Config:
    """A frozen dataclass with defaults, built from a mapping and validated (see the module docstring)."""

    def validate(self) -> None:
        """Raise :class:`ConfigError` on a bad value. Override in subclasses."""

    @classmethod
    def from_dict(cls: type[T], data: dict[str, Any] | None) -> T:
        data = nest_flat_keys(cls, dict(data or {}))
        fields = {f.name: f for f in dataclasses.fields(cls)}
        unknown = sorted(set(data) - set(fields))
        if unknown:
            raise ConfigError(
                f"unknown key {brief(unknown[0])} for {cls.__name__}; valid keys: {', '.join(sorted(fields))}"
            )
        hints = typing.get_type_hints(cls)
        kwargs = {}
        for k, v in data.items():
            if NESTED in fields[k].metadata:
                kwargs[k] = _build_nested(cls.__name__, k, v, fields[k].default_factory())
            else:
                kwargs[k] = coerce(cls.__name__, k, v, hints.get(k))
        obj = cls(**kwargs)
        obj.validate()
        return obj

    def to_dict(self) -> dict[str, Any]:
        """Every field, sub-configs as nested mappings."""
        return dataclasses.asdict(self)

    def flat_dict(self) -> dict[str, Any]:
        """Every field, sub-config keys flat under their prefixed names (what config hashes and
        run records are computed from, so grouping fields changes no hash)."""
        out: dict[str, Any] = {}
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if NESTED in f.metadata:
                out.update({f.metadata[NESTED] + k: v for k, v in value.flat_dict().items()})
            else:
                out[f.name] = copy.deepcopy(value)
        return out

    def replace(self: T, **changes: Any) -> T:
        """A copy with ``changes`` (flat or nested keys; a nested mapping changes only its keys)."""
        merged = self.to_dict()
        nested_names = {f.name for f in dataclasses.fields(self) if NESTED in f.metadata}
        for key, value in nest_flat_keys(type(self), changes).items():
            if key in nested_names and isinstance(value, dict):
                merged[key] = {**merged[key], **value}
            else:
                merged[key] = value
        return type(self).from_dict(merged)


@dataclasses.dataclass(frozen=True)
class StageConfig(Config):
    """Base of every stage config. Subclasses are frozen dataclasses with defaults."""

    enabled: bool = True


def nested_fields(cls: type) -> dict[str, tuple[str, type]]:
    """``{field: (flat prefix, sub-config class)}`` of ``cls``'s nested fields."""
    return {f.name: (f.metadata[NESTED], type(f.default_factory())) for f in dataclasses.fields(cls) if NESTED in f.metadata}


def nest_flat_keys(cls: type, data: dict[str, Any]) -> dict[str, Any]:
    """``data`` with the flat keys of ``cls``'s sub-configs moved into their nested mappings.

    >>> from curation.quality.code_tiers import TierPolicy
    >>> @dataclasses.dataclass(frozen=True)
    ... class Demo(StageConfig):
    ...     tiers: TierPolicy = nested(TierPolicy, "tier_")
    >>> nest_flat_keys(Demo, {"tier_high": 90, "tiers": {"low": 5}})
    {'tiers': {'low': 5, 'high': 90}}
    """
    out = dict(data)
    own = {f.name for f in dataclasses.fields(cls)}
    for name, (prefix, sub) in nested_fields(cls).items():
        keys = {f.name for f in dataclasses.fields(sub)}
        moved = {k[len(prefix):]: out.pop(k) for k in list(out)
                 if k not in own and k.startswith(prefix) and k[len(prefix):] in keys}
        if not moved:
            continue
        given = out.get(name)
        given = given.to_dict() if isinstance(given, Config) else dict(given or {}) if isinstance(given, dict) or given is None else given
        if not isinstance(given, dict):
            raise ConfigError(f"{cls.__name__}.{name} must be a mapping of keys ({', '.join(sorted(keys))}), not {brief(given)}")
        twice = sorted(set(moved) & set(given))
        if twice:
            raise ConfigError(f"{cls.__name__}: {prefix}{twice[0]} and {name}.{twice[0]} are the same key; give it once")
        out[name] = {**given, **moved}
    return out


def _build_nested(owner: str, key: str, value: Any, default: Config) -> Any:
    if isinstance(value, type(default)):
        return value
    if not isinstance(value, dict):
        raise ConfigError(f"{owner}.{key} must be a mapping of keys, not {brief(value)}")
    try:
        return type(default).from_dict({**default.to_dict(), **value})
    except ConfigError as exc:
        raise ConfigError(f"{owner}.{key}: {exc}") from exc


def check_range(cfg: Any, key: str, lo: float | None = None, hi: float | None = None) -> None:
    """Raise ConfigError unless ``lo <= cfg.key <= hi``."""
    value = getattr(cfg, key)
    if (lo is not None and value < lo) or (hi is not None and value > hi):
        raise ConfigError(
            f"{type(cfg).__name__}.{key} = {brief(value)} is out of range [{lo}, {hi}]; "
            f"set {key}=<value in range> in the recipe or on the command line"
        )


def check_choice(cfg: Any, key: str, choices: typing.Iterable[str]) -> None:
    """Raise ConfigError unless ``cfg.key`` is one of ``choices``."""
    value = getattr(cfg, key)
    choices = list(choices)
    if value not in choices:
        raise ConfigError(f"{type(cfg).__name__}.{key} = {brief(value)}; choose one of {brief(choices)}")


def config_hash(payload: Any) -> str:
    """Stable sha256 of a JSON-able payload (sorted keys).

    >>> config_hash({"b": 1, "a": 2}) == config_hash({"a": 2, "b": 1})
    True
    """
    blob = json.dumps(payload, sort_keys=True, default=str).encode()
    return hashlib.sha256(blob).hexdigest()


def yaml_problem(exc: Exception, line: bool = True) -> str:
    """What PyYAML found wrong and where (lines and columns from 1, as an editor shows them); its
    first line where it says no more."""
    mark, problem = getattr(exc, "problem_mark", None), getattr(exc, "problem", None)
    if mark is not None and problem:
        return f"line {mark.line + 1}, column {mark.column + 1}: {problem}" if line else f"column {mark.column + 1}: {problem}"
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__


def parse_override(item: str) -> tuple[list[str], Any]:
    """Parse ``a.b=value`` into (["a", "b"], value); the value is read as YAML.

    >>> parse_override("minhash_dedup.threshold=0.7")
    (['minhash_dedup', 'threshold'], 0.7)
    """
    if "=" not in item:
        raise ConfigError(f"override {brief(item)} must look like key=value (e.g. threshold=0.7)")
    key, raw = item.split("=", 1)
    if not key.strip():
        raise ConfigError(f"override {brief(item)} has an empty key")
    try:
        value = load_yaml(raw, f"override {brief(item)}") if raw != "" else ""
    except yaml.YAMLError as exc:
        raise ConfigError(f"override {brief(item)}: the value is not valid YAML ({yaml_problem(exc, line=False)}); "
                          "quote it or fix it") from None
    return key.strip().split("."), value


def set_path(tree: dict[str, Any], path: list[str], value: Any) -> None:
    """Set ``tree[path[0]][path[1]]… = value``, creating dicts on the way."""
    node = tree
    for part in path[:-1]:
        nxt = node.get(part)
        if nxt is None:
            nxt = node[part] = {}
        if not isinstance(nxt, dict):
            raise ConfigError(f"cannot set {'.'.join(path)}: {brief(part)} is not a mapping")
        node = nxt
    node[path[-1]] = value


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
