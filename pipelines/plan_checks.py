"""Checks of a whole plan, before anything runs, beyond each stage's own config
(:func:`pipelines.recipe.check_configs`):

- a setting that reads a column no earlier stage provides (``semdedup.keep=highest:<column>``) is
  refused, in ``--dry-run`` too (:func:`pipelines.kit.stage.column_problems`);
- settings that are valid alone but do not do what they ask in this plan are said, one warning
  each: a stage's own (``config_notes``: a language the static embedder cannot prune, a
  ``learned_model`` no scorer reads), web_quality's ``embed_batch_size`` with no embedding scorer,
  the mixture's edu bands and repeat groups that name no band of ``edu_score.band_names``, and its
  repeat groups of a kind that no phase mixes (:func:`pipelines.recipe_groups.unmixed_notes`);
- a recipe file whose sections under ``stages:`` stand in another order than the run's is said in an
  INFO line, not a warning: a run's order is :data:`pipelines.stages.STAGES`, whatever the file says.
"""

from __future__ import annotations

import logging
import re
from pathlib import Path
from typing import Any

from curation.config import ConfigError
from pipelines.recipe_groups import unmixed_notes

log = logging.getLogger("curate")

#: Group names are folder names (``curation.mixture.policy``): a band's other characters become ``_``.
_SAFE = re.compile(r"[^A-Za-z0-9_.-]")


def check_plan(recipe: dict[str, Any], names: list[str], loader: Any = None, *, warn: bool = True) -> list[str]:
    """Refuse a plan whose settings read a column no earlier stage provides (a plan from raw input:
    ingest first; a single stage's input is checked by ``check_requires``); with ``warn``, log and
    return the notes of :func:`plan_notes` (and log the order of a file's sections at INFO: it is cosmetic)."""
    from curation.schema import DOC_COLUMNS
    from pipelines.kit.stage import column_problems
    from pipelines.recipe import stage_config
    from pipelines.stages import load_stage

    stages = {name: (loader or load_stage)(name) for name in names}
    cfgs = {name: stage_config(recipe, name, stage.config_cls) for name, stage in stages.items()}
    if names and getattr(stages[names[0]], "reads_raw", False):  # ingest writes the document schema
        problems = column_problems(((stages[n], cfgs[n]) for n in names), set(DOC_COLUMNS))
        if problems:
            raise ConfigError("; ".join(problems))
    notes = plan_notes(recipe, stages, cfgs) if warn else []
    for note in notes:
        log.warning("%s", note)
    for line in order_notes(recipe.get("recipe_path")) if warn and len(names) > 1 else []:
        log.info("%s", line)
    return notes


def plan_notes(recipe: dict[str, Any], stages: dict[str, Any], cfgs: dict[str, Any]) -> list[str]:
    """The warnings of a plan (stage name → stage object and config, in run order)."""
    notes = [note for name, cfg in cfgs.items() for note in (getattr(stages[name], "config_notes", None) or _none)(cfg)]
    if "edu_score" in cfgs and "mixture" in cfgs:
        notes += band_notes(cfgs["edu_score"].band_names, cfgs["mixture"])
    if "web_quality" in cfgs:
        notes += embed_batch_notes(cfgs["web_quality"])
    if "mixture" in cfgs:
        notes += unmixed_notes(recipe, cfgs["mixture"])
    return notes


def embed_batch_notes(cfg: Any) -> list[str]:
    """``web_quality.embed_batch_size`` of the user's (changed from its default) while no scorer of
    ``scorers`` reads vectors: only an embedding scorer embeds the pages semdedup did not."""
    if cfg.embed_batch_size == type(cfg).embed_batch_size:
        return []
    for name in cfg.scorers:
        try:
            if "vectors" in cfg.scorer(name).needs:
                return []
        except (ValueError, OSError, ImportError):  # a bad scorer option: the stage's preflight says what to change
            return []
    return [f"web_quality.embed_batch_size = {cfg.embed_batch_size} does nothing: no scorer of web_quality.scorers "
            f"{list(cfg.scorers)} reads embeddings; it applies to an embedding scorer (scorer_options: "
            "{name: {kind: embedding, model: PATH}}), or leave it out"]


def _none(_cfg: Any) -> list[str]:
    return []


def band_notes(band_names: Any, mixture: Any) -> list[str]:
    """The mixture's ``web_edu_bands`` and its ``repeat``/``max_epochs`` groups of edu bands
    (``web_edu/<band>``, ``math_science/<band>``, ``papers/<band>``) that name no band of
    ``edu_score.band_names``: no document ever forms them.

    >>> from pipelines.stages.mixture import MixtureConfig
    >>> band_notes(["low", "medium", "high"], MixtureConfig())
    []
    >>> band_notes(["a", "b", "c"], MixtureConfig(repeat={"*": 1.0}))[0][:70]
    "mixture.web_edu_bands ['high'] names no band of edu_score.band_names ["
    """
    from curation.mixture.policy import SUB_COLUMN

    bands = {_SAFE.sub("_", str(b)) for b in band_names}
    kinds = {kind for kind, column in SUB_COLUMN.items() if column == "edu_band"}
    notes = []
    unknown = [b for b in mixture.web_edu_bands if _SAFE.sub("_", str(b)) not in bands]
    if unknown:
        notes.append(f"mixture.web_edu_bands {list(mixture.web_edu_bands)} names no band of edu_score.band_names "
                     f"{list(band_names)} ({', '.join(unknown)}): no web page goes to web_edu by it")
    for table, values in (("repeat", mixture.policy().repeat), ("max_epochs", mixture.max_epochs)):
        groups = [str(g) for g in values if _band_group(str(g), kinds) and str(g).split("/", 1)[1] not in bands | {"all"}]
        if groups:
            notes.append(f"mixture.{table} has {', '.join(groups)}: no band of edu_score.band_names {list(band_names)} "
                         f"is named so, so these groups never form and their documents take the {table} of the pattern "
                         "that matches them ('*')")
    return notes


def _band_group(group: str, kinds: set[str]) -> bool:
    kind, slash, sub = group.partition("/")
    return bool(slash) and kind in kinds and not any(c in sub for c in "*?[")


def order_notes(recipe_path: str | None) -> list[str]:
    """A recipe file whose stage sections stand in another order than the run's: the order of a run
    is :data:`pipelines.stages.STAGES` (a section's place in the file changes nothing)."""
    from pipelines.recipe_schema import default_recipe_path, read_yaml
    from pipelines.stages import STAGES

    if not recipe_path or Path(recipe_path).resolve() == default_recipe_path().resolve():
        return []
    sections = (read_yaml(Path(recipe_path)) or {}).get("stages")
    written = [name for name in sections if name in STAGES] if isinstance(sections, dict) else []
    ordered = sorted(written, key=list(STAGES).index)
    if written == ordered:
        return []
    return [f"the stages: section of {recipe_path} lists {', '.join(written)}; stages run in the order of pipelines.stages.STAGES "
            f"({', '.join(ordered)}), whatever the order of their sections in the file"]
