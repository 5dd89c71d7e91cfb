"""Loading a recipe YAML, checking it against its schema, applying ``key=value`` overrides.

The schema is derived, never hand-kept: stage names from the dispatch table, a stage's keys from
its config dataclass, top-level keys (``name``, ``seed``, ``cluster`` …) from the embedded base
recipe plus the ``global_keys`` stages declare. Unknown keys are errors naming the closest valid
one. A new entry in a table of named sub-configs (``mixture.phases``, ``code_quality.data_files``)
needs ``new: true`` in a recipe file; an override that adds a key needs a leading ``+``
(``+mixture.phases.extra={…}``, Hydra's convention), so a typo never creates a phase (maps that are
empty by default, such as ``ingest.fields``, take new keys as they are).

>>> r = load_recipe(None, ["exact_dedup.keep=longest"])
>>> r["stages"]["exact_dedup"]["keep"]
'longest'
>>> load_recipe(None, ["minhash.threshold=0.7"])
Traceback (most recent call last):
...
curation.config.ConfigError: override 'minhash.threshold=0.7': unknown key 'minhash'; did you mean 'minhash_dedup'?
"""

from __future__ import annotations

import copy
import dataclasses
import difflib
import functools
import json
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from curation.config import ConfigError, StageConfig, parse_override, set_path

DEFAULT_RECIPE = "glm45.yaml"
#: Flag that lets a recipe file add an entry to a table of named sub-configs.
NEW_FLAG = "new"


def default_recipe_path() -> Path:
    return Path(str(resources.files("pipelines") / "configs" / DEFAULT_RECIPE))


def load_recipe(path: str | Path | None, overrides: list[str] | None = None, stage: str | None = None) -> dict[str, Any]:
    """Read a recipe (default: the embedded GLM-4.5 recipe), check it, apply overrides.

    With ``stage`` set, overrides whose first key is one of that stage's keys apply to it
    (``threshold=0.7``, ``phases.pretrain_phase1.budget=…``).
    """
    src = Path(path) if path else default_recipe_path()
    if not src.is_file():
        raise ConfigError(f"recipe {src} does not exist; pass an existing YAML file or omit --config")
    recipe = _read_yaml(src)
    check_recipe(recipe, str(src))
    recipe = _strip_new_flags(copy.deepcopy(recipe))
    recipe.setdefault("stages", {})
    for item in overrides or []:
        plus = item.startswith("+")
        keys, value = parse_override(item[1:] if plus else item)
        path = _override_path(recipe, keys, stage, item, plus)
        set_path(recipe, path, value)
        if path[0] == "stages":
            check_recipe({"stages": {path[1]: recipe["stages"][path[1]]}}, f"override {item!r}", new_ok=True)
        elif len(path) == 1:
            check_recipe({path[0]: value}, f"override {item!r}", new_ok=True)
    recipe["recipe_path"] = str(src)
    return recipe


def profiles() -> list[str]:
    """Names of the shipped profiles (``pipelines/configs/profiles/<name>.yaml``)."""
    return sorted(p.stem for p in Path(str(resources.files("pipelines") / "configs" / "profiles")).glob("*.yaml"))


def profile_overrides(name: str, stage: str | None = None) -> list[str]:
    """The ``key=value`` overrides of profile ``name``; for one stage, its own keys without the stage prefix.

    >>> profile_overrides("cpu", "semdedup")
    ['model=minilm-static']
    """
    src = Path(str(resources.files("pipelines") / "configs" / "profiles" / f"{name}.yaml"))
    if not src.is_file():
        raise ConfigError(f"--profile {name!r} does not exist; choose one of {profiles()}")
    out = []
    for key, value in (_read_yaml(src) or {}).items():
        text = json.dumps(value) if not isinstance(value, str) else value
        if stage is None:
            out.append(f"{key}={text}")
        elif key.startswith(stage + "."):
            out.append(f"{key[len(stage) + 1:]}={text}")
    return out


def stage_config(recipe: dict[str, Any], name: str, cls: type[StageConfig]) -> StageConfig:
    """The validated config of stage ``name`` (recipe section, defaults for missing keys)."""
    section = recipe.get("stages", {}).get(name) or {}
    if not isinstance(section, dict):
        raise ConfigError(f"stages.{name} must be a mapping of keys (e.g. keep: first), not {section!r}")
    try:
        return cls.from_dict(section)
    except ConfigError as exc:
        raise ConfigError(f"stages.{name}: {exc}") from exc


