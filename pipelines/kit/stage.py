"""How the runner resolves what a stage declares: the columns it needs, the stages its input went
through (the artifacts of those it reuses, the lineage a manifest cites), and the columns it promised.

A stage is a module-level ``STAGE`` object; its declarations (``name``, ``version``,
``config_cls``, ``requires``, ``produces``, ``requires_artifacts``, ``settings``, ``global_keys``)
and ``build(docs, config, ctx)`` are documented on :class:`pipelines.kit.shapes.StageShape`, the
base of the row and group shapes most stages are written with. Ingest is the one stage with
``reads_raw = True``: its ``build`` receives the raw input specs instead of a dataframe; the
runner fingerprints its ``input_files`` (found, not read) to decide whether it is up to date, and
calls its ``plan_inputs`` only when it runs. ``docs/adding-a-stage.md`` walks through writing one.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from curation.config import ConfigError
from curation.ingest.inputs import InputError
from pipelines.kit.contract import stage_fault

#: The columns the runner itself reads in every stage's input, whatever the stage declares: its
#: writer puts them in each ledger row and counts documents and tokens by source with them.
RUNNER_REQUIRES = ("doc_id", "source", "n_tokens")


def required_columns(stage: Any) -> list[str]:
    """The columns a stage's input must hold: its ``requires`` and the runner's own (none for ingest)."""
    if getattr(stage, "reads_raw", False):
        return []
    return list(dict.fromkeys((*stage.requires, *RUNNER_REQUIRES)))


def config_columns(stage: Any, cfg: Any) -> dict[str, str]:
    """The columns a stage reads because of its settings (``keep: highest:<column>``): column → the
    setting that reads it, from the stage's ``config_requires`` (none without a config)."""
    read = getattr(stage, "config_requires", None)
    return dict(read(cfg)) if read is not None and cfg is not None else {}


def check_requires(stage: Any, input_dir: Path, columns: Iterable[str], cfg: Any = None) -> None:
    """Refuse an input without a column the stage or the runner reads, or one a setting of ``cfg``
    reads, before anything is computed or written (the writer met a missing ``n_tokens`` only after
    the stage's work, as a crash)."""
    columns = list(columns)
    missing = [c for c in required_columns(stage) if c not in columns]
    if missing:
        made = "; ".join(f"{c}: {', '.join(by)}" for c in missing if (by := _producers(c)))
        raise InputError(
            f"stage {stage.name} requires columns {missing} that {input_dir} does not have; "
            f"run the stages that produce them first ({made + '; ' if made else ''}columns present: {columns})"
        )
    for column, setting in config_columns(stage, cfg).items():
        if column not in columns:
            raise ConfigError(f"{stage.name}.{setting} needs column {column!r}, which {input_dir} does not have "
                              f"(columns present: {columns})")


def column_problems(plan: Iterable[tuple[Any, Any]], columns: set[str] | None) -> list[str]:
    """What each (stage, config) of a plan in run order lacks, with ``columns`` before its first
    stage (None: unknown, nothing checked): the columns it requires and those its settings read,
    against the input's and the earlier stages' columns (``produces`` and :data:`PER_ENTRY_COLUMNS`)."""
    plan = list(plan)
    cfgs = {stage.name: cfg for stage, cfg in plan}
    problems: list[str] = []
    for i, (stage, cfg) in enumerate(plan):
        if columns is None:
            return problems
        missing = [c for c in required_columns(stage) if c not in columns]
        if missing:
            problems.append(f"stage {stage.name} requires columns {missing} that no earlier stage or input provides")
        later = [s.name for s, _ in plan[i + 1:]]
        problems += [f"{stage.name}.{setting} needs column {column!r}, which no earlier stage or the input provides "
                     f"({_made_where(stage.name, _producers(column, cfgs), later)})"
                     for column, setting in config_columns(stage, cfg).items() if column not in columns]
        columns = columns | set(getattr(stage, "produces", None) or {}) | _per_entry(stage.name, cfg)
    return problems


#: Columns a stage adds per entry of a list in its config, beyond its ``produces``: stage → (column
#: prefix, config key); web_quality writes ``quality_score_<scorer>`` for each of its ``scorers``.
PER_ENTRY_COLUMNS = {"web_quality": ("quality_score_", "scorers")}


def _per_entry(name: str, cfg: Any) -> set[str]:
    prefix, key = PER_ENTRY_COLUMNS.get(name, ("", ""))
    return {f"{prefix}{entry}" for entry in getattr(cfg, key, None) or ()} if prefix else set()


