"""Which of a profile's settings a run takes when the recipe file is the user's own.

A profile is a set of overrides of the shipped recipe (``pipelines/configs/profiles/<name>.yaml``).
Applied as they are on top of a user's recipe, they replaced what the user had changed (a recipe's
``semdedup.eps: 0.2`` ran at the CPU profile's 0.05) without a word. A value the user's file sets
and the shipped recipe does not is the user's choice: under ``--profile auto`` it stays, with the
rest of that stage's settings (a choice made by the machine does not override one written by a
person, and a profile's settings of one stage are tuned together), under a profile named with
``--profile`` the profile wins; either way a note names the setting.

>>> profile_settings("cpu", "--profile auto: no CUDA device was found", None, None)[1]
[]
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from curation.config import parse_override
from pipelines.recipe import load_recipe, profile_overrides
from pipelines.recipe_schema import default_recipe_path, override_path

_MISSING = object()


def profile_settings(profile: str, why: str, recipe_path: str | Path | None, stage: str | None) -> tuple[list[str], list[str]]:
    """(the profile's overrides to apply, one note per setting of the user's recipe it meets)."""
    overrides = profile_overrides(profile, stage)
    if recipe_path is None or Path(recipe_path).resolve() == default_recipe_path().resolve():
        return overrides, []
    yours, shipped = load_recipe(recipe_path, [], stage=stage), load_recipe(None, [], stage=stage)
    auto = why.startswith("--profile auto")
    apply, notes, rows = [], [], []
    for item in overrides:
        keys, value = parse_override(item)
        mine, base = _value(yours, keys, stage, item), _value(shipped, keys, stage, item)
        name = ".".join(keys) if stage is None else f"{stage}.{'.'.join(keys)}"
        rows.append((item, value, mine, base, name, name.split(".")[0], mine is not _MISSING and mine not in (base, value)))
    # a profile's settings of one stage are tuned together (semdedup's eps for its embedder): under auto, a
    # stage whose settings the user changed keeps all of the recipe's, not a mix of the two
    kept = {section for *_, section, changed in rows if changed} if auto else set()
    for item, value, mine, base, name, section, changed in rows:
        if section in kept:
            if changed:
                notes.append(f"profile {profile} leaves your recipe's {name}: {mine!r} as it is, and the rest of its "
                             f"{section} settings with it (the profile sets {value!r} in place of the shipped {base!r}, "
                             f"tuned with its other {section} settings; --profile {profile} applies them all)")
            continue
        apply.append(item)
        if changed:
            notes.append(f"--profile {profile} sets {name}: {value!r} over your recipe's {mine!r} (pass {name}=… on "
                         "the command line to keep yours)")
    return apply, notes


def _value(recipe: dict[str, Any], keys: list[str], stage: str | None, item: str) -> Any:
    """The value at an override's key in ``recipe``, or ``_MISSING``."""
    try:
        node: Any = recipe
        for key in override_path(recipe, keys, stage, item, False):
            node = node[key]
        return node
    except (KeyError, TypeError, ValueError):
        return _MISSING
