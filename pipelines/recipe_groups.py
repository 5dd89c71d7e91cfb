"""The group names of the mixture's tables (``mixture.repeat``, ``mixture.max_epochs``), checked
against the groups the recipe can produce, before anything runs.

A group is ``<kind>/<name>``: a web level (``web_quality.levels``), an edu band
(``edu_score.band_names``), a code tier, ``all`` (a kind no stage grades) or a group the mixture
builds itself. Where the run starts from raw input (``curate run``, ingest first) the recipe's own
stages make every name, so a name none of them makes is a typo (``web/hgh``): an error naming the
nearest. A single ``curate mixture`` reads data another recipe may have graded: there the stage
warns at its end, naming the groups the data has (:func:`curation.mixture.checks.check_values`).
"""

from __future__ import annotations

from typing import Any

from curation.config import ConfigError
from curation.errors import nearest

#: The table keys that name groups; their glob patterns (``code_web/*``, ``*``) are not checked.
GROUP_TABLES = ("repeat", "max_epochs")


def group_names(recipe: dict[str, Any], loader: Any) -> set[str]:
    """Every ``<name>`` part a group of this recipe can have (of any kind: a union is enough for a typo)."""
    # imported here: the mixture's group module brings pandas, which `curate`'s own module leaves to the
    # code that uses it (a spawned worker imports the driver's __main__)
    from curation.mixture.groups import LONG_GROUP, REPO_GROUP, THREADS_GROUP, UNPLACED_GROUP
    from curation.quality.code_tiers import TIERS
    from pipelines.recipe import stage_config

    def cfg(stage: str) -> Any:
        return stage_config(recipe, stage, loader(stage).config_cls)

    names = {"all", *TIERS, *(g.split("/", 1)[1] for g in (REPO_GROUP, UNPLACED_GROUP, THREADS_GROUP, LONG_GROUP))}
    # a stage of another make (a test's or a user's own, under the same name) may lack the table
    return names | set(getattr(cfg("web_quality"), "levels", ())) | set(getattr(cfg("edu_score"), "band_names", ()))


def check_mixture_groups(recipe: dict[str, Any], names: list[str], loader: Any) -> None:
    """Refuse a group in ``mixture.repeat`` or ``mixture.max_epochs`` that the run's stages cannot make
    (only for a run from raw input: ``ingest`` and ``mixture`` both in ``names``)."""
    if not {"ingest", "mixture"} <= set(names):
        return
    from pipelines.recipe import stage_config

    mixture = stage_config(recipe, "mixture", loader("mixture").config_cls)
    written = (recipe.get("stages") or {}).get("mixture") or {}
    known = group_names(recipe, loader)
    for table in GROUP_TABLES:
        groups = getattr(mixture, table, None)  # a mixture stage of another make may have no such table
        # only the groups the recipe itself writes: a default group of levels or bands the recipe
        # redefined (web/medium_high beside three levels of its own) matches no document, and is no typo
        mine = written.get(table) if isinstance(written.get(table), dict) else {}
        for group in (g for g in mine if g in groups) if isinstance(groups, dict) else ():
            kind, _, name = str(group).partition("/")
            if not name or any(c in name for c in "*?[") or name in known:
                continue
            near = nearest(name, known, cutoff=0.5)
            raise ConfigError(
                f"mixture.{table} has group {group!r}, which no stage of this recipe makes"
                + (f"; did you mean {kind}/{near}?" if near else "")
                + f" (a group is <kind>/<name>; this recipe's names: {', '.join(sorted(known))}; "
                f"`{table}: {{{group}: null}}` removes it)")
