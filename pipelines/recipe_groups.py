"""The group names of the mixture's tables (``mixture.repeat``, ``mixture.max_epochs``), checked
against the groups the recipe can produce, before anything runs.

A group is ``<kind>/<name>``, and each kind has its own names (:data:`curation.mixture.policy.SUB_COLUMN`):
web pages a web level (``web_quality.levels``); ``web_edu``, ``math_science`` and ``papers`` an edu
band (``edu_score.band_names``); ``code`` and ``code_web`` a code tier; every kind ``all`` (a document
no stage graded); and the groups the mixture builds itself (``code/repo_level`` …). Where the run
starts from raw input (``curate run``, ingest first) the recipe's own stages make every group, so a
name its kind never takes is a mistake (``web/hgh``, ``social/high``): an error naming the kind's
groups. A single ``curate mixture`` reads data another recipe may have graded: there the stage warns before
any work and in its manifests, naming the groups the data has (:mod:`pipelines.stages.mixture_input`,
:func:`curation.mixture.checks.unknown_groups`).

A repeat factor for a kind that no phase mixes gives its documents no place in any shard (the
mixture ledgers them ``no_phase``): :func:`unmixed_notes` says so before the run, as a warning.
"""

from __future__ import annotations

import fnmatch
from typing import Any

from curation.config import ConfigError
from curation.errors import nearest
from curation.mixture.phases import DEFAULT_REPEATS

#: The table keys that name groups; their glob patterns (``code_web/*``, ``*``) are not checked.
GROUP_TABLES = ("repeat", "max_epochs")
_GLOB = "*?["


def kind_names(recipe: dict[str, Any], loader: Any) -> dict[str, set[str]]:
    """Every kind of this recipe's groups → the ``<name>`` parts its groups can have."""
    # imported here: the mixture's modules bring pandas, which `curate`'s own module leaves to the
    # code that uses it (a spawned worker imports the driver's __main__)
    from curation.mixture.groups import LONG_GROUP, REPO_GROUP, THREADS_GROUP, UNPLACED_GROUP
    from curation.mixture.policy import _SAFE, SUB_COLUMN
    from curation.quality.code_tiers import TIERS
    from curation.schema import SOURCES
    from pipelines.recipe import stage_config

    def cfg(stage: str) -> Any:
        return stage_config(recipe, stage, loader(stage).config_cls)

    # the values each grading column takes; a stage of another make (a test's or a user's own, under
    # the same name) may lack the table
    # bands: also the default ones, whose groups (web_edu/medium beside band_names [low, mid, high])
    # plan_checks.band_notes says as never forming, a warning
    bands = [*getattr(cfg("edu_score"), "band_names", ()), *getattr(loader("edu_score").config_cls(), "band_names", ())]
    columns = {"quality_level": getattr(cfg("web_quality"), "levels", ()), "edu_band": bands, "code_tier": TIERS}
    names: dict[str, set[str]] = {_SAFE.sub("_", kind): {"all"} for kind in (*SOURCES, "web_edu")}
    for kind, column in SUB_COLUMN.items():
        names.setdefault(kind, {"all"}).update(_SAFE.sub("_", str(n)) for n in columns.get(column, ()))
    for group in (REPO_GROUP, UNPLACED_GROUP, THREADS_GROUP, LONG_GROUP):
        kind, _, name = group.partition("/")
        names.setdefault(kind, {"all"}).add(name)
    return names


def written_groups(recipe: dict[str, Any], table: str, groups: Any) -> list[str]:
    """The groups of ``mixture.<table>`` that the recipe itself writes (file or override), of the
    merged table ``groups``: a default group of levels or bands the recipe redefined
    (web/medium_high beside three levels of its own) matches no document, and is no mistake of the recipe's."""
    written = (recipe.get("stages") or {}).get("mixture") or {}
    mine = written.get(table) if isinstance(written.get(table), dict) else {}
    return [str(g) for g in mine if g in groups] if isinstance(groups, dict) else []


def check_mixture_groups(recipe: dict[str, Any], names: list[str], loader: Any) -> None:
    """Refuse a group in ``mixture.repeat`` or ``mixture.max_epochs`` that the run's stages cannot make
    (only for a run from raw input: ``ingest`` and ``mixture`` both in ``names``)."""
    if not {"ingest", "mixture"} <= set(names):
        return
    from pipelines.recipe import stage_config

    mixture = stage_config(recipe, "mixture", loader("mixture").config_cls)
    known = kind_names(recipe, loader)
    for table in GROUP_TABLES:
        # a mixture stage of another make may have no such table
        for group in written_groups(recipe, table, getattr(mixture, table, None)):
            kind, _, name = group.partition("/")
            kinds = [k for k in known if fnmatch.fnmatchcase(k, kind)]
            if not name or any(c in name for c in _GLOB) or not kinds:  # an unknown kind: the mixture's config says it
                continue
            allowed = set().union(*(known[k] for k in kinds))
            if name in allowed:
                continue
            near = nearest(name, allowed, cutoff=0.5)
            others = sorted(k for k, n in known.items() if name in n)
            formed = ", ".join(f"{k}/{n}" for k in kinds for n in sorted(known[k]))
            raise ConfigError(
                f"mixture.{table} has group {group!r}, which no stage of this recipe makes"
                + (f"; did you mean {kind}/{near}?" if near else "")
                + (f"; the groups named {name} are {', '.join(f'{k}/{name}' for k in others)}" if others else "")
                + f" (a group is <kind>/<name>; {kind} documents form {formed}; "
                f"`{table}: {{{group}: null}}` removes it)"
            )


def unmixed_notes(recipe: dict[str, Any], mixture: Any) -> list[str]:
    """A warning per group the recipe writes in ``mixture.repeat`` with a factor above 0 whose kind no
    phase mixes (no ``mixture.phases.<phase>.mix.<kind>`` above 0): its documents enter no shard, and
    the mixture ledgers them ``no_phase``; and one per such group whose kind is in ``mixture.web_sources``
    (those documents are web pages: their groups are the web's)."""
    specs = getattr(mixture, "phase_specs", None)
    if specs is None:  # a mixture stage of another make
        return []
    mixed = {kind for spec in specs() for kind, share in spec.mix.items() if share > 0}
    repeat = getattr(mixture, "repeat", None)
    as_web = set(getattr(mixture, "web_sources", ())) - {"web"}  # their documents are web pages: web/<level>, never <kind>/…
    notes = []
    for group in written_groups(recipe, "repeat", repeat):
        kind = group.partition("/")[0]
        if "/" in group and kind in as_web and float(repeat[group]) > 0:
            notes.append(f"mixture.repeat {group}: {kind} is in mixture.web_sources, so its documents are web pages and form "
                         f"web/<level> groups (or code_web/… and web_edu/…); {group} never forms: give the repeat to those "
                         f"groups, or take {kind} out of web_sources")
            continue
        if "/" not in group or any(c in kind for c in _GLOB) or kind in mixed or float(repeat[group]) <= 0:
            continue
        if DEFAULT_REPEATS.get(group) == float(repeat[group]):  # the shipped factor, not one the user chose
            continue
        notes.append(
            f"mixture.repeat {group}: no phase mixes kind {kind}, so its documents enter no shard (the mixture "
            f"ledgers them no_phase); add mixture.phases.<phase>.mix.{kind} (a share above 0) to a phase, "
            f"or leave the group out"
        )
    return notes
