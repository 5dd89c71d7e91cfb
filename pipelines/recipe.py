"""Loading a recipe YAML, checking it against its schema (:mod:`pipelines.recipe_schema`), applying
``key=value`` overrides, and building each stage's typed config from it.

>>> r = load_recipe(None, ["exact_dedup.keep=longest"])
>>> r["stages"]["exact_dedup"]["keep"]
'longest'
>>> load_recipe(None, ["minhash.threshold=0.7"])
Traceback (most recent call last):
...
curation.errors.ConfigError: override 'minhash.threshold=0.7': unknown key 'minhash'; did you mean 'minhash_dedup'?
>>> load_recipe(None, ["code_quality.tier_high=90"])["stages"]["code_quality"]["tiers"]["high"]
90
"""

from __future__ import annotations

import copy
import json
import logging
import os
from pathlib import Path
from typing import Any

from curation.config import ConfigError, StageConfig, brief, config_hash, merge_tables, parse_override, set_path
from pipelines.recipe_groups import check_mixture_groups
from pipelines.recipe_merge import check_repeated, merge_rule, value_at, with_shipped_keys
from pipelines.recipe_profiles import AUTO_PROFILES, profile_overrides, profiles, resolve_profile  # noqa: F401 - their home was here
from pipelines.recipe_schema import check_recipe, default_recipe_path, normalise, override_path, read_yaml

log = logging.getLogger("curate")


def load_recipe(path: str | Path | None, overrides: list[str] | None = None, stage: str | None = None,
                settled: int = 0) -> dict[str, Any]:
    """Read a recipe (default: the embedded GLM-4.5 recipe), check it, apply overrides.

    With ``stage`` set, overrides whose first key is one of that stage's keys apply to it
    (``threshold=0.7``, ``phases.pretrain_phase1.budget=…``). The first ``settled`` overrides are a
    profile's, which the others may change; a key the others give twice is refused (:func:`check_repeated`).
    """
    src = Path(path) if path else default_recipe_path()
    if not src.is_file():
        raise ConfigError(f"recipe {src} {_not_a_file(src)}; pass a recipe YAML file (pipelines/configs/glm45.yaml is the default recipe)")
    recipe = read_yaml(src)
    check_recipe(recipe, str(src))
    recipe = normalise(with_shipped_keys(copy.deepcopy(recipe)))
    recipe.setdefault("stages", {})
    given: dict[tuple[str, ...], tuple[str, Any, Any]] = {}
    for i, item in enumerate(overrides or []):
        plus = item.startswith("+")
        keys, value = parse_override(item[1:] if plus else item)
        path = override_path(recipe, keys, stage, item, plus)
        if i >= settled:
            check_repeated(given, path, item, value)
        if stage is not None and path[0] == "stages" and len(path) > 2 and path[1] != stage and (stage, *path[1:3]) not in _READ_ACROSS:
            log.warning("override %s sets a key of %s, but this command runs %s only, which does not read it: run it with "
                        "`curate %s` or `curate run`", brief(item), path[1], stage, path[1].replace("_", "-"))
        current = value_at(recipe, path)
        if isinstance(value, dict) and path[0] == "stages" and not plus:  # its new entries need 'new: true', as in a file
            probe = value
            for key in reversed(path[2:]):
                probe = {key: probe}
            check_recipe({"stages": {path[1]: probe}}, f"override {brief(item)}", known=recipe)
        if isinstance(value, dict) and len(path) == 2 and path[0] == "stages":  # {tier_high: 85} as the section holds it
            value = normalise({"stages": {path[1]: dict(value)}})["stages"][path[1]]
        how = merge_rule(path)
        if isinstance(value, dict) and isinstance(current, dict) and how != "whole":  # a table (or sub-config) is merged by name, as in a file
            value = merge_tables(current, value, keep_null=True, deep=how == "deep")
        set_path(recipe, path, value)
        if path[0] == "stages":
            check_recipe({"stages": {path[1]: recipe["stages"][path[1]]}}, f"override {brief(item)}", new_ok=True)
        elif len(path) == 1:
            check_recipe({path[0]: value}, f"override {brief(item)}", new_ok=True)
    recipe = normalise(recipe) if overrides else recipe  # a '+' override may carry 'new: true' as a recipe file does
    recipe["recipe_path"] = str(src)
    return recipe


#: (command's stage, other stage, key): keys of another stage a single-stage command reads (they must agree)
_READ_ACROSS = {("mixture", "ingest", "tokenizer")}