def check_configs(recipe: dict[str, Any], names: list[str], loader: Any = None) -> None:
    """Build the typed config of every stage in ``names`` so a bad value fails before anything runs.

    ``loader`` maps a stage name to its stage object (default ``pipelines.stages.load_stage``): the
    runner passes the one it will run, so what is checked is what runs.
    """
    from pipelines.stages import load_stage

    for name in names:
        stage_config(recipe, name, (loader or load_stage)(name).config_cls)


def check_recipe(recipe: Any, where: str, new_ok: bool = False) -> None:
    """Raise :class:`ConfigError` when ``recipe`` has an unknown key or a wrong shape."""
    if not isinstance(recipe, dict):
        raise ConfigError(f"{where}: a recipe must be a mapping (name, seed, stages: …), not {type(recipe).__name__}")
    base = base_recipe()
    allowed = set(base) | _global_keys() | {"recipe_path"}
    for key, value in recipe.items():
        if key not in allowed:
            raise ConfigError(f"{where}: unknown top-level key {key!r}{_hint(key, allowed | set(_stages()))}")
        if key == "stages":
            _check_stages(value, where, new_ok)
        elif isinstance(base.get(key), dict):
            _check_like(value, base[key], f"{where}: {key}")


def _check_stages(stages: Any, where: str, new_ok: bool) -> None:
    if stages is None:
        return
    if not isinstance(stages, dict):
        raise ConfigError(f"{where}: 'stages' must be a mapping of stage name → keys, not {stages!r}")
    for name, section in stages.items():
        if name not in _stages():
            raise ConfigError(f"{where}: unknown stage {name!r}{_hint(name, _stages())}")
        if section is None:
            continue
        if not isinstance(section, dict):
            raise ConfigError(
                f"{where}: stages.{name} must be a mapping of keys (e.g. {name}: {{enabled: false}}), not {section!r}"
            )
        fields = _fields(name)
        for key, value in section.items():
            if key not in fields:
                raise ConfigError(f"{where}: unknown key {key!r} in stages.{name}{_hint(key, fields)}")
            table = _default(name, key)
            if not new_ok and _is_table(table) and isinstance(value, dict):
                known = set(table) | set(((base_recipe().get("stages") or {}).get(name) or {}).get(key) or {})
                for entry, body in value.items():
                    flagged = isinstance(body, dict) and body.get(NEW_FLAG) is True
                    if entry not in known and not flagged:
                        raise ConfigError(
                            f"{where}: stages.{name}.{key} has no entry {entry!r}{_hint(entry, known)} "
                            f"(to add one, give it '{NEW_FLAG}: true')"
                        )


def _check_like(value: Any, base: dict[str, Any], where: str) -> None:
    """A top-level section shaped like the base recipe's (closed when the base lists keys)."""
    if value is None or not base:
        return
    if not isinstance(value, dict):
        raise ConfigError(f"{where} must be a mapping like the base recipe's ({', '.join(base)}), not {value!r}")
    for key, sub in value.items():
        if key not in base:
            raise ConfigError(f"{where} has an unknown key {key!r}{_hint(key, set(base))}")
        if isinstance(base[key], dict):
            _check_like(sub, base[key], f"{where}.{key}")


