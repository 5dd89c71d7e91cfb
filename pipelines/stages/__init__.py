"""The dispatch table: every stage, its folder number and the module that defines it; which stages a recipe enables.

Modules are imported lazily so ``curate --help`` stays fast and optional dependencies
(torch, faiss, vllm) load only for the stages that use them.
"""

from __future__ import annotations

import importlib
from typing import Any

#: name → (folder number, module). The order of this dict is the order of a run; the number
#: only names the stage's folder (``15_repeated_lines``), so a new stage between two others takes
#: a number between theirs.
STAGES: dict[str, tuple[str, str]] = {
    "ingest": ("00", "pipelines.stages.ingest"),
    "exact_dedup": ("10", "pipelines.stages.exact_dedup"),
    "repeated_lines": ("15", "pipelines.stages.repeated_lines"),
    "minhash_dedup": ("20", "pipelines.stages.minhash_dedup"),
    "semdedup": ("30", "pipelines.stages.semdedup"),
    "web_quality": ("40", "pipelines.stages.web_quality"),
    "code_quality": ("50", "pipelines.stages.code_quality"),
    "code_web": ("60", "pipelines.stages.code_web"),
    "edu_score": ("70", "pipelines.stages.edu_score"),
    "forge_filter": ("75", "pipelines.stages.forge_filter"),
    "mixture": ("80", "pipelines.stages.mixture"),
}

#: the stages curate ships: an error inside one of them is a bug in curate (exit 70); one inside a
#: stage added to ``STAGES`` names the stage and its method (``pipelines/kit/contract.py``, exit 13)
SHIPPED = frozenset({"ingest", "exact_dedup", "repeated_lines", "minhash_dedup", "semdedup", "web_quality", "code_quality",
                     "code_web", "edu_score", "forge_filter", "mixture"})


def load_stage(name: str) -> Any:
    """The stage object ``STAGE`` of a stage module.

    >>> load_stage("ingest").name
    'ingest'
    """
    if name not in STAGES:
        raise KeyError(f"unknown stage {name!r}; stages: {', '.join(STAGES)}")
    module = importlib.import_module(STAGES[name][1])
    if not hasattr(module, "STAGE"):
        from pipelines.kit.contract import StageError

        raise StageError(f"{module.__file__} defines no STAGE: end it with the stage object the runner uses, "
                         f"STAGE = {name.title().replace('_', '')}Stage() (docs/adding-a-stage.md)")
    if getattr(module.STAGE, "name", name) != name:  # its folder, CLI command and recipe section follow STAGES' key
        from pipelines.kit.contract import StageError

        raise StageError(f"{module.__file__}: its stage is named {module.STAGE.name!r} but STAGES registers it as {name!r}; "
                         f"give both the same name (the class's `name`, the STAGES key and the recipe section)")
    return module.STAGE


def folder_name(name: str) -> str:
    """``exact_dedup`` → ``10_exact_dedup``."""
    return f"{STAGES[name][0]}_{name}"


def enabled_stages(recipe: dict[str, Any]) -> list[str]:
    """Stages of the recipe that are enabled, in run order (ingest always runs). A section without
    ``enabled`` takes its config's default: on, except for a stage whose config says otherwise
    (``repeated_lines``)."""
    out = []
    if (recipe.get("stages", {}).get("ingest") or {}).get("enabled") is False:
        from curation.config import ConfigError

        raise ConfigError("ingest.enabled=false: a run starts from raw input, so ingest always runs; to start from a stage "
                          "folder, run the later stages one at a time (curate <stage> --input STAGE_DIR)")
    for name in STAGES:
        section = recipe.get("stages", {}).get(name) or {}
        if name == "ingest" or (section["enabled"] if "enabled" in section else load_stage(name).config_cls.enabled):
            out.append(name)
    return out