def _made_where(name: str, by: list[str], later: list[str]) -> str:
    """Where the stages ``by`` that make a column stand against stage ``name`` (``later``: the plan's stages after it)."""
    if not by:
        return "no stage produces it"
    after = [n for n in by if n in later]
    makes, runs = ("make", "run") if len(after or by) > 1 else ("makes", "runs")
    where = f"{', '.join(after)} {makes} it, but {runs} after {name}" if after else f"{', '.join(by)} {makes} it, not in this plan"
    return f"no stage before {name} produces it; {where}"


def _producers(column: str, cfgs: dict[str, Any] | None = None) -> list[str]:
    """The stages that make ``column`` (with the plan's configs ``cfgs``, else their defaults, for :data:`PER_ENTRY_COLUMNS`)."""
    from curation.schema import DOC_COLUMNS
    from pipelines.stages import STAGES, load_stage

    if column in DOC_COLUMNS:
        return ["ingest"]
    out = []
    for n in STAGES:
        stage, prefix = load_stage(n), PER_ENTRY_COLUMNS.get(n, ("",))[0]
        if n != "ingest" and column in (getattr(stage, "produces", None) or {}):
            out.append(n)
        elif prefix and column.startswith(prefix):
            cfg = (cfgs or {}).get(n) or stage.config_cls()
            out += [n] if column in _per_entry(n, cfg) else []
    return out


def upstream_chain(input_dir: Path | None) -> list[Path]:
    """The finished stage folders ``input_dir`` was made through, in run order, ending with itself:
    from its marker, the folder whose output fingerprint is its input fingerprint, and so on back to
    ingest (as ``curate verify`` links them). That folder is looked for beside it, else where its
    marker says its input was. A finished folder beside it that no link leads to is not on the chain:
    a mixture of ``RUN/00_ingest`` went through no dedup, whatever else ``RUN`` holds. Empty for a
    folder no stage wrote."""
    from pipelines.marker import read_marker

    if input_dir is None:
        return []
    folder = Path(input_dir).resolve()
    if folder.name == "docs" and read_marker(folder.parent) is not None:
        folder = folder.parent  # RUN/NN_stage/docs: its stage's folder
    markers: dict[Path, dict[str, Any]] = {}
    try:
        siblings = sorted(p for p in folder.parent.iterdir() if p.is_dir() and not p.name.startswith("."))
    except OSError:  # a folder that cannot be listed: the chain goes on through recorded inputs alone
        siblings = []
    for sibling in siblings:
        marker = read_marker(sibling)
        if marker is not None:
            markers[sibling] = marker
    chain: list[Path] = []
    while folder is not None and folder not in chain:
        marker = markers.get(folder) or read_marker(folder)
        if marker is None or _stage_of(folder, marker) is None:  # no stage's output, or none it can name
            break
        chain.append(folder)
        folder = _made_from(folder, marker, markers)
    return chain[::-1]


def run_chain(name: str, run_dir: Path) -> list[Path]:
    """In a run, the finished folders of the stages before ``name``: ``curate run`` makes each stage
    from the one before and removes the folders of stages it does not run, so they are its chain."""
    from pipelines.marker import MARKER
    from pipelines.stages import STAGES, folder_name

    order = list(STAGES)
    return [Path(run_dir) / folder_name(n) for n in order[:order.index(name)] if (Path(run_dir) / folder_name(n) / MARKER).exists()]


def _made_from(folder: Path, marker: dict[str, Any], siblings: dict[Path, dict[str, Any]]) -> Path | None:
    """The folder whose output ``folder`` was made from: beside it (the stage's own numbered folder
    first where several hold the same output), else the ``input`` its marker recorded; None for ingest."""
    from pipelines.marker import read_marker
    from pipelines.stages import STAGES, folder_name

    wanted = marker.get("input_fingerprint")
    if not wanted:
        return None
    found = [f for f, m in siblings.items() if f != folder and m.get("output_fingerprint") == wanted]
    if found:
        own = {f for f in found if _stage_of(f, siblings[f]) in STAGES and f.name == folder_name(str(_stage_of(f, siblings[f])))}
        return min(found, key=lambda f: (f not in own, f.name))
    recorded = marker.get("input")
    if isinstance(recorded, str) and recorded:
        path = Path(recorded)
        if path != folder and (read_marker(path) or {}).get("output_fingerprint") == wanted:
            return path
    return None


def chain_stages(chain: Sequence[Path]) -> list[str | None]:
    """The stage each folder of an :func:`upstream_chain` holds the output of, in its order."""
    from pipelines.marker import read_marker

    return [_stage_of(f, read_marker(f) or {}) for f in chain]


