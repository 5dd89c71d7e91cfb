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
import typing
from typing import Any, TypeVar

import yaml

from curation.config_coerce import coerce
from curation.errors import ConfigError, brief, nearest
from curation.yaml_bounds import load_yaml

__all__ = ["MERGE", "Config", "ConfigError", "StageConfig", "brief", "check_choice", "check_entries", "check_range", "coerce", "config_hash",
           "merge_tables", "nest_flat_keys", "nested", "nested_fields", "parse_override", "set_path", "yaml_problem"]

T = TypeVar("T", bound="Config")


#: Field metadata key of a nested sub-config; its value is the prefix of the sub-config's flat keys.
NESTED = "nested_prefix"
#: Field metadata key of a table whose entries set to null stay null (their meaning is the config's own:
#: ``mixture.phases``' null drops a phase of the built-in five).
KEEP_NULL = "keep_null_entries"
#: Field metadata key of a table not merged deep: ``"entry"``, an entry is one rule a recipe's replaces whole
#: (``tier_overrides``); ``"whole"``, a recipe's table replaces the default (``levels``, one partition).
MERGE = "merge"


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
    def from_dict(cls: type[T], data: dict[str, Any] | None, base: Any = None) -> T:
        """The config of ``data``; a table (a mapping field) is merged by name over ``base``'s (default:
        the field's default) by :func:`merge_tables`, and so is a sub-config's mapping."""
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
            default = getattr(base, k) if base is not None else _field_default(fields[k])
            if NESTED in fields[k].metadata:
                kwargs[k] = _build_nested(cls.__name__, k, v, default, fields[k].metadata[NESTED])
            else:
                how = fields[k].metadata.get(MERGE, "deep")
                if isinstance(v, dict) and isinstance(default, dict):  # a whole table: its null entries are left out
                    v = merge_tables({} if how == "whole" else default, v, keep_null=fields[k].metadata.get(KEEP_NULL, False),
                                     deep=how == "deep")
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
        return type(self).from_dict(merged, base=self)


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


def _field_default(field: dataclasses.Field) -> Any:
    if field.default_factory is not dataclasses.MISSING:
        return field.default_factory()
    return None if field.default is dataclasses.MISSING else field.default


def merge_tables(base: dict[str, Any], over: dict[str, Any], keep_null: bool = False, deep: bool = True) -> dict[str, Any]:
    """``over`` merged into table ``base`` by name, deep: an entry that is a mapping in both is merged
    the same way (``deep=False``: replaced whole), an entry set to None is removed (kept as None with
    ``keep_null``: for a merge the config merges again), any other value replaces. Entries of
    ``over`` come first, in its order, then the rest of ``base``.

    >>> merge_tables({"JSON": {"min": 50, "max": 5000}, "CSV": {"max": 5000}}, {"JSON": {"min": 10}, "CSV": None})
    {'JSON': {'min': 10, 'max': 5000}}
    >>> merge_tables({"JSON": {"mode": "absolute", "high": 11}, "TOML": {"mode": "absolute"}}, {"JSON": {"mode": "percentile"}}, deep=False)
    {'JSON': {'mode': 'percentile'}, 'TOML': {'mode': 'absolute'}}
    """
    out: dict[str, Any] = {}
    for name, value in over.items():
        old = base.get(name)
        if value is None:
            if keep_null:
                out[name] = None
        elif isinstance(value, dict) and isinstance(old, dict) and deep:
            out[name] = merge_tables(old, value, keep_null)
        else:
            out[name] = copy.deepcopy(value)
    out.update({name: copy.deepcopy(value) for name, value in base.items() if name not in over})
    return out


def _build_nested(owner: str, key: str, value: Any, default: Config, prefix: str) -> Any:
    if isinstance(value, type(default)):
        return value
    if not isinstance(value, dict):
        raise ConfigError(f"{owner}.{key} must be a mapping of keys, not {brief(value)}")
    try:
        return type(default).from_dict({**default.to_dict(), **value}, base=default)
    except ConfigError as exc:
        if getattr(exc, "range", None):  # name the key a recipe writes: tier_high (or tiers.high), not high
            field, value, lo, hi = exc.range
            raise ConfigError(f"{owner}.{key}.{field} = {brief(value)} is out of range [{lo}, {hi}]; set {prefix}{field}=<value "
                              f"in range> (or {key}.{field}) in the recipe or on the command line") from exc
        raise ConfigError(f"{owner}.{key}: {exc}") from exc


def check_range(cfg: Any, key: str, lo: float | None = None, hi: float | None = None) -> None:
    """Raise ConfigError unless ``lo <= cfg.key <= hi``."""
    value = getattr(cfg, key)
    if (lo is not None and value < lo) or (hi is not None and value > hi):
        exc = ConfigError(
            f"{type(cfg).__name__}.{key} = {brief(value)} is out of range [{lo}, {hi}]; "
            f"set {key}=<value in range> in the recipe or on the command line"
        )
        exc.range = (key, value, lo, hi)  # type: ignore[attr-defined]  # a sub-config's owner names its recipe key
        raise exc


def check_entries(label: str, table: typing.Mapping[str, Any], keys: typing.Iterable[str]) -> None:
    """Raise ConfigError for an entry of table ``label`` that is not a mapping or has a key outside
    ``keys`` (a typo such as ``data_files.JSON.min_char`` would otherwise be a limit nothing reads).

    >>> check_entries("data_files", {"JSON": {"min_char": 10}}, ["min_chars", "max_chars"])
    Traceback (most recent call last):
    ...
    curation.errors.ConfigError: data_files.JSON has no key 'min_char'; did you mean 'min_chars'? Its keys: max_chars, min_chars
    """
    keys = sorted(keys)
    for name, body in table.items():
        if not isinstance(body, dict):
            raise ConfigError(f"{label}.{name} = {brief(body)}: give a mapping of its keys ({', '.join(keys)})")
        for key in body:
            if key not in keys:
                near = nearest(str(key), keys, cutoff=0.5)
                raise ConfigError(f"{label}.{name} has no key {brief(key)}{f'; did you mean {near!r}?' if near else ''} "
                                  f"Its keys: {', '.join(keys)}")


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