def _not_a_file(path: Path) -> str:
    """What ``path`` is, when it is not a regular file."""
    import stat

    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        return "does not exist"
    except OSError as exc:
        return f"cannot be read ({exc.strerror or exc})"
    kinds = [(stat.S_ISDIR, "a folder"), (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
             (stat.S_ISFIFO, "a named pipe"), (stat.S_ISSOCK, "a socket")]
    return "is " + next((what for test, what in kinds if test(mode)), "not a regular file") + ", not a file"


def stage_config(recipe: dict[str, Any], name: str, cls: type[StageConfig]) -> StageConfig:
    """The validated config of stage ``name`` (recipe section, defaults for missing keys)."""
    section = recipe.get("stages", {}).get(name) or {}
    if not isinstance(section, dict):
        raise ConfigError(f"stages.{name} must be a mapping of keys (e.g. keep: first), not {brief(section)}")
    try:
        key = (cls, json.dumps(section, sort_keys=True, default=repr))
    except (TypeError, ValueError):  # keys that JSON cannot sort: build it every time
        key = None
    cached = _CONFIGS.get(key) if key is not None else None
    if cached is not None:
        return cached
    try:
        cfg = cls.from_dict(section)
    except (ConfigError, ValueError, TypeError, KeyError, OverflowError) as exc:
        # a stage's validate() may raise any of these from library checks: all are the recipe's fault here
        text = str(exc) if not isinstance(exc, KeyError) else f"missing or unknown key {exc}"
        raise ConfigError(f"stages.{name}: {text[:2000]}") from exc
    if key is not None:
        if len(_CONFIGS) >= 256:
            _CONFIGS.clear()
        _CONFIGS[key] = cfg
    return cfg


#: Validated stage configs by (class, section as JSON): a run builds each one 4-5 times (the
#: up-front checks of the CLI and the runner, the run record, the stage hash, the stage itself),
#: and building the recipe's nine takes ~0.1 CPU-s (benchmarks/recipe). Configs are frozen.
_CONFIGS: dict[tuple[type, str], StageConfig] = {}


def check_configs(recipe: dict[str, Any], names: list[str], loader: Any = None) -> None:
    """Build the typed config of every stage in ``names`` so a bad value fails before anything runs.

    ``loader`` maps a stage name to its stage object (default ``pipelines.stages.load_stage``): the
    runner passes the one it will run, so what is checked is what runs.
    """
    from pipelines.stages import load_stage

    for name in names:
        stage = (loader or load_stage)(name)
        cfg = stage_config(recipe, name, stage.config_cls)
        stage_settings(recipe, stage)
        _check_source_keys(name, cfg.flat_dict())
        tokenizer = cfg.flat_dict().get("tokenizer")
        if isinstance(tokenizer, str):
            check_tokenizer(tokenizer, f"stages.{name}.tokenizer")
        if hasattr(stage, "preflight"):  # after the tokenizer's check: a preflight may load it
            stage.preflight(cfg)
    if "mixture" in names:
        _check_same_tokenizer(recipe, loader or load_stage)
        check_mixture_groups(recipe, names, loader or load_stage)
    _check_text_rewrites(recipe, names, loader or load_stage)


def _check_text_rewrites(recipe: dict[str, Any], names: list[str], loader: Any) -> None:
    """A stage that rewrites ``text`` (names it in ``produces``) before one that rebuilds the text of
    some pages from ingest's HTML (``rebuilds_text``: code_web with ``reparse``) is undone on them."""
    rewriters: list[str] = []
    for name in names:
        stage = loader(name)
        rebuilds = getattr(stage, "rebuilds_text", None)
        if rewriters and rebuilds and getattr(stage_config(recipe, name, stage.config_cls), rebuilds, False):
            raise ConfigError(f"stage {rewriters[0]} rewrites text before {name}, which rebuilds the text of the pages it "
                              f"takes from ingest's HTML ({rebuilds}: true) and would undo the rewrite on them: place "
                              f"{rewriters[0]} after {name} in STAGES, or set {name}.{rebuilds}=false")
        if "text" in (getattr(stage, "produces", None) or {}):
            rewriters.append(name)


def _check_same_tokenizer(recipe: dict[str, Any], loader: Any) -> None:
    """The mixture plans on the ``n_tokens`` ingest counted and names its own tokenizer in the
    manifests, which ``curate export`` encodes with: the two must be one tokenizer."""
    counted = stage_config(recipe, "ingest", loader("ingest").config_cls).flat_dict().get("tokenizer")
    named = stage_config(recipe, "mixture", loader("mixture").config_cls).flat_dict().get("tokenizer")
    if isinstance(counted, str) and isinstance(named, str) and counted != named:  # a stage of another shape may have none
        raise ConfigError(f"mixture.tokenizer is {named!r} but ingest.tokenizer is {counted!r}: the mixture's budgets and "
                          f"epochs count the tokens ingest counted, and its manifests name the tokenizer the export encodes "
                          f"with; set both to one tokenizer (ingest.tokenizer={counted} mixture.tokenizer={counted})")


def absolute_model_paths(recipe: dict[str, Any], names: list[str]) -> None:
    """Write each model folder the recipe names for ``names`` (``StageShape.model_paths``) as an
    absolute path with ``~`` expanded: a ``--scheduler``'s workers stand in a folder of their own,
    and each stage's loader need not expand ``~`` itself. So is every stage's ``tokenizer`` path (all
    stages': one reads another's), which the manifests and ``run.json`` record for ``curate export``."""
    from pipelines.stages import load_stage

    for section in (recipe.get("stages") or {}).values():
        tok = section.get("tokenizer") if isinstance(section, dict) else None
        full = os.path.abspath(os.path.expanduser(tok)) if isinstance(tok, str) and tok not in ("qwen", "whitespace") else tok
        if full != tok and os.path.exists(full):  # a typo stays as written, for check_tokenizer to name
            section["tokenizer"] = full

    for name in names:
        stage = load_stage(name)
        if not hasattr(stage, "model_paths"):
            continue
        for key, path in stage.model_paths(stage_config(recipe, name, stage.config_cls)).items():
            full = os.path.abspath(os.path.expanduser(str(path)))
            if full != str(path) and os.path.exists(full):  # a name (a shipped model) or a typo stays as written
                set_path(recipe, ["stages", name, *key.split(".")], full)


def _check_source_keys(stage: str, flat: dict[str, Any]) -> None:
    """Every ``sources``/``*_sources`` list, and the keys of ``source_shingle``, names sources of the schema."""
    from curation.errors import check_names
    from curation.schema import SOURCES

    for key, value in flat.items():
        if key == "sources" or key.endswith("_sources"):
            check_names(f"{stage}.{key}", list(value or []), SOURCES)
        elif key == "source_shingle":
            check_names(f"{stage}.{key}", list(value or {}), SOURCES)


def check_tokenizer(name: str, key: str) -> None:
    """Refuse a tokenizer that cannot be loaded, naming the recipe key and the file (paths only:
    ``qwen`` and ``whitespace`` are shipped)."""
    if name in ("qwen", "whitespace"):
        return
    from curation.tokens import load_tokenizer

    path = Path(name)
    file = path / "tokenizer.json" if path.is_dir() else path
    if not file.is_file():
        what = "does not exist" if not file.exists() else _not_a_file(file)
        raise ConfigError(f"{key} = {brief(name)}: {file} {what}; use qwen, whitespace, a tokenizer.json file "
                          "or a Hugging Face tokenizer folder")
    try:
        load_tokenizer(name)
    except Exception as exc:  # noqa: BLE001 - whatever the tokenizers library says, the file is not a tokenizer
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:200]
        raise ConfigError(f"{key} = {brief(name)}: {file} is not a tokenizer.json that the tokenizers library reads "
                          f"({first}); use qwen, whitespace, a tokenizer.json file or a Hugging Face tokenizer folder") from None


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
            raise ConfigError(f"stage {stage.name} reads setting {brief(ref)}, which stage {other} does not have")
        out[key] = values[field]
    return out


def stage_hash(name: str, recipe: dict[str, Any], stage: Any = None, cfg: Any = None) -> str:
    """The config hash a stage's marker records: stage, version, its config and its global keys
    (``stage``: the stage object that runs, as the runner loaded it; default: the registered one)."""
    from pipelines.stages import load_stage

    stage = stage or load_stage(name)
    cfg = cfg or stage_config(recipe, name, stage.config_cls)
    payload = {"stage": name, "version": stage.version, "config": cfg.flat_dict(), "extra": global_keys(recipe, stage)}
    models = stage.model_paths(cfg) if hasattr(stage, "model_paths") else {}
    if models:  # only where the user names a model: the hashes of the shipped recipe stay as they are
        from pipelines.kit.preflight import files_stamp

        payload["models"] = {key: files_stamp(path) for key, path in sorted(models.items())}
    return config_hash(payload)


def global_keys(recipe: dict[str, Any], stage: Any) -> dict[str, Any]:
    """Recipe keys outside the stage's section that change its output (declared by the stage)."""
    return {k: recipe.get(k) for k in getattr(stage, "global_keys", ())}