def _override_path(recipe: dict[str, Any], keys: list[str], stage: str | None, item: str, plus: bool) -> list[str]:
    """The full recipe path an override sets; every key on it must exist unless ``+`` adds it."""
    def fail(msg: str) -> ConfigError:
        return ConfigError(f"override {item!r}: {msg}")

    first = keys[0]
    top = set(base_recipe()) | _global_keys()
    if stage is not None and first in _fields(stage):
        path = ["stages", stage, *keys]
    elif first == "stages":
        path = keys
    elif first in _stages():
        path = ["stages", *keys]
    elif first in top:
        path = keys
    else:
        options = top | set(_stages()) | (_fields(stage) if stage else set())
        raise fail(f"unknown key {first!r}{_hint(first, options) or '; valid: ' + ', '.join(sorted(options))}")
    if path[0] != "stages":
        node: Any = recipe.get(path[0], base_recipe().get(path[0]))
        _walk(node, path, 1, plus, fail)
        return path
    if len(path) < 3:
        if len(path) == 2 and path[1] in _stages():
            return path
        name = path[1] if len(path) > 1 else ""
        raise fail(f"unknown stage {name!r}{_hint(name, _stages())}" if name else "name a stage: stages.<stage>.<key>=…")
    name, field = path[1], path[2]
    if name not in _stages():
        raise fail(f"unknown stage {name!r}{_hint(name, _stages())}")
    if field not in _fields(name):
        raise fail(f"unknown key {field!r} of stage {name}{_hint(field, _fields(name))}")
    section = recipe["stages"].get(name) or {}
    value = section.get(field) if isinstance(section, dict) and field in section else _default(name, field)
    if isinstance(value, dict) and isinstance(_default(name, field), dict):
        value = {**_default(name, field), **value}
    # an open map with no default entries (ingest.fields, web_quality.thresholds …) takes new keys as they are
    open_map = _default(name, field) == {} and len(path) == 4
    # inside an entry of a table of sub-configs the stage's own typed check knows the keys (PhaseSpec …)
    checked = path[:4] if _is_table(_default(name, field)) else path
    _walk(value, checked, 3, plus or open_map, fail)
    return path


def _walk(node: Any, path: list[str], start: int, plus: bool, fail: Any) -> None:
    for i in range(start, len(path)):
        where = ".".join(path[:i])
        if not isinstance(node, dict):
            raise fail(f"{where} is {node!r}, not a mapping; set {where}=… as a whole")
        key = path[i]
        if key not in node:
            if plus and i == len(path) - 1:
                return
            raise fail(
                f"{where} has no key {key!r}{_hint(key, set(node))}"
                + ("" if i < len(path) - 1 else " (to add a new key, start the override with '+')")
            )
        node = node[key]


@functools.lru_cache(maxsize=1)
def _base() -> dict[str, Any]:
    return _read_yaml(default_recipe_path())


def base_recipe() -> dict[str, Any]:
    """The embedded GLM-4.5 recipe (a fresh copy)."""
    return copy.deepcopy(_base())


def _read_yaml(src: Path) -> dict[str, Any]:
    try:
        recipe = yaml.safe_load(src.read_text())
    except yaml.YAMLError as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise ConfigError(f"recipe {src} is not valid YAML ({first}); fix the file") from exc
    if recipe is None:
        raise ConfigError(
            f"recipe {src} is empty; copy {default_recipe_path()} and edit it, or omit --config for the default recipe"
        )
    if not isinstance(recipe, dict):
        raise ConfigError(f"recipe {src} must be a mapping (name, seed, stages: …), not {type(recipe).__name__}")
    return recipe


def _strip_new_flags(recipe: dict[str, Any]) -> dict[str, Any]:
    """Drop ``new: true`` from table entries once checked (the stage configs do not know it)."""
    for name, section in (recipe.get("stages") or {}).items():
        for key, value in (section or {}).items() if isinstance(section, dict) else []:
            if _is_table(_default(name, key)) and isinstance(value, dict):
                for body in value.values():
                    if isinstance(body, dict):
                        body.pop(NEW_FLAG, None)
    return recipe


def _is_table(default: Any) -> bool:
    """A table of named sub-configs: a non-empty mapping whose values are all mappings."""
    return isinstance(default, dict) and bool(default) and all(isinstance(v, dict) for v in default.values())


@functools.cache
def _fields(stage: str) -> frozenset[str]:
    from pipelines.stages import load_stage

    return frozenset(f.name for f in dataclasses.fields(load_stage(stage).config_cls))


def _default(stage: str, key: str) -> Any:
    from pipelines.stages import load_stage

    for f in dataclasses.fields(load_stage(stage).config_cls):
        if f.name == key:
            if f.default is not dataclasses.MISSING:
                return copy.deepcopy(f.default)
            if f.default_factory is not dataclasses.MISSING:
                return f.default_factory()
    return None


@functools.lru_cache(maxsize=1)
def _global_keys() -> frozenset[str]:
    from pipelines.stages import load_stage

    return frozenset(k for s in _stages() for k in getattr(load_stage(s), "global_keys", ()))


def _stages() -> list[str]:
    from pipelines.stages import STAGES

    return list(STAGES)


def _hint(word: str, options: Any) -> str:
    match = difflib.get_close_matches(str(word), sorted(str(o) for o in options), n=1, cutoff=0.5)
    return f"; did you mean {match[0]!r}?" if match else ""
