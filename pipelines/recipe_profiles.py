"""The shipped profiles (``pipelines/configs/profiles/<name>.yaml``): settings for a kind of machine,
applied as overrides of the recipe (``--profile``; which of them a user's recipe keeps:
:mod:`pipelines.profile_choice`)."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

from curation.config import ConfigError, brief
from pipelines.recipe_schema import read_yaml


def profiles() -> list[str]:
    """Names of the shipped profiles (``pipelines/configs/profiles/<name>.yaml``)."""
    return sorted(p.stem for p in Path(str(resources.files("pipelines") / "configs" / "profiles")).glob("*.yaml"))


def profile_overrides(name: str, stage: str | None = None) -> list[str]:
    """The ``key=value`` overrides of profile ``name``; for one stage, its own keys without the stage prefix.

    >>> profile_overrides("cpu", "semdedup")[:3]
    ['model=minilm-static-bi', 'static_model=minilm-static-bi', 'eps=0.05']
    """
    src = Path(str(resources.files("pipelines") / "configs" / "profiles" / f"{name}.yaml"))
    if not src.is_file():
        raise ConfigError(f"--profile {brief(name)} does not exist; choose one of {', '.join(['auto', *profiles()])}")
    out = []
    for key, value in (read_yaml(src) or {}).items():
        text = json.dumps(value) if not isinstance(value, str) else value
        if stage is None:
            out.append(f"{key}={text}")
        elif key.startswith(stage + "."):
            out.append(f"{key[len(stage) + 1:]}={text}")
    return out


#: ``--profile auto`` (the default) picks one of these by what the machine has.
AUTO_PROFILES = {"gpu": "a CUDA device is present", "cpu": "no CUDA device was found"}


def resolve_profile(name: str | None) -> tuple[str, str]:
    """(profile, why) for ``--profile name``; ``auto`` (or None) is ``gpu`` where torch sees a CUDA
    device and ``cpu`` elsewhere, so a first run on a laptop takes the CPU settings.

    >>> resolve_profile("cpu")
    ('cpu', 'chosen with --profile')
    """
    if name not in (None, "auto"):
        return str(name), "chosen with --profile"
    try:
        import torch

        gpu = bool(torch.cuda.is_available())
    except Exception:  # noqa: BLE001 - no usable torch: no GPU to use either
        gpu = False
    chosen = "gpu" if gpu else "cpu"
    return chosen, f"--profile auto: {AUTO_PROFILES[chosen]}"
