"""Loading a recipe YAML, checking it against its schema (:mod:`pipelines.recipe_schema`), applying
``key=value`` overrides, and building each stage's typed config from it.

>>> r = load_recipe(None, ["exact_dedup.keep=longest"])
>>> r["stages"]["exact_dedup"]["keep"]
'longest'
>>> load_recipe(None, ["minhash.threshold=0.7"])
Traceback (most recent call last):
...
curation.config.ConfigError: override 'minhash.threshold=0.7': unknown key 'minhash'; did you mean 'minhash_dedup'?
>>> load_recipe(None, ["code_quality.tier_high=90"])["stages"]["code_quality"]["tiers"]["high"]
90
"""

from __future__ import annotations

import copy
import json
from importlib import resources
from pathlib import Path
from typing import Any

from curation.config import ConfigError, StageConfig, parse_override, set_path
from pipelines.recipe_schema import check_recipe, default_recipe_path, normalise, override_path, read_yaml


def load_recipe(path: str | Path | None, overrides: list[str] | None = None, stage: str | None = None) -> dict[str, Any]:
    """Read a recipe (default: the embedded GLM-4.5 recipe), check it, apply overrides.

    With ``stage`` set, overrides whose first key is one of that stage's keys apply to it
    (``threshold=0.7``, ``phases.pretrain_phase1.budget=…``).
    """
    src = Path(path) if path else default_recipe_path()
    if not src.is_file():
        raise ConfigError(f"recipe {src} does not exist; pass an existing YAML file or omit --config")
    recipe = read_yaml(src)
    check_recipe(recipe, str(src))
    recipe = normalise(copy.deepcopy(recipe))
    recipe.setdefault("stages", {})
    for item in overrides or []:
        plus = item.startswith("+")
        keys, value = parse_override(item[1:] if plus else item)
        path = override_path(recipe, keys, stage, item, plus)
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
    ['model=minilm-static', 'eps=0.05']
    """
    src = Path(str(resources.files("pipelines") / "configs" / "profiles" / f"{name}.yaml"))
    if not src.is_file():
        raise ConfigError(f"--profile {name!r} does not exist; choose one of {profiles()}")
    out = []
    for key, value in (read_yaml(src) or {}).items():
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
        stage = (loader or load_stage)(name)
        stage_config(recipe, name, stage.config_cls)
        stage_settings(recipe, stage)


def stage_settings(recipe: dict[str, Any], stage: Any) -> dict[str, Any]:
    """The values a stage reads from other stages' configs, as it declares them.

    ``settings = {"tokenizer": "ingest.tokenizer"}`` on a stage class gives ``{"tokenizer": …}``:
    the typed value of the other stage's config, its default when the recipe omits it. The value
    belongs to that other stage (one tokenizer per run); a stage reading it does not hash it.

    >>> from pipelines.stages import load_stage
    >>> stage_settings(load_recipe(None, ["ingest.tokenizer=whitespace"]), load_stage("code_web"))
    {'tokenizer': 'whitespace'}
    """
    from pipelines.stages import load_stage

    out = {}
    for key, ref in getattr(stage, "settings", {}).items():
        other, _, field = ref.partition(".")
        values = stage_config(recipe, other, load_stage(other).config_cls).flat_dict()
        if field not in values:
            raise ConfigError(f"stage {stage.name} reads setting {ref!r}, which stage {other} does not have")
        out[key] = values[field]
    return out
