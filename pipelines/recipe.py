"""Loading a recipe YAML, applying ``key=value`` overrides and resolving stage configs.

>>> r = load_recipe(None, ["exact_dedup.keep=longest"])
>>> r["stages"]["exact_dedup"]["keep"]
'longest'
"""

from __future__ import annotations

import copy
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from curation.config import ConfigError, StageConfig, parse_override, set_path

DEFAULT_RECIPE = "glm45.yaml"


def default_recipe_path() -> Path:
    return Path(str(resources.files("pipelines") / "configs" / DEFAULT_RECIPE))


def load_recipe(path: str | Path | None, overrides: list[str] | None = None, stage: str | None = None) -> dict[str, Any]:
    """Read a recipe (default: the embedded GLM-4.5 recipe) and apply overrides.

    With ``stage`` set, overrides without a dot (``threshold=0.7``) apply to that stage.
    """
    src = Path(path) if path else default_recipe_path()
    if not src.exists():
        raise ConfigError(f"recipe {src} does not exist; pass an existing YAML file or omit --config")
    try:
        recipe = yaml.safe_load(src.read_text()) or {}
    except yaml.YAMLError as exc:
        raise ConfigError(f"recipe {src} is not valid YAML: {exc}") from exc
    if not isinstance(recipe, dict) or not isinstance(recipe.get("stages", {}), dict):
        raise ConfigError(f"recipe {src} must be a mapping with a 'stages' mapping")
    recipe = copy.deepcopy(recipe)
    recipe.setdefault("stages", {})
    recipe["recipe_path"] = str(src)
    for item in overrides or []:
        keys, value = parse_override(item)
        if stage is not None and len(keys) == 1:
            keys = ["stages", stage, keys[0]]
        elif keys[0] in _stage_names():
            keys = ["stages", *keys]
        set_path(recipe, keys, value)
    return recipe


def stage_config(recipe: dict[str, Any], name: str, cls: type[StageConfig]) -> StageConfig:
    """The validated config of stage ``name`` (recipe section, defaults for missing keys)."""
    section = recipe.get("stages", {}).get(name) or {}
    try:
        return cls.from_dict(section)
    except ConfigError as exc:
        raise ConfigError(f"stages.{name}: {exc}") from exc


def _stage_names() -> set[str]:
    from pipelines.stages import STAGES

    return set(STAGES)
