"""How a recipe file and a command line's overrides combine with the shipped recipe.

A recipe file holds what differs from the shipped one: its top-level keys that a file leaves out
come from the shipped recipe (:func:`with_shipped_keys`), and a table an override names is merged
with the recipe's by the rule of its config field (:func:`merge_rule`).
"""

from __future__ import annotations

from typing import Any


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
