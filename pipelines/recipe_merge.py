"""How a recipe file and a command line's overrides combine with the shipped recipe.

A recipe file holds what differs from the shipped one: its top-level keys that a file leaves out
come from the shipped recipe (:func:`with_shipped_keys`), and a table an override names is merged
with the recipe's by the rule of its config field (:func:`merge_rule`).
"""

from __future__ import annotations

from typing import Any

from curation.config import ConfigError, brief


def with_shipped_keys(recipe: dict[str, Any]) -> dict[str, Any]:
    """``recipe`` with the shipped recipe's top-level keys it leaves out (``seed``, and ``cluster``
    merged by name): a recipe file holds what differs, so a file without ``seed`` runs with the
    shipped seed, not each stage's fallback."""
    from pipelines.recipe_schema import base_recipe

    for key, value in base_recipe().items():
        if key in ("name", "stages"):
            continue
        if key not in recipe:
            recipe[key] = value
        elif isinstance(value, dict) and isinstance(recipe[key], dict):
            recipe[key] = {**value, **recipe[key]}
    return recipe


def merge_rule(path: list[str]) -> str:
    """How the table at recipe ``path`` merges (:data:`curation.config.MERGE`): ``deep``, ``entry`` or ``whole``."""
    import dataclasses

    from curation.config import MERGE, nested_fields
    from pipelines.stages import STAGES, load_stage

    if len(path) < 3 or path[0] != "stages" or path[1] not in STAGES:
        return "deep"
    cls: Any = load_stage(path[1]).config_cls
    for key in path[2:-1]:  # down the sub-configs (tiers.overrides)
        if key not in nested_fields(cls):
            return "deep"
        cls = nested_fields(cls)[key][1]
    field = next((f for f in dataclasses.fields(cls) if f.name == path[-1]), None)
    return field.metadata.get(MERGE, "deep") if field is not None else "deep"


def value_at(tree: dict[str, Any], path: list[str]) -> Any:
    """The value at ``path`` in ``tree``, or None."""
    for key in path:
        tree = tree.get(key) if isinstance(tree, dict) else None
    return tree


def check_repeated(given: dict[tuple[str, ...], tuple[str, Any, Any]], path: list[str], item: str, value: Any) -> None:
    """Refuse a key the command line gives twice (``threshold=3 threshold=4``, or ``threshold=3
    edu_score.threshold=4``), also inside mappings (``repeat={web/high: 2} repeat={web/high: 3}``,
    ``data_files.JSON.min_chars=10 data_files={JSON: {min_chars: 20}}``): which one was meant is not for
    the run to guess, and a YAML file refuses a key given twice in one mapping too. Two mappings for one
    table with no key in common (``repeat={web/high: 2} repeat={web/low: 0}``) merge by name, as a table
    does; the same value given again is no doubt and passes. ``given``: each leaf's path → (override,
    value, the leaf's value) so far.

    >>> given = {}
    >>> check_repeated(given, ["stages", "edu_score", "threshold"], "threshold=3", 3)
    >>> check_repeated(given, ["stages", "edu_score", "threshold"], "edu_score.threshold=4", 4)
    Traceback (most recent call last):
    ...
    curation.errors.ConfigError: edu_score.threshold is given twice on the command line, as threshold=3 and as edu_score.threshold=4: keep the one you mean
    >>> check_repeated(given, ["stages", "mixture", "repeat"], "repeat={web/high: 2}", {"web/high": 2})
    >>> check_repeated(given, ["stages", "mixture", "repeat"], "repeat={web/low: 0}", {"web/low": 0})
    >>> check_repeated(given, ["stages", "mixture", "repeat", "web/high"], "repeat.web/high=3", 3)
    Traceback (most recent call last):
    ...
    curation.errors.ConfigError: mixture.repeat.web/high is given twice on the command line, as repeat={web/high: 2} and as repeat.web/high=3: keep the one you mean
    """
    for leaf in _leaves(tuple(path), value):
        clash = next((k for k in given if k[: len(leaf)] == leaf or leaf[: len(k)] == k), None)  # the same key, or one inside the other
        if clash is not None and not (clash == leaf and given[clash][2] == _at(value, leaf[len(path):])):  # the same value again: no doubt
            shown = min(clash, leaf, key=len)
            name = ".".join(shown[1:] if shown[0] == "stages" else shown)
            raise ConfigError(
                f"{name} is given twice on the command line, as {brief(given[clash][0])[1:-1]} and as "
                f"{brief(item)[1:-1]}: keep the one you mean"
            )
    for leaf in _leaves(tuple(path), value):
        given[leaf] = (item, value, _at(value, leaf[len(path):]))


def _at(value: Any, keys: tuple[str, ...]) -> Any:
    for k in keys:
        value = value[k]
    return value


def _leaves(path: tuple[str, ...], value: Any) -> list[tuple[str, ...]]:
    """The paths of the values a mapping sets, one per key down to its last level (an empty mapping: itself)."""
    if not isinstance(value, dict) or not value:
        return [path]
    return [leaf for k, v in value.items() for leaf in _leaves((*path, str(k)), v)]