def _stage_of(folder: Path, marker: dict[str, Any]) -> str | None:
    """The stage its marker names, else the one its folder is named after (``30_semdedup``)."""
    from pipelines.stages import STAGES, folder_name

    stage = marker.get("stage")
    return stage if isinstance(stage, str) else next((n for n in STAGES if folder.name == folder_name(n)), None)


def _folders(stage_name: str, upstream: Path | Sequence[Path] | None) -> list[Path]:
    """``upstream``: a run folder (:func:`run_chain`), the chain of an input (:func:`upstream_chain`) or None."""
    if upstream is None:
        return []
    return run_chain(stage_name, upstream) if isinstance(upstream, Path) else list(upstream)


def resolve_artifacts(stage: Any, upstream: Path | Sequence[Path] | None) -> dict[str, Path | None]:
    """``stage.requires_artifacts`` → the artifact folders of the stages its input went through (a run
    folder, or the input's :func:`upstream_chain`): a stage reuses only vectors or HTML made for the
    documents it reads, never those of a folder beside its input that did not produce it."""
    from pipelines.stages import STAGES

    chain = _folders(stage.name, upstream)
    made_by = dict(zip(chain_stages(chain), chain, strict=True))  # the latest folder of each stage
    out: dict[str, Path | None] = {}
    for key, (upstream, artifact) in getattr(stage, "requires_artifacts", {}).items():
        if upstream not in STAGES:
            raise KeyError(f"stage {stage.name} requires an artifact of unknown stage {upstream!r}")
        path = made_by[upstream] / "artifacts" / artifact if upstream in made_by else None
        out[key] = path if path is not None and path.exists() else None
    return out


def resolve_lineage(stage_name: str, upstream: Path | Sequence[Path] | None) -> list[dict[str, Any]]:
    """The stages the input of ``stage_name`` went through (a run folder, or the input's
    :func:`upstream_chain`), in run order: folder, version, config hash, output fingerprint and config
    (from each one's ``_SUCCESS`` and ``stats.json``). A manifest cites them; a folder no stage wrote has none."""
    from pipelines.marker import read_marker

    out: list[dict[str, Any]] = []
    for folder in _folders(stage_name, upstream):
        marker = read_marker(folder) or {}
        try:
            stats = json.loads((folder / "stats.json").read_text())
        except (OSError, ValueError):
            stats = {}
        out.append({
            "stage": _stage_of(folder, marker), "folder": folder.name, "version": marker.get("version"),
            "config_hash": marker.get("config_hash"), "output_fingerprint": marker.get("output_fingerprint"),
            "config": stats.get("config") if isinstance(stats, dict) else None,
            **({"incomplete": str(marker["incomplete"])} if marker.get("incomplete") else {}),  # requests without an answer
        })
    return out


def skipped_warning(name: str, recipe: dict[str, Any], input_dir: Path, chain: Sequence[Path]) -> str | None:
    """The warning for a stage fed a folder that skipped some of the recipe's enabled stages before
    it (none of theirs is on its input's chain): it runs (you iterate), but says which and what that
    means; None when the input went through all of them."""
    from pipelines.stages import STAGES, enabled_stages

    order = list(STAGES)
    before = [n for n in enabled_stages(recipe) if order.index(n) < order.index(name)]
    stages = chain_stages(chain)
    skipped = [n for n in before if n not in stages]
    if not skipped:
        return None
    if chain and stages[0] != "ingest":  # the folder its first link was made from is not found
        return (
            f"{name}: the chain of stage folders its input {input_dir} was made from stops at {chain[0]} (the folder "
            f"{stages[0]} read is gone, moved or replaced since), so its lineage cites {', '.join(str(s) for s in stages)} "
            f"alone, and whether it went through {', '.join(skipped)} is not known here; re-run those stages in order if they changed"
        )
    return (
        f"{name}: its input {input_dir} has not been through {', '.join(skipped)} (stages the recipe runs before "
        f"{name}; none of their folders is on the chain its input was made from): what they remove stays in and what "
        f"they score is missing; for the recipe's result, give the folder of {before[-1]} made from them as --input"
    )


def check_produces(stage: Any, columns: Any) -> None:
    """Raise if the graph a stage built lacks a column it declares in ``produces``."""
    missing = [c for c in stage.produces if c not in columns]
    if missing:
        raise stage_fault(stage, f"stage {stage.name} declares it produces {missing} but its output has no such column: "
                          "return them from build, or leave them out of produces")
