"""A recipe's schema, derived, never hand-kept: the embedded base recipe gives the top-level keys
(``name``, ``seed``, ``cluster`` …, plus the ``global_keys`` stages declare), the dispatch table the
stage names, and each stage's config dataclass its keys — nested sub-configs included, under their
nested names or their old flat names (``code_quality.tiers.high`` or ``code_quality.tier_high``).

Unknown keys are errors naming the closest valid one. A new entry in a table of named sub-configs
(``mixture.phases``, ``code_quality.rules.data_files``) needs ``new: true`` in a recipe file; an
override that adds a key needs a leading ``+`` (Hydra's convention), so a typo never creates a
phase (maps that are empty by default, such as ``ingest.fields``, take new keys as they are)."""

from __future__ import annotations

import copy
import dataclasses
import functools
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from curation.config import Config, ConfigError, brief, merge_tables, nest_flat_keys, nested_fields, yaml_problem
from curation.yaml_bounds import load_yaml, read_text
from pipelines.recipe_hints import hint, top_hint

DEFAULT_RECIPE = "glm45.yaml"
#: Flag that lets a recipe file add an entry to a table of named sub-configs.
NEW_FLAG = "new"


def default_recipe_path() -> Path:
    return Path(str(resources.files("pipelines") / "configs" / DEFAULT_RECIPE))


def base_recipe() -> dict[str, Any]:
    """The embedded GLM-4.5 recipe (a fresh copy)."""
    return copy.deepcopy(_base())


@functools.lru_cache(maxsize=1)
def _base() -> dict[str, Any]:
    return read_yaml(default_recipe_path())


#: Seeds feed numpy's generators and hash functions: whole numbers in [0, 2**32 - 1].
MAX_SEED = 2**32 - 1


def read_yaml(src: Path) -> dict[str, Any]:
    try:
        recipe = load_yaml(read_text(src), f"recipe {src}")
    except OSError as exc:
        raise ConfigError(f"recipe {src} cannot be read ({exc.strerror or exc})") from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"recipe {src} is not valid YAML ({yaml_problem(exc)}); fix the file") from exc
    if recipe is None:
        raise ConfigError(f"recipe {src} is empty; write only what differs from {default_recipe_path()}, which it is merged over, "
                          "e.g. 'name: my-recipe' and 'stages: {code_quality: {tier_high: 85}}' (README, Your own recipe file)")
    if not isinstance(recipe, dict):
        raise ConfigError(f"recipe {src} must be a mapping (name, seed, stages: …), not {type(recipe).__name__}")
    return recipe


def check_recipe(recipe: Any, where: str, new_ok: bool = False, known: dict[str, Any] | None = None) -> None:
    """Raise :class:`ConfigError` when ``recipe`` has an unknown key or a wrong shape (``known``: a recipe
    whose tables' entries also exist, e.g. the one an override merges into; the shipped one's always do)."""
    if not isinstance(recipe, dict):
        raise ConfigError(f"{where}: a recipe must be a mapping (name, seed, stages: …), not {type(recipe).__name__}")
    base = base_recipe()
    allowed = set(base) | global_keys() | {"recipe_path"}
    for key, value in recipe.items():
        if not isinstance(key, str):
            raise ConfigError(f"{where}: top-level key {brief(key)} is not a name")
        if key == "name" and not (isinstance(value, str) and value.strip() and len(value) <= 200):
            raise ConfigError(f"{where}: name = {brief(value)}: give the recipe's name as text (1–200 characters)")
        if key == "seed" and not (isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= MAX_SEED):
            raise ConfigError(f"{where}: seed = {brief(value)}: give a whole number from 0 to {MAX_SEED}")
        if key not in allowed:
            raise ConfigError(f"{where}: unknown top-level key {brief(key)}{top_hint(key, owners(key), set(base) | global_keys(), stage_names())}")
        if key == "stages":
            _check_stages(value, where, new_ok, (known or {}).get("stages") or {})
        elif isinstance(base.get(key), dict):
            _check_like(value, base[key], f"{where}: {key}")


def owners(key: str) -> list[str]:
    """The stages that have ``key`` (a field or a nested field's flat name)."""
    return [s for s in sorted(stage_names()) if key in config_keys(_config_cls(s))]


