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


def check_repeated(given: dict[tuple[str, ...], tuple[str, Any]], path: list[str], item: str, value: Any) -> None:
    """Refuse a key the command line gives twice (``threshold=3 threshold=4``, or ``threshold=3
    edu_score.threshold=4``): which one was meant is not for the run to guess, and a YAML file refuses
    a key given twice in one mapping too. Two mappings for one table (``repeat={web/high: 2}
    repeat={web/low: 0}``) merge by name, as a table does. ``given``: path → (override, value) so far.

    >>> given = {}
    >>> check_repeated(given, ["stages", "edu_score", "threshold"], "threshold=3", 3)
    >>> check_repeated(given, ["stages", "edu_score", "threshold"], "edu_score.threshold=4", 4)
    Traceback (most recent call last):
    ...
    curation.errors.ConfigError: edu_score.threshold is given twice on the command line, as threshold=3 and as edu_score.threshold=4: keep the one you mean
    """
    key = tuple(path)
    if key in given and not (isinstance(value, dict) and isinstance(given[key][1], dict)):
        name = ".".join(path[1:] if path[0] == "stages" else path)
        raise ConfigError(
            f"{name} is given twice on the command line, as {brief(given[key][0])[1:-1]} and as "
            f"{brief(item)[1:-1]}: keep the one you mean"
        )
    given.setdefault(key, (item, value))