def _check_stages(stages: Any, where: str, new_ok: bool, known: dict[str, Any]) -> None:
    if stages is None:
        return
    if not isinstance(stages, dict):
        raise ConfigError(f"{where}: 'stages' must be a mapping of stage name → keys, not {brief(stages)}")
    for name, section in stages.items():
        if name not in stage_names():
            raise ConfigError(f"{where}: unknown stage {brief(name)}{hint(name, stage_names())}")
        if section is None:
            continue
        if not isinstance(section, dict):
            raise ConfigError(
                f"{where}: stages.{name} must be a mapping of keys (e.g. {name}: {{enabled: false}}), not {brief(section)}"
            )
        base = ((base_recipe().get("stages") or {}).get(name) or {})
        if isinstance(known.get(name), dict):  # nested form both, so a flat key and its nested one merge
            base = merge_tables(nest_flat_keys(_config_cls(name), base), nest_flat_keys(_config_cls(name), known[name]))
        _check_section(_config_cls(name), _defaults(name), section, base, f"stages.{name}", where, new_ok)


def _check_section(cls: type, default: Any, section: dict[str, Any], base: Any, label: str, where: str, new_ok: bool) -> None:
    try:
        section = nest_flat_keys(cls, section)
        base = nest_flat_keys(cls, base if isinstance(base, dict) else {})
    except ConfigError as exc:
        raise ConfigError(f"{where}: {label}: {exc}") from exc
    subs = nested_fields(cls)
    for key, value in section.items():
        if key not in _names(cls):
            raise ConfigError(f"{where}: unknown key {brief(key)} in {label}{hint(key, config_keys(cls))}")
        table = getattr(default, key)
        if key in subs:
            if value is not None and not isinstance(value, (dict, Config)):
                raise ConfigError(f"{where}: {label}.{key} must be a mapping of keys ({', '.join(sorted(_names(subs[key][1])))})")
            if isinstance(value, dict):
                _check_section(subs[key][1], table, value, base.get(key), f"{label}.{key}", where, new_ok)
            continue
        if not new_ok and _is_table(table) and isinstance(value, dict):
            known = set(table) | set(base.get(key) or {})
            for entry, body in value.items():
                flagged = isinstance(body, dict) and body.get(NEW_FLAG) is True
                if entry not in known and not flagged:
                    raise ConfigError(
                        f"{where}: {label}.{key} has no entry {brief(entry)}{hint(entry, known)} "
                        f"(to add one, give it '{NEW_FLAG}: true')"
                    )


def _check_like(value: Any, base: dict[str, Any], where: str) -> None:
    """A top-level section shaped like the base recipe's (closed when the base lists keys)."""
    if value is None or not base:
        return
    if not isinstance(value, dict):
        raise ConfigError(f"{where} must be a mapping like the base recipe's ({', '.join(base)}), not {brief(value)}")
    for key, sub in value.items():
        if key not in base:
            raise ConfigError(f"{where} has an unknown key {brief(key)}{hint(key, set(base))}")
        if isinstance(base[key], dict):
            _check_like(sub, base[key], f"{where}.{key}")


def normalise(recipe: dict[str, Any]) -> dict[str, Any]:
    """``recipe`` with every stage section in nested form and the ``new: true`` flags dropped
    (checked already; the stage configs do not know them)."""
    for name, section in (recipe.get("stages") or {}).items():
        if isinstance(section, dict) and name in stage_names():
            recipe["stages"][name] = section = nest_flat_keys(_config_cls(name), section)
            _strip_new_flags(_config_cls(name), _defaults(name), section)
    return recipe


def _strip_new_flags(cls: type, default: Any, section: dict[str, Any]) -> None:
    subs = nested_fields(cls)
    for key, value in section.items():
        if key in subs and isinstance(value, dict):
            _strip_new_flags(subs[key][1], getattr(default, key), value)
        elif key in _names(cls) and _is_table(getattr(default, key)) and isinstance(value, dict):
            for body in value.values():
                if isinstance(body, dict):
                    body.pop(NEW_FLAG, None)


def override_path(recipe: dict[str, Any], keys: list[str], stage: str | None, item: str, plus: bool) -> list[str]:
    """The full recipe path an override sets (flat sub-config keys rewritten to their nested path);
    every key on it must exist unless ``+`` adds it."""
    def fail(msg: str) -> ConfigError:
        return ConfigError(f"override {brief(item)}: {msg}")

    first = keys[0]
    top = set(base_recipe()) | global_keys()
    own = stage is not None and first == stage and len(keys) > 1 and keys[1] in config_keys(_config_cls(stage))
    if stage is not None and first in config_keys(_config_cls(stage)) and not own:  # own: min_words.min_words=…
        path = ["stages", stage, *keys]
    elif first == "stages":
        path = list(keys)
    elif first in stage_names():
        path = ["stages", *keys]
    elif first in top:
        path = list(keys)
    else:
        options = top | set(stage_names()) | (config_keys(_config_cls(stage)) if stage else set())
        raise fail(f"unknown key {brief(first)}{top_hint(first, owners(first), options, stage_names())}")
    if path[0] != "stages":
        _walk(recipe.get(path[0], base_recipe().get(path[0])), path, 1, plus, fail)
        return path
    if len(path) < 3:
        if len(path) == 2 and path[1] in stage_names():
            return path
        name = path[1] if len(path) > 1 else ""
        raise fail(f"unknown stage {brief(name)}{hint(name, stage_names())}" if name else "name a stage: stages.<stage>.<key>=…")
    name = path[1]
    if name not in stage_names():
        raise fail(f"unknown stage {brief(name)}{hint(name, stage_names())}")
    cls, default, section, i = _config_cls(name), _defaults(name), recipe["stages"].get(name) or {}, 2
    while True:  # down through nested sub-configs to the field the override sets
        path[i:i + 1] = _nested_key(cls, path[i])
        field, subs = path[i], nested_fields(cls)
        if field not in _names(cls):
            where = f"stage {name}" if i == 2 else ".".join(path[1:i])
            raise fail(f"unknown key {brief(field)} of {where}{hint(field, config_keys(cls))}")
        if field not in subs or i + 1 == len(path):
            break
        cls, default, i = subs[field][1], getattr(default, field), i + 1
        section = section.get(field) or {} if isinstance(section, dict) else {}
    fdefault = getattr(default, field)
    fdefault = fdefault.to_dict() if isinstance(fdefault, Config) else copy.deepcopy(fdefault)
    value = section.get(field) if isinstance(section, dict) and field in section else fdefault
    if isinstance(value, dict) and isinstance(fdefault, dict):
        value = {**fdefault, **value}
    # an open map with no default entries (ingest.fields, web_quality.thresholds …) takes new keys as they are
    open_map = fdefault == {}
    # inside an entry of a table of sub-configs the stage's own typed check knows the keys (PhaseSpec …)
    checked = path[:i + 2] if _is_table(fdefault) else path
    _walk(value, checked, i + 1, plus or open_map, fail)
    return path


def _nested_key(cls: type, key: str) -> list[str]:
    """``[key]``, or ``[field, sub_key]`` when ``key`` is the flat name of a nested field's key."""
    if key not in _names(cls):
        for field, (prefix, sub) in nested_fields(cls).items():
            if key.startswith(prefix) and key[len(prefix):] in _names(sub):
                return [field, key[len(prefix):]]
    return [key]


def _walk(node: Any, path: list[str], start: int, plus: bool, fail: Any) -> None:
    for i in range(start, len(path)):
        where = ".".join(path[:i])
        if not isinstance(node, dict):
            raise fail(f"{where} is {brief(node)}, not a mapping; set {where}=… as a whole")
        key = path[i]
        if key not in node:
            if plus:  # a new key, and everything below it
                return
            raise fail(
                f"{where} has no key {brief(key)}{hint(key, set(node))}"
                + ("" if i < len(path) - 1 else " (to add a new key, start the override with '+')")
            )
        node = node[key]


def _is_table(default: Any) -> bool:
    """A table of named sub-configs: a non-empty mapping whose values are all mappings."""
    return isinstance(default, dict) and bool(default) and all(isinstance(v, dict) for v in default.values())


def _names(cls: type) -> frozenset[str]:
    return frozenset(f.name for f in dataclasses.fields(cls))


def config_keys(cls: type) -> frozenset[str]:
    """The keys a config section accepts at its top: its fields and its nested fields' flat names."""
    return _names(cls) | {prefix + k for prefix, sub in nested_fields(cls).values() for k in _names(sub)}


def _config_cls(stage: str) -> type:
    from pipelines.stages import load_stage

    return load_stage(stage).config_cls


@functools.cache
def _defaults(stage: str) -> Any:
    """The stage config with every default (read only: never hand out its mutable values)."""
    return _config_cls(stage)()


@functools.lru_cache(maxsize=1)
def global_keys() -> frozenset[str]:
    from pipelines.stages import load_stage

    return frozenset(k for s in stage_names() for k in getattr(load_stage(s), "global_keys", ()))


def stage_names() -> list[str]:
    from pipelines.stages import STAGES

    return list(STAGES)
